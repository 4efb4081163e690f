"""Dots and Boxes: hand-drawn scenarios, random games against a plain-Python reference and
against OpenSpiel (where it is installed), symmetries, and the search's discount."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import dots_and_boxes as db
from agz_jax import game, search
from tests import helpers
from tests.reference_dots import Reference

try:
  import pyspiel
except ImportError:  # OpenSpiel is a test extra; the reference stands in without it
  pyspiel = None

A, B = db.FIRST, db.SECOND


def play(cfg, lines, state=None):
  state = db.init(cfg) if state is None else state
  for line in lines:
    state = db.step(cfg, state, jnp.int32(line))
  return state


def h(cfg, r, c):
  return db.line_index(cfg, "h", r, c)


def v(cfg, r, c):
  return db.line_index(cfg, "v", r, c)


# -- hand-drawn scenarios -----------------------------------------------------------------------

def test_line_numbers_are_openspiel_s():
  cfg = db.DotsConfig(2, 3)
  assert cfg.num_lines == 17 and db.num_actions(cfg) == 17 and cfg.grid_shape == (5, 7)
  assert [db.line_name(cfg, i) for i in (0, 2, 3, 8, 9, 12, 16)] == [
      ("h", 0, 0), ("h", 0, 2), ("h", 1, 0), ("h", 2, 2), ("v", 0, 0), ("v", 0, 3), ("v", 1, 3)]
  np.testing.assert_array_equal(db.box_sides(cfg)[4], [h(cfg, 1, 1), h(cfg, 2, 1), v(cfg, 1, 1),
                                                       v(cfg, 1, 2)])
  assert db.text_to_action(cfg, "v(1, 3)") == 16 == db.text_to_action(cfg, "16")
  assert db.action_to_text(cfg, 12) == "v(0,3)"
  for bad, message in (("x(0,0)", "is not a line"), ("h(3,0)", "no line h"), ("17", "not on")):
    with pytest.raises(ValueError, match=message):
      db.text_to_action(cfg, bad)
  with pytest.raises(ValueError, match="rows .* from 1 to 10"):
    db.DotsConfig(0, 3)


def test_completing_a_box_scores_it_and_moves_again():
  cfg = db.DotsConfig(2, 2)
  # A, B, A draw three sides of the top-left box; B closes it and must move again.
  state = play(cfg, [h(cfg, 0, 0), v(cfg, 0, 0), h(cfg, 1, 0)])
  assert int(state.to_play) == B
  state = play(cfg, [v(cfg, 0, 1)], state)
  assert state.boxes.tolist() == [B, 0, 0, 0] and int(state.to_play) == B
  assert float(db.score(cfg, state)) == -1.0 and not bool(state.terminated)
  # B's next line completes nothing: the move passes to A.
  state = play(cfg, [h(cfg, 2, 1)], state)
  assert int(state.to_play) == A and int(state.move_count) == 5
  assert db.legal_actions(cfg, state).sum() == cfg.num_lines - 5
  assert db.to_ascii(cfg, state).splitlines() == [
      "+---+   +", "| B |    ", "+---+   +", "         ", "+   +---+", "A 0  B 1  (A to move)"]


def test_a_double_cross_takes_two_boxes_with_one_line():
  cfg = db.DotsConfig(1, 2)   # two boxes side by side, v(0,1) between them
  state = play(cfg, [h(cfg, 0, 0), h(cfg, 1, 0), v(cfg, 0, 0), h(cfg, 0, 1), h(cfg, 1, 1),
                     v(cfg, 0, 2)])
  assert state.boxes.tolist() == [0, 0] and int(state.to_play) == A
  state = play(cfg, [v(cfg, 0, 1)], state)
  assert state.boxes.tolist() == [A, A] and bool(state.terminated)
  assert float(db.result(cfg, state)) == 1.0 and float(db.result(cfg, state, False)) == 0.0
  assert db.legal_actions(cfg, state).sum() == 0
  # A finished game does not change.
  again = db.step(cfg, state, jnp.int32(0))
  assert jax.tree.all(jax.tree.map(lambda x, y: bool(jnp.all(x == y)), again, state))


def test_a_chain_given_away_is_taken_box_by_box():
  cfg = db.DotsConfig(1, 3)   # a row of three boxes
  # Every outer line but the left end is drawn (6 lines, alternating, nothing completed):
  # the three boxes form a chain.
  outer = [h(cfg, 0, 0), h(cfg, 1, 0), h(cfg, 0, 1), h(cfg, 1, 1), h(cfg, 0, 2), h(cfg, 1, 2)]
  state = play(cfg, outer + [v(cfg, 0, 3)])      # 7 lines: B drew the last, A to move
  assert int(state.to_play) == B and state.boxes.tolist() == [0, 0, 0]
  state = play(cfg, [v(cfg, 0, 1)], state)        # B opens the chain in the middle: A's turn
  assert int(state.to_play) == A
  # A takes the left box (v(0,0)) and moves again, then the other two with v(0,2).
  state = play(cfg, [v(cfg, 0, 0)], state)
  assert state.boxes.tolist() == [A, 0, 0] and int(state.to_play) == A
  state = play(cfg, [v(cfg, 0, 2)], state)
  assert state.boxes.tolist() == [A, A, A] and bool(state.terminated)
  assert float(db.result(cfg, state)) == 1.0
  own = db.ownership(cfg, state).reshape(cfg.grid_shape)
  np.testing.assert_array_equal(own[1, 1::2], [A, A, A])
  assert int(jnp.abs(own).sum()) == 3


def test_an_illegal_line_forfeits():
  cfg = db.DotsConfig(2, 2)
  state = play(cfg, [0, 5])                 # A: 0, B: 5; A to move
  for bad in (0, -1, cfg.num_lines):
    after = db.step(cfg, state, jnp.int32(bad))
    assert bool(after.terminated) and int(after.forfeit) == A
    assert float(db.result(cfg, after)) == -1.0   # A loses, whatever the boxes
    np.testing.assert_array_equal(after.lines, state.lines)


def test_a_draw_is_zero():
  cfg = db.DotsConfig(1, 2)
  # A closes the left box with the middle line and moves again; its next line gives the
  # right box its third side, which B takes.
  state = play(cfg, [h(cfg, 0, 0), h(cfg, 1, 0), h(cfg, 0, 1), v(cfg, 0, 0), v(cfg, 0, 1),
                     h(cfg, 1, 1), v(cfg, 0, 2)])
  assert state.boxes.tolist() == [A, B] and bool(state.terminated)
  assert float(db.result(cfg, state)) == 0.0 and float(db.score(cfg, state)) == 0.0


# -- random games against independent implementations -------------------------------------------

@functools.partial(jax.jit, static_argnums=0)
def _random_games(cfg, orders):
  """Plays [G, L] line orders (every game draws every line); the per-move player to move
  [G, L], the first player's boxes after each move [G, L], the final results [G]."""
  def move(states, lines):
    states = jax.vmap(functools.partial(db.step, cfg))(states, lines)
    return states, (states.to_play, jnp.sum(states.boxes == 1, -1), states.terminated)

  start = jax.vmap(lambda _: db.init(cfg))(jnp.arange(orders.shape[0]))
  final, (to_play, first_boxes, over) = jax.lax.scan(move, start, orders.T)
  return to_play.T, first_boxes.T, over.T, jax.vmap(functools.partial(db.result, cfg))(final)


@pytest.mark.parametrize("rows, cols, games", [(2, 2, 1000), (3, 3, 1000), (5, 5, 300), (2, 4, 300)])
def test_random_games_match_the_references(rows, cols, games):
  cfg = db.DotsConfig(rows, cols)
  rng = np.random.default_rng(rows * 10 + cols)
  orders = np.stack([rng.permutation(cfg.num_lines) for _ in range(games)]).astype(np.int32)
  to_play, first_boxes, over, results = jax.device_get(_random_games(cfg, jnp.asarray(orders)))
  for g in range(games):
    ref = Reference(rows, cols)
    spiel = pyspiel.load_game("dots_and_boxes", {"num_rows": rows, "num_cols": cols}
                              ).new_initial_state() if pyspiel is not None and g < 200 else None
    for t, line in enumerate(orders[g]):
      ref.play(int(line))
      assert ref.boxes(1) == first_boxes[g, t] and bool(over[g, t]) == ref.over(), (g, t)
      if not ref.over():
        assert (1 if ref.player == 1 else -1) == to_play[g, t], (g, t)
      if spiel is not None:
        spiel.apply_action(int(line))
        if not spiel.is_terminal():
          assert spiel.current_player() == ref.player - 1, (g, t)
    assert results[g] == {0: 0.0, 1: 1.0, 2: -1.0}[ref.winner()], g
    if spiel is not None:
      assert spiel.is_terminal() and np.sign(spiel.returns()[0]) == results[g], g


def test_the_reference_is_openspiel_s_game():
  """Where OpenSpiel is installed, the plain-Python reference is checked against it."""
  if pyspiel is None:
    pytest.skip("OpenSpiel is not installed (pip install open_spiel)")
  rng = np.random.default_rng(7)
  for rows, cols in ((2, 2), (3, 3), (2, 5)):
    for _ in range(200):
      ref = Reference(rows, cols)
      spiel = pyspiel.load_game("dots_and_boxes", {"num_rows": rows, "num_cols": cols}
                                ).new_initial_state()
      while not ref.over():
        assert sorted(spiel.legal_actions()) == ref.legal()
        assert spiel.current_player() == ref.player - 1
        line = int(rng.choice(ref.legal()))
        ref.play(line)
        spiel.apply_action(line)
      assert spiel.is_terminal()
      assert np.sign(spiel.returns()[0]) == {0: 0, 1: 1, 2: -1}[ref.winner()]


# -- the protocol: encodings, symmetries ----------------------------------------------------------

def test_dots_and_boxes_satisfies_the_game_protocol():
  game.check_protocol(db)
  g = game.make({"name": "dots_and_boxes", "rows": 2, "cols": 3})
  assert g == game.Game(db, db.DotsConfig(2, 3)) and g.has("ownership") and g.has("score")
  assert g.num_actions == g.max_length == 17 and g.pass_action is None
  assert g.planes_shape("boxes") == (5, 7, db.NUM_PLANES) and g.num_symmetries == 4
  assert game.Game(db, db.DotsConfig(3, 3)).num_symmetries == 8
  with pytest.raises(ValueError, match="encoding 'boxes'"):
    g.planes_shape("agz17")


def test_the_planes_are_from_the_mover_s_view():
  cfg = db.DotsConfig(2, 2)
  state = play(cfg, [h(cfg, 0, 0), v(cfg, 0, 0), h(cfg, 1, 0), v(cfg, 0, 1)])  # B takes box 0
  planes = db.features(cfg, state)
  assert planes.shape == (5, 5, 6) and int(state.to_play) == B
  assert planes[..., 0].sum() == 4 and planes[0, 1, 0] == 1 and planes[1, 0, 0] == 1
  assert planes[1, 1, 1] == 1 and planes[..., 2].sum() == 0      # B to move owns it
  assert planes[..., 3].sum() == cfg.num_lines and planes[..., 4].sum() == cfg.num_boxes
  np.testing.assert_allclose(planes[..., 5], 0.25)
  batch = db.features(cfg, jax.tree.map(lambda x: jnp.stack([x, x]), state))
  np.testing.assert_array_equal(batch[1], planes)


@pytest.mark.parametrize("rows, cols", [(3, 3), (2, 4)])
def test_symmetries_map_games_to_games(rows, cols):
  """Playing the transformed lines gives the transformed planes, ownership and legal moves."""
  cfg = db.DotsConfig(rows, cols)
  g = game.Game(db, cfg)
  plane_perm, action_perm = g.symmetries()
  assert (plane_perm[0] == np.arange(plane_perm.shape[1])).all()
  rng = np.random.default_rng(3)
  lines = rng.permutation(cfg.num_lines)[:cfg.num_lines - 3]
  state = play(cfg, lines)
  planes = db.features(cfg, state)
  for k in range(g.num_symmetries):
    inverse = np.argsort(action_perm[k])       # line a goes to inverse[a]
    moved = play(cfg, inverse[lines])
    assert int(moved.to_play) == int(state.to_play)
    policy = jnp.arange(cfg.num_lines, dtype=jnp.float32)
    want_planes, want_policy = g.transform(planes, policy, k)
    np.testing.assert_array_equal(db.features(cfg, moved), want_planes)
    np.testing.assert_array_equal(want_policy[inverse], policy)
    np.testing.assert_array_equal(db.ownership(cfg, moved),
                                  g.transform_points(db.ownership(cfg, state), k))
    np.testing.assert_array_equal(db.legal_actions(cfg, moved),
                                  g.transform_actions(db.legal_actions(cfg, state), k))


# -- the search ----------------------------------------------------------------------------------

def _uniform(variables, states, rng_key):
  del variables, rng_key
  batch = states.to_play.shape[0]
  return jnp.zeros((batch, states.lines.shape[-1])), jnp.zeros(batch)


def test_the_search_keeps_the_mover_after_a_box():
  """Through the tree: the edge that completes a box has discount +1, the others -1, and
  the search takes the box that wins the game."""
  cfg = db.DotsConfig(1, 2)
  g = game.Game(db, cfg)
  # Box 0 has three sides; drawing v(0,1) completes it and gives box 1 its third side.
  state = play(cfg, [h(cfg, 0, 0), h(cfg, 1, 0), v(cfg, 0, 0), h(cfg, 0, 1)])
  states = jax.tree.map(lambda x: x[None], state)
  settings = helpers.search_config(algorithm="puct", num_simulations=64, dirichlet_fraction=0.0,
                                   max_num_considered_actions=3)
  out = search.run_search(g, _uniform, None, states, jax.random.PRNGKey(0), settings)
  tree = out.search_tree
  closes = v(cfg, 0, 1)
  assert float(tree.children_discounts[0, 0, closes]) == 1.0
  others = [a for a in range(cfg.num_lines) if a != closes and not bool(state.lines[a])]
  np.testing.assert_array_equal(tree.children_discounts[0, 0, jnp.asarray(others)], -1.0)
  # Taking box 0 and then box 1 (two lines by the mover) wins 2-0.
  assert int(search.best_action(settings, out)[0]) == closes


# -- scripted opponents --------------------------------------------------------------------------

def _batch(states):
  return jax.tree.map(lambda *xs: jnp.stack(xs), *states)


def test_the_greedy_player_takes_boxes_and_gives_none_away():
  cfg = db.DotsConfig(2, 2)
  # Box 0 has three sides (v(0,1) takes it); h(1,1) would give box 1 or box 3 a third side...
  offered = play(cfg, [h(cfg, 0, 0), v(cfg, 0, 0), h(cfg, 1, 0), h(cfg, 0, 1), v(cfg, 0, 2)])
  # ... and here nothing is offered: the safe lines are those next to no two-sided box.
  quiet = play(cfg, [h(cfg, 0, 0), v(cfg, 0, 0), h(cfg, 2, 1), v(cfg, 1, 2)])
  states = _batch([offered] * 200 + [quiet] * 200)
  chosen = np.asarray(jax.jit(functools.partial(db.greedy_lines, cfg))(states, jax.random.PRNGKey(0)))
  assert (chosen[:200] == v(cfg, 0, 1)).all()     # the only line that completes a box
  gives = {h(cfg, 1, 0), v(cfg, 0, 1), h(cfg, 1, 1), v(cfg, 1, 1)}  # sides of boxes 0 and 3
  safe = {a for a in range(cfg.num_lines) if not bool(quiet.lines[a])} - gives
  assert set(chosen[200:].tolist()) == safe       # every safe line, and only those
  # Once every line gives a box away, it draws one of them.
  cfg1 = db.DotsConfig(1, 1)
  last = play(cfg1, [0, 1])                         # top and bottom: any side gives the box
  lines = jax.jit(functools.partial(db.greedy_lines, cfg1))(_batch([last] * 50), jax.random.PRNGKey(1))
  assert set(np.asarray(lines).tolist()) == {2, 3}


def test_the_random_player_draws_every_free_line():
  cfg = db.DotsConfig(2, 2)
  state = play(cfg, [0, 5, 7])
  lines = np.asarray(db.random_lines(cfg, _batch([state] * 2000), jax.random.PRNGKey(2)))
  counts = np.bincount(lines, minlength=cfg.num_lines)
  assert (counts[[0, 5, 7]] == 0).all()
  free = counts[np.setdiff1d(np.arange(cfg.num_lines), [0, 5, 7])]
  assert free.min() > 2000 / 9 * 0.7 and free.max() < 2000 / 9 * 1.3
  with pytest.raises(ValueError, match=r"dots_and_boxes has no scripted player 'minimax' \(it has: random, greedy, perfect\)"):
    game.Game(db, cfg).opponent("minimax")


# -- the AlphaZero core on Dots and Boxes --------------------------------------------------------

@pytest.fixture(scope="module")
def trained(tmp_path_factory):
  """A few iterations of configs/dots_and_boxes_cpu.py on 2 x 2 boxes, tiny sizes."""
  from agz_jax import training  # pylint: disable=import-outside-toplevel
  from configs import dots_and_boxes_cpu  # pylint: disable=import-outside-toplevel
  config = dots_and_boxes_cpu.get_config()
  config.update_from_flattened_dict({
      "iterations": 4, "game.rows": 2, "game.cols": 2, "model.blocks": 1, "model.channels": 8,
      "model.value_hidden": 16, "search.num_simulations": 4, "search.max_num_considered_actions": 4,
      "selfplay.num_games": 8, "selfplay.steps_per_iteration": 6, "replay.rows_per_game": 18,
      "replay.min_ready": 16, "train.batch_size": 8, "train.updates_per_iteration": 2,
      "eval.every": 2, "eval.num_games": 4, "eval.num_simulations": 2, "mesh.cpu_devices": 1,
      "mesh.num_devices": 1, "checkpoint.every": 2})
  workdir = tmp_path_factory.mktemp("dots")
  training.train_and_evaluate(config, str(workdir))
  return workdir


def test_alphazero_trains_on_dots_and_boxes(trained):
  import json  # pylint: disable=import-outside-toplevel
  rows = [json.loads(t) for t in open(trained / "metrics.jsonl")]
  assert [r["iteration"] for r in rows] == [1, 2, 3, 4]
  losses = [r for r in rows if r.get("trained")]
  assert losses and all(np.isfinite(r["loss_policy"]) and r["loss_ownership"] > 0 for r in losses)
  assert "elo" in rows[1] and all(0 < r["game_length"] <= 12 for r in rows if r["games"])
  from agz_jax.players.network import Network  # pylint: disable=import-outside-toplevel
  network = Network.from_checkpoint(str(trained))
  planes = db.features(db.DotsConfig(2, 2), _batch([db.init(db.DotsConfig(2, 2))]))
  logits, value = network.model.apply(network.variables, planes)
  assert logits.shape == (1, 12) and value.shape == (1,)


def test_a_network_plays_the_scripted_players(trained, tmp_path):
  import json  # pylint: disable=import-outside-toplevel
  from agz_jax import tournament  # pylint: disable=import-outside-toplevel
  out = tmp_path / "m"
  assert tournament.main(["--player", f"net={trained}", "--opponent", "random", "--opponent",
                          "greedy", "--opponent", "perfect", "--games", "4", "--simulations", "4",
                          "--out", str(out)]) == 0
  lines = [json.loads(t) for t in open(out / "results.jsonl")]
  assert [(x["black"], x["white"]) for x in lines] == (
      [("net", "random")] * 2 + [("random", "net")] * 2 + [("net", "greedy")] * 2
      + [("greedy", "net")] * 2 + [("net", "perfect")] * 2 + [("perfect", "net")] * 2)
  assert all(x["moves"] == 12 and (x["rows"], x["cols"]) == (2, 2) for x in lines)
  # 2 x 2 is the first player's by 2 boxes (the solution): moving first, perfect play wins.
  assert all(x["winner"] == "perfect" for x in lines[-2:] if x["black"] == "perfect")
