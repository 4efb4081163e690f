"""KataGo's input planes ("katago", "katago_noladders"): every plane on hand-made positions,
the global features' values, the 8 symmetries, and the network's global input."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import go, nets
from agz_jax.alphago import katago

from test_features import _policy_perm
from test_features_alphago import LADDER, _with as with_stone

CFG9 = go.GoConfig(size=9, komi=7.5, history=8)


@functools.cache
def _encoder(cfg, encoding):
  return jax.jit(lambda s: go.features(cfg, s, encoding))


def planes_of(cfg, state, encoding="katago"):
  """[P, 30] numpy planes of one game."""
  x = _encoder(cfg, encoding)(jax.tree.map(lambda a: jnp.asarray(a)[None], state))
  return np.asarray(x[0]).reshape(cfg.num_points, -1)


def position(cfg, text, to_play):
  size, black, white = go.parse_board(text)
  assert size == cfg.size
  return go.init(cfg, black=black, white=white, to_play=to_play)


def points(cfg, *vertices):
  return sorted(go.gtp_to_action(cfg, v) for v in vertices)


def marked(planes, k):
  return sorted(np.flatnonzero(planes[:, k]).tolist())


def test_stones_liberties_last_moves_and_passes():
  moves = ["E5", "E6", "D6", "pass", "F6", "E7"]  # white passed 3 plies before black's move
  state = go.play(CFG9, [go.gtp_to_action(CFG9, v) for v in moves])
  x = planes_of(CFG9, state)
  assert x.shape == (81, 30)
  assert np.all(x[:, 0] == 1)
  assert marked(x, 1) == points(CFG9, "E5", "D6", "F6")      # X: black to move
  assert marked(x, 2) == points(CFG9, "E6", "E7")
  # Every chain here has three liberties (the white pair: D7 F7 E8).
  assert marked(x, 3) == marked(x, 4) == []
  assert marked(x, 5) == points(CFG9, "E5", "D6", "F6", "E6", "E7")
  # Moves 1..5 plies ago: W E7, B F6, W pass (no mark), B D6, W E6.
  assert [marked(x, k) for k in range(9, 14)] == [
      points(CFG9, "E7"), points(CFG9, "F6"), [], points(CFG9, "D6"), points(CFG9, "E6")]
  assert np.all(x[:, [6, 7, 8, 20, 21]] == 0)
  globals_ = x[0, 22:]
  np.testing.assert_allclose(globals_, x[40, 22:])   # the same on every point
  np.testing.assert_allclose(globals_[:5], [0, 0, 1, 0, 0])
  # Komi 7.5 from black's view, / 20; the last move was no pass; 81 points: odd komis draw,
  # -7.5 is 1.5 above -9: -0.5.
  np.testing.assert_allclose(globals_[5:], [-0.375, 0, -0.5])
  # Before the game's first move there is nothing to mark, and a pass now would end the game.
  x = planes_of(CFG9, go.play(CFG9, [CFG9.pass_action]))
  assert np.all(x[:, 9:14] == 0)
  np.testing.assert_allclose(x[0, 22:], [1, 0, 0, 0, 0, 0.375, 1, 0.5])


def test_liberties_of_one_two_and_three():
  size, black, white = go.parse_board("""
      . X O . .
      X O O . .
      . X . . .
      . . . X X
      . . . X .
  """)
  cfg = go.GoConfig(size=size, komi=0.5, history=8)
  x = planes_of(cfg, go.init(cfg, black=black, white=white, to_play=go.WHITE))
  # White's three stones: liberties D5, C3 (D4 too): three; the black B5 stone: A5 only.
  assert marked(x, 3) == points(cfg, "B5")
  assert marked(x, 4) == points(cfg, "A4")                   # A5, A3
  assert set(points(cfg, "C5", "B4", "C4")) <= set(marked(x, 5))


def test_the_ko_plane_marks_what_superko_bans_alone():
  # Black takes white's C3 at D3, a ko: white may not retake at once at C3 (the position
  # would repeat).
  size, black, white = go.parse_board("""
      . . . . .
      . . X O .
      . X O . O
      . . X O .
      . . . . .
  """)
  cfg = go.GoConfig(size=size, komi=0.5, history=8)
  state = go.init(cfg, black=black, white=white, to_play=go.BLACK)
  state = go.play(cfg, [go.gtp_to_action(cfg, "D3")], state)  # takes C3
  x = planes_of(cfg, state)
  assert marked(x, 6) == points(cfg, "C3")
  legal = np.asarray(go.legal_actions(cfg, state))
  assert not legal[go.gtp_to_action(cfg, "C3")]


def test_area_planes_count_pass_alive_territory_with_its_dead_stones():
  size, black, white = go.parse_board("""
      . X . X O .
      X X X X O .
      . O . X O .
      X X X X O .
      O O O O O .
      . . . . . .
  """)
  cfg = go.GoConfig(size=size, komi=0.5, history=8)
  x = planes_of(cfg, go.init(cfg, black=black, white=white, to_play=go.BLACK),
                "katago_noladders")
  area = x[:, 18].astype(int) - x[:, 19].astype(int)          # black is X
  grid = area.reshape(size, size)
  # Black's group has eyes A6, C6 and the A4-C4 region, which holds a dead white stone at
  # B4: all black's (Tromp-Taylor alone would give B4 to white and A4, C4 to nobody).
  assert np.all(grid[:4, :4] == 1)
  # White's wall is not pass-alive: Tromp-Taylor gives white its stones and the empty
  # points reaching only white.
  assert grid[4, 0] == -1 and grid[5, 5] == -1 and grid[0, 5] == -1


@pytest.mark.parametrize("komi, points, want", [
    (7.5, 361, 0.5), (7.0, 361, 0.0), (6.5, 361, -0.5), (0.0, 361, 0.0), (-7.5, 361, -0.5),
    (0.0, 16, 0.0), (0.5, 16, 0.5), (1.0, 16, 0.0), (1.5, 16, -0.5), (7.25, 81, 0.25)])
def test_komi_wave(komi, points, want):
  assert float(katago.komi_wave(jnp.float32(komi), points)) == pytest.approx(want)


def test_komi_feature_is_clipped_to_the_board():
  cfg = go.GoConfig(size=5, komi=100.0, history=8)
  x = planes_of(cfg, go.init(cfg, to_play=go.WHITE), "katago_noladders")
  assert x[0, 27] == pytest.approx((25 + 20) / 20)


@pytest.mark.parametrize("to_play", [go.BLACK, go.WHITE])
def test_ladder_planes(to_play):
  # The classic ladder: white D5 (two liberties) is caught by black's atari at E5 or D4.
  board = LADDER
  cfg = go.GoConfig(size=9, komi=7.5, history=8)
  state = position(cfg, board, to_play)
  x = planes_of(cfg, state)
  d5 = go.gtp_to_action(cfg, "D5")
  assert marked(x, 14) == [d5]                     # whoever is to move
  assert marked(x, 17) == (points(cfg, "E5", "D4") if to_play == go.BLACK else [])
  # A white stone at B4 breaks the ladder from E5 (the escape runs D4, C4, C3, ...).
  x = planes_of(cfg, position(cfg, with_stone(board, "B4", "O"), to_play))
  assert "E5" not in {go.action_to_gtp(cfg, a) for a in marked(x, 17)}
  # In atari after black E5, with white to move first: extending to D4 runs into a working
  # ladder, so D5 is laddered; with the breaker at B4 it escapes.
  caught = with_stone(board, "E5", "X")
  assert d5 in marked(planes_of(cfg, position(cfg, caught, to_play)), 14)
  x = planes_of(cfg, position(cfg, with_stone(caught, "B4", "O"), to_play))
  assert d5 not in marked(x, 14)
  # Planes 15 and 16 read the boards 1 and 2 plies ago: after two more moves far away the
  # ladder that was is still marked there.
  later = go.play(cfg, [go.gtp_to_action(cfg, "J1"), go.gtp_to_action(cfg, "J2")],
                  position(cfg, caught, go.BLACK))
  x = planes_of(cfg, later)
  assert d5 in marked(x, 16)
  # Without ladders, the four planes are empty and the rest is the same.
  light = planes_of(cfg, state, "katago_noladders")
  assert np.all(light[:, 14:18] == 0)
  np.testing.assert_array_equal(np.delete(light, range(14, 18), axis=1),
                                np.delete(planes_of(cfg, state), range(14, 18), axis=1))


def test_the_symmetries_commute_with_the_planes():
  rng = np.random.default_rng(0)
  state, actions = go.init(CFG9), []
  legal = jax.jit(functools.partial(go.legal_actions, CFG9))
  for move in range(30):
    options = np.flatnonzero(np.asarray(legal(state))[:-1])
    action = CFG9.pass_action if move in (7, 26) else int(rng.choice(options))
    actions.append(action)
    state = go.play(CFG9, [action], state)
  x = _encoder(CFG9, "katago")(jax.tree.map(lambda a: a[None], state))[0]
  for k in range(8):
    perm = _policy_perm(9, k)
    moved = go.play(CFG9, [int(perm[a]) for a in actions])
    y = _encoder(CFG9, "katago")(jax.tree.map(lambda a: a[None], moved))[0]
    np.testing.assert_array_equal(np.asarray(y), np.asarray(go.transform_planes(x, k)))


def test_the_network_reads_the_global_features_as_a_bias_per_channel():
  assert nets.GLOBAL_INPUTS["katago"] == katago.NUM_GLOBAL
  assert nets.GLOBAL_INPUTS["katago_noladders"] == katago.NUM_GLOBAL  # the same planes
  config = {"kind": "resnet", "blocks": 1, "channels": 8, "value_hidden": 8, "dtype": "float32",
            "encoding": "katago"}
  model = nets.make(config, num_actions=82)
  x = planes_of(CFG9, go.play(CFG9, [40, 41])).reshape(1, 9, 9, 30)
  variables = model.init(jax.random.PRNGKey(0), jnp.asarray(x))
  params = variables["params"]
  assert params["global_inputs"]["kernel"].shape == (katago.NUM_GLOBAL, 8)
  assert params["Conv_0"]["kernel"].shape == (3, 3, katago.NUM_SPATIAL, 8)
  logits, value = model.apply(variables, jnp.asarray(x))
  other = x.copy()
  other[..., 27] = -other[..., 27]       # the other side's komi
  logits2, value2 = model.apply(variables, jnp.asarray(other))
  assert not np.allclose(np.asarray(logits), np.asarray(logits2))
  without = nets.make(dict(config, encoding="katago_noladders"), num_actions=82)
  assert without.init(jax.random.PRNGKey(0), jnp.asarray(x))["params"]["global_inputs"][
      "kernel"].shape == (katago.NUM_GLOBAL, 8)
  # The other encodings are as they were: no global input.
  plain = nets.make(dict(config, encoding="agz17"), num_actions=82)
  assert "global_inputs" not in plain.init(jax.random.PRNGKey(0), jnp.zeros((1, 9, 9, 17)))["params"]
  del value, value2


def test_a_checkpoint_of_the_other_katago_encoding_is_refused_in_one_line(tmp_path):
  """katago and katago_noladders have one shape: the saved config names the planes the
  network learned, and a run of the other encoding refuses to resume from it."""
  from flax import struct  # pylint: disable=import-outside-toplevel
  import ml_collections  # pylint: disable=import-outside-toplevel
  from agz_jax import checkpoint  # pylint: disable=import-outside-toplevel

  @struct.dataclass
  class State:
    params: dict
    batch_stats: dict

  state = State(params={"w": jnp.arange(3.0)}, batch_stats={})
  config = ml_collections.ConfigDict({"model": {"encoding": "katago"}, "game": {"size": 9}})
  saver = checkpoint.Checkpointer(str(tmp_path), keep=1)
  saver.save(1, state, config)
  saver.close()
  abstract = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), state)
  same = checkpoint.Checkpointer(str(tmp_path), keep=1)
  restored, step = same.restore_latest(abstract, config)
  same.close()
  assert step == 1 and np.array_equal(restored.params["w"], np.arange(3.0))
  other = ml_collections.ConfigDict({"model": {"encoding": "katago_noladders"},
                                     "game": {"size": 9}})
  reader = checkpoint.Checkpointer(str(tmp_path), keep=1)
  with pytest.raises(checkpoint.CheckpointMismatch,
                     match=r"reads katago planes, this config katago_noladders.*new --workdir"):
    reader.restore_latest(abstract, other)
  reader.close()


def test_a_17_plane_network_carried_over_to_katagos_planes_computes_what_it_did(tmp_path):
  """init_from a network on AlphaGo Zero's planes into a run on KataGo's: on a position whose
  history planes repeat the current board, the carried network computes what the old one
  did, for either colour to play (exactly, where the colour plane's kernel is its centre tap;
  a constant bias per channel is only near at the edges for the rest)."""
  import helpers  # pylint: disable=import-outside-toplevel
  from configs import cpu_9x9  # pylint: disable=import-outside-toplevel
  from agz_jax.training import warm_start  # pylint: disable=import-outside-toplevel
  from agz_jax import checkpoint  # pylint: disable=import-outside-toplevel
  config = cpu_9x9.get_config()
  config.game.komi = 7.5
  config.model.update(blocks=1, channels=8, value_hidden=16)
  start = helpers.make_checkpoint(tmp_path / "agz17", config=config.copy_and_resolve_references())
  _, variables = checkpoint.load_network(start)
  saved = variables
  old = nets.make(config.model, num_actions=82)
  kernel = np.array(variables["params"]["Conv_0"]["kernel"])
  history = (kernel.shape[2] - 1) // 2
  centre = kernel[1, 1, 2 * history].copy()
  kernel[:, :, 2 * history] = 0.0
  kernel[1, 1, 2 * history] = centre
  variables = {**variables, "params": {**variables["params"], "Conv_0": {"kernel": kernel}}}
  katago_config = config.copy_and_resolve_references()
  katago_config.model.encoding = "katago_noladders"
  new = nets.make(katago_config.model, num_actions=82)
  like = new.init(jax.random.PRNGKey(1), jnp.zeros((1, 9, 9, katago.NUM_PLANES)))
  carried = warm_start.agz17_to_katago(variables, like, komi=7.5, points=81)
  assert jax.tree.map(np.shape, carried) == jax.tree.map(np.shape, like)
  for moves in ([40, 41, 30, 50, 31], [40, 41, 30, 50, 31, 32]):  # white, then black to play
    state = go.play(CFG9, moves)
    x = planes_of(CFG9, state, "katago_noladders").reshape(1, 9, 9, katago.NUM_PLANES)
    board, me = np.asarray(state.board), int(state.to_play)
    repeated = np.concatenate([np.repeat((board == me)[None], history, 0),
                               np.repeat((board == -me)[None], history, 0),
                               np.full((1, 81), float(me == go.BLACK))]).T.reshape(1, 9, 9, -1)
    want_logits, want_value = old.apply(variables, jnp.asarray(repeated, jnp.float32))
    logits, value = new.apply(carried, jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(logits), np.asarray(want_logits), atol=1e-4)
    np.testing.assert_allclose(np.asarray(value), np.asarray(want_value), atol=1e-5)
  # Through init_from: the run starts from the carried network, and says so.
  shapes = jax.tree.map(np.shape, like)
  loaded, words = warm_start.load_start(start, katago_config, like)
  assert words.endswith("on agz17 planes for 9x9, its first layer carried over to "
                        "katago_noladders planes") and jax.tree.map(np.shape, loaded) == shapes
  jax.tree.map(np.testing.assert_array_equal, loaded,
               warm_start.agz17_to_katago(saved, like, komi=7.5, points=81))
  katago_config.model.channels = 16
  wider = nets.make(katago_config.model, num_actions=82).init(
      jax.random.PRNGKey(1), jnp.zeros((1, 9, 9, katago.NUM_PLANES)))
  with pytest.raises(ValueError, match=r"^init_from: .* holds a 1x8 resnet on agz17 planes for "
                     r"9x9; this run trains a 1x16 resnet on katago_noladders planes"):
    warm_start.load_start(start, katago_config, wider)
