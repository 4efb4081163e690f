"""AlphaGo's RL policy (task rl_policy): games between two policies replayed move by move, the
REINFORCE loss against a position-by-position reference, the sign of its step, the opponent
pool, and a whole run through the training loop (tiny sizes: 5x5, a 2-layer policy)."""

import functools
import json

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import pytest

from agz_jax import go, policy_games, training
from agz_jax.training import rl_policy

import helpers
from configs import cpu_9x9, rl_policy_cpu, sl_policy_cpu

CFG = go.GoConfig(size=5, komi=0.5, history=8, max_moves=40)
ENCODING = "agz17"


def sl_config():
  config = sl_policy_cpu.get_config()
  config.game.size, config.game.komi, config.game.max_moves = 5, 0.5, 50
  config.model.encoding, config.model.layers, config.model.filters = ENCODING, 2, 8
  return config


@pytest.fixture(scope="module")
def sl_checkpoint(tmp_path_factory):
  return helpers.make_checkpoint(tmp_path_factory.mktemp("sl"), config=sl_config())


@pytest.fixture(scope="module")
def model_and_params(sl_checkpoint):
  from agz_jax.players.network import Network  # pylint: disable=import-outside-toplevel
  network = Network.from_checkpoint(sl_checkpoint)
  return network.model, network.variables["params"]


def _other(params, seed):
  """Another policy: the same shapes, perturbed."""
  leaves, tree = jax.tree.flatten(params)
  keys = jax.random.split(jax.random.PRNGKey(seed), len(leaves))
  return jax.tree.unflatten(tree, [x + 0.5 * jax.random.normal(k, x.shape)
                                   for x, k in zip(leaves, keys)])


@pytest.fixture(scope="module")
def games(model_and_params):
  model, params = model_and_params
  play = jax.jit(functools.partial(policy_games.play_games, CFG, ENCODING, model, num_games=6,
                                   record=True))
  return jax.device_get(play(params, _other(params, 1), jax.random.PRNGKey(3)))


def test_the_games_replay_move_by_move(games):
  """Replaying each game's moves gives the learner's stored planes, sensible moves and actions,
  every move is sensible (or a pass when none is), and the result is the game's."""
  half = 3
  step, features = jax.jit(functools.partial(go.step, CFG)), jax.jit(
      lambda s: go.features(CFG, s, ENCODING))
  sensible_fn = jax.jit(functools.partial(go.sensible_moves, CFG))
  assert set(np.unique(games.planes)) <= {0, 1}
  for g in range(6):
    learner_black = g < half
    state = go.init(CFG)
    for t in range(int(games.length[g])):
      move = int(games.moves[t, g])
      sensible = np.asarray(sensible_fn(state))
      assert sensible[move] or (move == CFG.pass_action and not sensible.any()), (g, t)
      if (t % 2 == 0) == learner_black:   # the learner's ply
        row = g if learner_black else g - half
        np.testing.assert_array_equal(games.planes[t, row], np.asarray(features(state)))
        np.testing.assert_array_equal(games.sensible[t, row], sensible)
        assert games.action[t, row] == move and games.sampled[t, row] == sensible.any()
      state = step(state, move)
    assert bool(state.terminated) or int(games.length[g]) == CFG.max_moves
    colour = 1 if learner_black else -1
    assert games.z[g] == colour * float(go.result(CFG, state)), g
    row = g if learner_black else g - half
    assert not games.sampled[int(games.length[g]):, row].any()   # nothing after the end
  assert 0 < games.entropy < np.log(CFG.num_actions)


def test_the_reinforce_loss_is_the_sum_over_the_learner_s_moves(games, model_and_params):
  model, params = model_and_params
  half = 3
  rows = games.action.shape[0]
  # Reference: one position at a time, straight from the definition.
  def direct(p):
    total = 0.0
    for t in range(rows):
      for row in range(half):
        if not games.sampled[t, row]:
          continue
        logits = model.apply({"params": p}, games.planes[t, row][None].astype(jnp.float32))[0]
        # The softmax over the sensible moves only.
        sensible = np.flatnonzero(games.sensible[t, row])
        log_p = logits[games.action[t, row]] - jax.nn.logsumexp(logits[sensible])
        z = games.z[row] if t % 2 == 0 else games.z[half + row]
        total = total - z * log_p
    return total / 6

  want_loss, want = jax.value_and_grad(direct)(params)
  # Chunks that cut the plies unevenly, and ones past the end; the loop that stops after the
  # longest game (accelerators) and every chunk unrolled (CPUs).
  for chunk, unroll in ((3, False), (7, False), (3, True), (7, True)):
    loss, got = jax.jit(functools.partial(rl_policy.reinforce_gradients, model, chunk=chunk,
                                          unroll=unroll))(params, games)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-5, atol=1e-6)
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6), got, want)


def test_a_step_makes_the_winner_s_moves_likelier(games, model_and_params):
  model, params = model_and_params
  step = jax.jit(functools.partial(rl_policy.reinforce_gradients, model, chunk=8))
  ones = np.ones_like(games.z)

  def mean_log_p(p):   # of the learner's moves: minus the loss of games all won
    return -float(step(p, games.replace(z=ones))[0])

  for sign in (1, -1):   # games won: their moves get likelier; games lost: less likely
    _, grads = step(params, games.replace(z=sign * ones))
    stepped = jax.tree.map(lambda p, d: p - 0.05 * d, params, grads)
    change = mean_log_p(stepped) - mean_log_p(params)
    assert sign * change > 0, (sign, change)


def _rl_config(sl_checkpoint, **overrides):
  config = rl_policy_cpu.get_config()
  config.game = ml_collections.ConfigDict({"name": "go", "size": 5, "komi": 0.5, "history": 8,
                                           "max_moves": 50})
  config.model.encoding, config.model.layers, config.model.filters = ENCODING, 2, 8
  config.update_from_flattened_dict({
      "iterations": 4, "rl.init_from": sl_checkpoint, "rl.games": 4, "rl.pool_every": 2,
      "rl.pool_size": 2, "rl.max_moves": 40, "rl.chunk": 8, "eval.every": 2,
      "eval.num_games": 4, "checkpoint.every": 2, "mesh.num_devices": 1, "mesh.cpu_devices": 1,
      "train.learning_rate": 0.01, **overrides})
  return config


def test_a_run_trains_against_its_pool_and_plays_the_sl_policy(sl_checkpoint, tmp_path):
  config = _rl_config(sl_checkpoint)
  state = training.train_and_evaluate(config, str(tmp_path))
  rows = [json.loads(t) for t in open(tmp_path / "metrics.jsonl")]
  assert [r["iteration"] for r in rows] == [1, 2, 3, 4]
  for r in rows:
    assert 0 <= r["win_rate"] <= 1 and 0 < r["game_length"] <= 40 and r["opponent"] in (0, 1)
  assert "eval_win_rate" in rows[1] and "eval_win_rate" in rows[3]
  # The SL policy, then the snapshots of iterations 2 and 4 (the pool holds 2: 4 replaced SL).
  assert int(state.pool_count) == 3
  np.testing.assert_array_equal(state.pool["conv_in"]["kernel"][0],
                                state.params["conv_in"]["kernel"])
  changed = jax.tree.map(lambda a, b: not np.allclose(a, b), state.params, state.start)
  assert any(jax.tree.leaves(changed))
  # The run's checkpoint plays as a policy network.
  from agz_jax import players  # pylint: disable=import-outside-toplevel
  player = players.load_player(str(tmp_path))
  assert type(player).__name__ == "PolicyPlayer"


def test_bad_settings_are_named(sl_checkpoint):
  for overrides, message in (
      ({"rl.init_from": ""}, "rl.init_from must name the SL policy checkpoint"),
      ({"rl.games": 3}, "rl.games must be even"),
      ({"model.filters": 16}, "model.filters is 16 but the SL checkpoint .* has 8"),
  ):
    with pytest.raises(ValueError, match=message):
      training.make_task(_rl_config(sl_checkpoint, **overrides))
  with pytest.raises(FileNotFoundError):
    training.make_task(_rl_config(sl_checkpoint, **{"rl.init_from": "/nonexistent"}))


def test_policies_alone_are_compared_in_a_round_robin(sl_checkpoint, tmp_path, capsys):
  """`tournament --policy-only` (AlphaGo's RL-against-SL comparison): its results are the games
  of policy_games.play_games with the first player as the learner, black in the first half; the
  second policy's weights take part; value networks and other architectures get one line."""
  from agz_jax import tournament  # pylint: disable=import-outside-toplevel
  from agz_jax.players.network import Network  # pylint: disable=import-outside-toplevel
  other = helpers.make_checkpoint(tmp_path / "other", config=sl_config(), seed=7)
  out = tmp_path / "rr"
  assert tournament.main(["--player", f"a={sl_checkpoint}", "--player", f"b={other}",
                          "--policy-only", "--games", "8", "--seed", "5", "--out",
                          str(out)]) == 0
  lines = [json.loads(t) for t in open(out / "results.jsonl")]
  assert [line["black"] for line in lines] == ["a"] * 4 + ["b"] * 4
  a, b = Network.from_checkpoint(sl_checkpoint), Network.from_checkpoint(other)
  cfg = go.GoConfig(size=5, komi=0.5, history=8, max_moves=50)
  play = lambda pb: policy_games.play_games(cfg, ENCODING, a.model, a.variables["params"], pb,
                                         jax.random.fold_in(jax.random.PRNGKey(5), 0),
                                         num_games=8, record=False)
  played = play(b.variables["params"])
  expected = ["a" if z > 0 else ("b" if z < 0 else None) for z in np.asarray(played.z)]
  assert [line["winner"] for line in lines] == expected
  assert [line["moves"] for line in lines] == [int(n) for n in played.length]
  # Policy b's weights play: with a's weights on both sides the same key gives other games.
  assert not np.array_equal(np.asarray(play(a.variables["params"]).moves),
                            np.asarray(played.moves))
  resnet_config = cpu_9x9.get_config()
  resnet_config.game.size, resnet_config.game.komi, resnet_config.game.max_moves = 5, 0.5, 50
  resnet = helpers.make_checkpoint(tmp_path / "resnet", config=resnet_config)
  wider = helpers.make_checkpoint(tmp_path / "wider", config=sl_config(), filters=16)
  for path, message in ((resnet, "has a value output"), (wider, "one architecture")):
    assert tournament.main(["--player", f"a={sl_checkpoint}", "--player", f"b={path}",
                            "--policy-only", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
