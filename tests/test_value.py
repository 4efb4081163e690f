"""AlphaGo's value network: its shape, its data (one position per game, replayed move by move),
the packed files, and training on self-play positions and on human games (tiny sizes)."""

import functools
import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import checkpoint, data, go, nets, players, training
from agz_jax.data import value_data
from agz_jax.nets import ValueNet

import helpers
from configs import sl_policy_cpu, value_cpu
from test_sl_policy import random_game

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CFG = go.GoConfig(size=5, komi=0.5, history=8, max_moves=40)


def test_the_value_net_has_the_paper_shape():
  shapes = jax.eval_shape(lambda: ValueNet().init(jax.random.PRNGKey(0), jnp.zeros((1, 19, 19, 49))))
  params = shapes["params"]
  assert params["conv_in"]["kernel"].shape == (5, 5, 49, 192)
  assert "conv_10" in params and "conv_11" not in params   # 11 3x3 layers, as the policy's
  assert params["conv_out"]["kernel"].shape == (1, 1, 192, 1)
  assert params["hidden"]["kernel"].shape == (361, 256) and params["value"]["kernel"].shape == (256, 1)
  count = sum(int(np.prod(x.shape)) for x in jax.tree.leaves(params))
  assert 3.9e6 < count < 4.1e6                              # the paper's ~3.98M
  small = ValueNet(layers=3, filters=8, hidden=16)
  v = small.apply(small.init(jax.random.PRNGKey(0), jnp.zeros((1, 5, 5, 17))), jnp.ones((3, 5, 5, 17)))
  assert v.shape == (3,) and v.dtype == jnp.float32 and bool(jnp.all(jnp.abs(v) <= 1))


def _policy_checkpoint(path, encoding, seed):
  config = sl_policy_cpu.get_config()
  config.game.size, config.game.komi, config.game.max_moves = 5, 0.5, 50
  config.model.encoding, config.model.layers, config.model.filters = encoding, 2, 8
  return helpers.make_checkpoint(path, seed=seed, config=config)


@pytest.fixture(scope="module")
def policies(tmp_path_factory):
  root = tmp_path_factory.mktemp("policies")
  return (_policy_checkpoint(root / "sl", "alphago48", 0),
          _policy_checkpoint(root / "rl", "alphago48", 1))


def test_alphago49_planes_come_from_the_policies_48():
  cfg = go.GoConfig(size=5, komi=0.5, history=8)
  rng = np.random.default_rng(0)
  states = [go.play(cfg, [int(x) for x in rng.choice(25, k, replace=False)], go.init(cfg))
            for k in (0, 3, 6)]
  batch = jax.tree.map(lambda *x: jnp.stack(x), *states)
  planes48 = helpers.planes(cfg, batch, "alphago48")
  np.testing.assert_array_equal(value_data.value_planes(cfg, batch, planes48, "alphago48", "alphago49"),
                                helpers.planes(cfg, batch, "alphago49"))


def test_one_position_per_game_replays(policies):
  """Moves before U are sensible (the SL policy's), move U is a legal point, and the kept
  position is s_{U+1} with the result from its mover's view."""
  _, model, sl_params = value_data.load_policy(policies[0])
  _, _, rl_params = value_data.load_policy(policies[1])
  play = value_data.player(CFG, model, None, policy_encoding="alphago48", encoding="alphago49")
  games = value_data.draw_games(jax.random.PRNGKey(4), 8, 12)
  planes, z, u, kept, moves = jax.device_get(play(sl_params, rl_params, games))
  assert kept.sum() >= 5 and set(np.unique(u)) <= set(range(1, 13))
  assert (np.diff(u) >= 0).all()  # sorted, so that each device's games need one network longer
  features = jax.jit(lambda s: go.features(CFG, s, "alphago49"))
  sensible_fn = jax.jit(functools.partial(go.sensible_moves, CFG))
  for g in np.flatnonzero(kept):
    state = go.init(CFG)
    for t in range(int(u[g])):
      move = int(moves[g, t])
      if t + 1 < u[g]:
        sensible = np.asarray(sensible_fn(state))
        assert sensible[move] or (move == CFG.pass_action and not sensible.any())
      else:
        assert move < CFG.num_points and bool(go.legal_actions(CFG, state)[move])
      state = go.step(CFG, state, move)
    np.testing.assert_array_equal(planes[g], np.asarray(features(state)))
    mover = int(state.to_play)
    # Play the rest of the game and score it.
    t = int(u[g])
    while not bool(state.terminated):
      state = go.step(CFG, state, int(moves[g, t]))
      t += 1
    assert z[g] == mover * float(go.result(CFG, state))


def _generate(policies, out, *extra):
  return value_data.main(["--sl", policies[0], "--rl", policies[1], "--batch", "6",
                          "--out", str(out), "--u-max", "10", "--max-moves", "40",
                          "--cpu-devices", "1", *extra])


def test_the_command_writes_packed_planes_that_read_back(policies, tmp_path):
  out = tmp_path / "vd"
  assert _generate(policies, out, "--games", "12") == 0
  info, packed, z, move = value_data.read(str(out))
  assert info["encoding"] == "alphago49" and info["size"] == 5 and info["batches"] == 2
  assert 0 < len(z) <= 12
  planes = np.asarray(training.value.unpack(CFG, "alphago49", jnp.asarray(packed)))
  assert planes.shape == (len(z), 5, 5, 49) and set(np.unique(planes)) <= {0.0, 1.0}
  np.testing.assert_array_equal(planes[..., 48], np.broadcast_to(  # the colour plane: black to move
      (move % 2 == 0)[:, None, None].astype(np.float32), planes.shape[:3]))
  assert set(np.unique(z)) <= {-1.0, 0.0, 1.0} and (1 <= move).all() and (move <= 10).all()
  # A run stopped by its time limit goes on where it stopped, to the same games as one run.
  stopped = tmp_path / "stopped"
  assert _generate(policies, stopped, "--games", "12", "--time-limit", "0") == 0
  assert value_data.read(str(stopped))[0]["batches"] == 1
  assert _generate(policies, stopped, "--games", "12") == 0
  for a, b in zip(value_data.read(str(stopped))[1:], value_data.read(str(out))[1:]):
    np.testing.assert_array_equal(a, b)


def test_refusals_name_the_problem(policies, tmp_path, capsys):
  out = tmp_path / "vd"
  assert _generate(policies, out, "--games", "6") == 0
  capsys.readouterr()
  assert _generate(policies, out, "--games", "12", "--u-max", "11") == 2
  assert "made with u_max=10, not 11" in capsys.readouterr().err
  (tmp_path / "other").mkdir()
  (tmp_path / "other" / "notes.txt").write_text("x")
  assert _generate(policies, tmp_path / "other", "--games", "6") == 2
  assert "is not empty and holds no value data" in capsys.readouterr().err


def test_the_games_do_not_depend_on_the_devices(policies, tmp_path):
  """Each game draws from its own key: a batch split over two CPU devices plays the games of
  one device."""
  one, two = tmp_path / "one", tmp_path / "two"
  assert _generate(policies, one, "--games", "6") == 0
  cmd = [sys.executable, "-m", "agz_jax.data.value_data", "--sl", policies[0], "--rl", policies[1],
         "--batch", "6", "--out", str(two), "--u-max", "10", "--max-moves", "40",
         "--cpu-devices", "2", "--games", "6"]
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
  assert proc.returncode == 0, proc.stderr
  for a, b in zip(value_data.read(str(one))[1:], value_data.read(str(two))[1:]):
    np.testing.assert_array_equal(a, b)


def test_the_1x1_layer_keeps_its_gradient_and_older_networks_keep_their_relu():
  """The paper leaves the ReLU after the 1x1 layer open. With one, a single channel whose
  every point is negative passes no gradient: the network is stuck for good (it happened on
  human games within ten steps). Without it (the default) the gradient flows; networks saved
  before the setting load with the ReLU they were trained with."""
  planes = jnp.ones((2, 5, 5, 49))
  for relu, flows in ((False, True), (True, False)):
    net = ValueNet(layers=2, filters=4, hidden=8, relu_1x1=relu)
    params = net.init(jax.random.PRNGKey(0), planes)
    out = params["params"]["conv_out"]
    out["kernel"], out["bias"] = 1e-3 * out["kernel"], jnp.full((1,), -0.5)  # every point < 0
    grads = jax.grad(lambda p: jnp.sum((net.apply(p, planes) - 1.0) ** 2))(params)
    moved = float(jnp.max(jnp.abs(grads["params"]["conv_out"]["kernel"])))
    assert (moved > 0) == flows, (relu, moved)
  assert ValueNet.relu_1x1 is False
  old = {"task": "value", "model": {"kind": "value", "layers": 2, "filters": 4, "hidden": 8}}
  assert checkpoint.upgrade_config(old)["model"]["relu_1x1"] is True
  new = {"task": "value", "model": {**old["model"], "relu_1x1": False}}
  assert checkpoint.upgrade_config(new)["model"]["relu_1x1"] is False
  shipped, _ = checkpoint.load_network(os.path.join(REPO, "pretrained", "alphago-19x19", "value_net"))
  assert shipped.model.relu_1x1 is True and nets.make(shipped.model).relu_1x1 is True


def _value_config(**overrides):
  config = value_cpu.get_config()
  config.game.size, config.game.komi, config.game.max_moves = 5, 0.5, 50
  config.model.layers, config.model.filters, config.model.hidden = 2, 8, 16
  config.update_from_flattened_dict({
      "steps": 40, "log_every": 20, "train.batch_size": 8, "train.optimizer": "adam",
      "train.learning_rate": 3e-3, "eval.every": 40, "eval.num_positions": 32,
      "checkpoint.every": 40, "mesh.num_devices": 1, "mesh.cpu_devices": 1,
      "value.test_fraction": 0.25, **overrides})
  return config


def test_training_on_self_play_positions_learns_them(tmp_path):
  """On a few positions whose results it can memorise, the training error falls; the checkpoint
  is a value network, which refuses to play alone."""
  rng = np.random.default_rng(1)
  planes = (rng.random((40, 5, 5, 49)) < 0.3).astype(np.uint8)
  # A result the network can read under every symmetry: whether plane 0 has many stones.
  count = planes[..., 0].sum(axis=(1, 2))
  z = np.where(count > np.median(count), 1.0, -1.0).astype(np.float32)
  value_data.write(str(tmp_path / "vd"), planes, z, np.ones(40, np.int32),
                   {"encoding": "alphago49", "size": 5, "komi": 0.5})
  config = _value_config(**{"value.data_dir": str(tmp_path / "vd"), "steps": 150,
                            "eval.every": 150, "checkpoint.every": 150, "log_every": 50})
  del config.model["relu_1x1"]  # a config that does not say: the task writes its default
  training.train_and_evaluate(config, str(tmp_path / "run"))
  rows = [json.loads(t) for t in open(tmp_path / "run" / "metrics.jsonl")]
  assert rows[-1]["train_mse"] < 0.9 * rows[0]["loss_value"] and "test_mse" in rows[-1]
  # The checkpoint says which 1x1 layer it has, so that it loads with the one it trained.
  saved, _ = checkpoint.load_network(str(tmp_path / "run"))
  assert saved.model.relu_1x1 is False
  with pytest.raises(ValueError, match="is a value network, which has no moves to play"):
    players.load_player(str(tmp_path / "run"))


def test_training_on_human_games_learns_them(tmp_path):
  """Black wins every training game, so a position's target (the result for the player to
  move) is the colour plane: the error on the training positions falls."""
  rng = np.random.default_rng(2)
  games = [random_game(rng, 20 + i, winner=1 if i < 6 else (1, -1)[i % 2],
                       date="2017-06-01" if i >= 6 else "2016-01-01") for i in range(8)]
  data.save(data.from_games(9, games), str(tmp_path / "kgs"))
  config = _value_config(**{"value.source": "human", "data.dir": str(tmp_path / "kgs"),
                            "data.val_from": "2017-01-01", "data.games_per_batch": 4,
                            "data.positions_per_game": 2, "steps": 60, "eval.every": 1,
                            "checkpoint.every": 60})
  config.game.size, config.game.max_moves = 9, 162
  training.train_and_evaluate(config, str(tmp_path / "run"))
  rows = [json.loads(t) for t in open(tmp_path / "run" / "metrics.jsonl")]
  assert rows[0]["iteration"] == 1 and rows[-1]["iteration"] == 60
  assert rows[-1]["train_mse"] < 0.5 * rows[0]["train_mse"], (rows[0], rows[-1])
  assert np.isfinite(rows[-1]["test_mse"])


def test_the_network_starts_from_the_sl_policy_s_convolutions(policies, tmp_path):
  """value.init_from: the policy's convolutions with a zero kernel for the 49th plane, so that
  the starting network computes the policy's features; the heads fresh; a network of another
  width or kind refused in one line."""
  config = _value_config(**{"value.init_from": policies[0], "model.layers": 3})
  state = training.make_task(config).init(0)
  fresh = training.make_task(_value_config(**{"model.layers": 3})).init(0)
  _, policy = checkpoint.load_network(policies[0])
  theirs, mine = policy["params"]["conv_in"], jax.device_get(state.params["conv_in"])
  np.testing.assert_array_equal(mine["kernel"][:, :, :48], theirs["kernel"])
  np.testing.assert_array_equal(mine["kernel"][:, :, 48], 0.0)
  np.testing.assert_array_equal(mine["bias"], theirs["bias"])
  assert not np.allclose(np.asarray(theirs["kernel"]), np.asarray(fresh.params["conv_in"]["kernel"])[:, :, :48])
  for name in ("conv_0", "conv_out", "hidden", "value"):     # not in a 2-layer policy, or heads
    np.testing.assert_array_equal(jax.device_get(state.params[name]["kernel"]),
                                  jax.device_get(fresh.params[name]["kernel"]))
  # Another width: one line naming the layer and what to set.
  with pytest.raises(checkpoint.CheckpointMismatch, match="conv_in has a .* set model.filters"):
    training.make_task(_value_config(**{"value.init_from": policies[0],
                                        "model.filters": 4})).init(0)
  value_run = helpers.make_checkpoint(tmp_path / "value", config=_value_config())
  with pytest.raises(checkpoint.CheckpointMismatch, match="not a policy network: give an SL policy"):
    training.make_task(_value_config(**{"value.init_from": str(value_run)})).init(0)


def test_bad_settings_are_named(tmp_path):
  with pytest.raises(ValueError, match="model.kind must be 'value'"):
    training.make_task(_value_config(**{"model.kind": "policy"}))
  with pytest.raises(ValueError, match="value.source must be 'selfplay', 'human_cache' or 'human'"):
    training.make_task(_value_config(**{"value.source": "kgs"}))
  task = training.make_task(_value_config(**{"value.data_dir": str(tmp_path / "none")}))
  with pytest.raises(FileNotFoundError, match="no value data in .* python -m agz_jax.data.value_data"):
    task.begin(str(tmp_path / "run"), 0)
  assert nets.has_value({"kind": "value"}) is False


# -- AlphaGo's Figure 2b (bench/value_accuracy.py) -------------------------------------------------

def _bench():
  import importlib.util  # pylint: disable=import-outside-toplevel
  import os  # pylint: disable=import-outside-toplevel
  path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench",
                      "value_accuracy.py")
  spec = importlib.util.spec_from_file_location("value_accuracy", path)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def test_the_error_by_move_number_is_each_range_s_mean():
  bench = _bench()
  moves = np.array([0, 10, 49, 50, 120])
  target = np.array([1.0, -1.0, 1.0, 1.0, -1.0])
  rows = bench.buckets(moves, target, {"v": np.array([0.0, -1.0, 1.0, -1.0, 0.5])}, 50)
  assert rows == [{"moves": "0-49", "positions": 3, "v": pytest.approx(1 / 3)},
                  {"moves": "50-99", "positions": 1, "v": 4.0},
                  {"moves": "100-149", "positions": 1, "v": 2.25}]


def test_the_calibration_is_each_ranges_least_squares_scale_and_skips_none():
  bench = _bench()
  moves = np.array([0, 10, 20, 120, 130])
  target = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
  value = np.array([0.5, -0.5, 0.0, 0.5, 0.5])
  fitted = bench.calibration(moves, target, value, 50)
  # 0-49: sum(vz) / sum(v^2) = 1 / 0.5, clipped to 1; 50-99 holds nothing and keeps the range
  # before's scale, so that entry i still covers moves 50 i onwards; 100-149: 0 / 0.5 = 0.
  assert [scale for scale, _ in fitted] == [1.0, 1.0, 0.0]
  assert fitted[0][1] == pytest.approx((0.25 + 0.25 + 1.0) / 3) and fitted[1][1] is None
  assert fitted[2][1] == pytest.approx(1.0)  # a scale of 0: the constant guess's error


def test_figure_2b_runs_on_held_out_games(tmp_path):
  from test_alphago import make_rollout_checkpoint  # pylint: disable=import-outside-toplevel
  rng = np.random.default_rng(5)
  games = [random_game(rng, 15 + i, winner=(1, -1)[i % 2],
                       date="2017-06-01" if i >= 4 else "2016-01-01") for i in range(8)]
  data.save(data.from_games(9, games), str(tmp_path / "kgs"))
  config = value_cpu.get_config()
  config.game.size = 9
  value = helpers.make_checkpoint(tmp_path / "value", config=config)
  rollout = make_rollout_checkpoint(tmp_path / "rollout")
  out = tmp_path / "fig"
  bench = _bench()
  assert bench.main(["--value", value, "--rollout", rollout, "--data", str(tmp_path / "kgs"),
                     "--positions", "8", "--rollouts", "2", "--batch", "4", "--bucket", "10",
                     "--out", str(out)]) == 0
  result = json.loads((out / "value_accuracy.json").read_text())
  assert sum(r["positions"] for r in result["rows"]) == 8
  for r in result["rows"]:
    assert 0 <= r["value network"] <= 4 and 0 <= r["2 rollouts"] <= 4
  assert (out / "value_accuracy.png").stat().st_size > 5000
  # Several value networks on the same positions: the first's column is the one above.
  other = helpers.make_checkpoint(tmp_path / "other", seed=1, config=config)
  both = tmp_path / "both"
  assert bench.main(["--value", f"first={value}", "--value", f"other={other}", "--rollout", rollout,
                     "--data", str(tmp_path / "kgs"), "--positions", "8", "--rollouts", "2",
                     "--batch", "4", "--bucket", "10", "--out", str(both)]) == 0
  compared = json.loads((both / "value_accuracy.json").read_text())
  assert [r["first"] for r in compared["rows"]] == pytest.approx(
      [r["value network"] for r in result["rows"]])
  assert compared["overall"]["other"] != pytest.approx(compared["overall"]["first"])
  assert bench.main(["--value", rollout, "--rollout", rollout, "--data", str(tmp_path / "kgs"),
                     "--out", str(out)]) == 2      # not a value network
  assert bench.main(["--value", f"a={value}", "--value", f"a={other}", "--rollout", rollout,
                     "--data", str(tmp_path / "kgs"), "--out", str(out)]) == 2  # one name twice
