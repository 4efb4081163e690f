"""The dual network learned from human games (task sl_dual): value targets, losses, training."""

import importlib.util
import json
import os
import subprocess
import sys
import tarfile

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import checkpoint, data, training
from agz_jax.players import load
from agz_jax.training import sl_dual

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
from configs import sl_dual_19x19  # noqa: E402  pylint: disable=wrong-import-position
import test_resume  # noqa: E402  pylint: disable=wrong-import-position
from test_sl_policy import random_game  # noqa: E402  pylint: disable=wrong-import-position


def _tiny_config(data_dir):
  c = sl_dual_19x19.get_config()
  c.game.size, c.game.max_moves = 9, 162
  c.model.blocks, c.model.channels, c.model.value_hidden = 1, 16, 16
  c.data.dir = data_dir
  c.data.val_from = "2017-01-01"
  c.data.games_per_batch = 16
  c.eval.policy_source = ""
  c.eval.num_positions = c.eval.num_value_positions = 64
  c.eval.chunk = 32
  c.eval.every = 50
  c.train.learning_rate = 0.1
  c.train.lr_halving_steps = 1000
  c.checkpoint.every = 100
  c.mesh.cpu_devices = 1
  c.log_every = 25
  return c


def test_value_targets_only_from_even_games_with_a_winner_and_normal_komi():
  g = data.Game(np.zeros(0, np.int16), np.zeros(0, np.int16), np.array([1, 2], np.int16), 1, 7.5,
                winner=1)
  games = [g, g._replace(winner=0), g._replace(handicap=2), g._replace(komi=0.5),
           g._replace(setup_black=np.array([40], np.int16)), g._replace(komi=6.5, winner=-1)]
  assert data.value_games(data.from_games(9, games), (5.5, 7.5)).tolist() == [
      True, False, False, False, False, True]
  # A win on time, by forfeit or by a disconnection says nothing of the position: no target.
  results = ["B+Resign", "W+12.5", "B+R", "W+Time", "B+T", "w+forfeit", "B+F", "W+Offline",
             "B+ Time", "W+Timeout", "B+Tesuji?"]
  games = [g._replace(result=r, winner=1 if r[0] in "Bb" else -1) for r in results]
  assert data.value_games(data.from_games(9, games), (5.5, 7.5)).tolist() == [
      True, True, True, False, False, False, False, False, False, False, True]


def test_value_loss_ignores_positions_without_a_target():
  value = jnp.array([0.5, -0.5, 0.9, 0.0])
  target = jnp.array([1.0, -1.0, 0.0, 0.0])
  mse, count = sl_dual.value_loss(value, target)
  assert float(count) == 2 and float(mse) == pytest.approx(0.25)
  mse, count = sl_dual.value_loss(value, jnp.zeros(4))
  assert float(count) == 0 and float(mse) == 0.0


def test_a_non_resnet_model_is_refused(tmp_path):
  c = _tiny_config(str(tmp_path))
  c.model.kind = "policy"
  with pytest.raises(ValueError, match="model.kind must be 'resnet'"):
    training.make_task(c)


def test_training_learns_moves_and_results_and_plays(tmp_path, capsys):
  # Every game is one of two sequences, the first won by black and the second by white, so the
  # next move and (from the first moves on) the winner follow from the position.
  rng = np.random.default_rng(3)
  first, second = random_game(rng, 24, winner=1), random_game(rng, 24, winner=-1)
  games = ([first._replace(date="2016-01-01"), second._replace(date="2016-02-01")] * 3
           + [first._replace(date="2017-02-01"), second._replace(date="2017-02-02")]
           + [first._replace(date="2016-03-01", handicap=2, winner=-1)])  # policy only
  data.save(data.from_games(9, games), str(tmp_path / "games"))
  config = _tiny_config(str(tmp_path / "games"))
  config.steps = 300  # at 200 the top-1 sat near its bound on some CPUs (0.58 on an AMD EPYC)
  workdir = str(tmp_path / "run")
  initial = training.make_task(config).init(0)
  state = training.train_and_evaluate(config, workdir)
  out = capsys.readouterr().out
  assert "7 training games" in out and "of them 6 with a value target" in out
  assert "step 300/300" in out and "val top1" in out and "mse" in out and "pos/s" in out
  rows = [json.loads(line) for line in open(os.path.join(workdir, "metrics.jsonl"))]
  final = [r for r in rows if "val_top1" in r][-1]
  assert final["iteration"] == 300
  assert final["val_top1"] > 0.6, final
  # Chance is an MSE of 1 (a value of 0 for a +-1 target); the handicap game's flipped result
  # never reaches the value head.
  assert final["val_mse"] < 0.5 and final["train_mse"] < 0.5, final
  assert "val_mse_0" in final and "val_mse_50" not in final  # 24-move games: one bucket
  assert all(r["value_positions"] <= config.data.games_per_batch for r in rows)
  # Batch normalisation's running statistics are trained and saved with the network.
  moved = [float(jnp.max(jnp.abs(a - b))) for a, b in zip(
      jax.tree.leaves(state.batch_stats), jax.tree.leaves(initial.batch_stats))]
  assert max(moved) > 1e-3
  _, network = checkpoint.load_network(workdir)
  assert jax.tree.leaves(network["batch_stats"])
  # AlphaGo's Figure 2b (bench/value_accuracy.py) reads its value head.
  spec = importlib.util.spec_from_file_location(
      "value_accuracy", os.path.join(REPO, "bench", "value_accuracy.py"))
  value_accuracy = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(value_accuracy)
  _, model, variables = value_accuracy.load_value(workdir)
  planes = jnp.zeros((2, 9, 9, 17))
  np.testing.assert_allclose(value_accuracy.value_of(model, variables, planes),
                             model.apply(variables, planes)[1])
  # The GTP engine's players load it: with its value head it searches.
  player = load.load_player(workdir, simulations=8)
  assert type(player).__name__ == "SearchPlayer"



def _spread_game(offset, length=30, date="2016-01-01"):
  """A legal 19x19 game without captures: points 7 apart, none next to another."""
  moves = np.array([(7 * i + offset) % 361 for i in range(length)], np.int16)
  return data.Game(np.zeros(0, np.int16), np.zeros(0, np.int16), moves, 1, 7.5, winner=1 - 2 * (offset % 2),
                   date=date, source=f"KGS-test:{offset}")


def test_supervised_training_starts_from_a_given_network(tmp_path, capsys):
  import helpers  # pylint: disable=import-outside-toplevel
  config = _tiny_config(str(tmp_path / "games"))
  start = helpers.make_checkpoint(tmp_path / "start", config=config.copy_and_resolve_references(),
                                  channels=16)
  config.init_from = start
  state = training.make_task(config).init(0)
  assert f"starting from the network of {start} (a 1x16 resnet on agz17 planes for 9x9)" in (
      capsys.readouterr().out)
  _, given = checkpoint.load_network(start)
  jax.tree.map(np.testing.assert_array_equal, {"params": state.params,
                                               "batch_stats": state.batch_stats}, given)
  assert int(state.step) == 0
  config.model.channels = 8
  with pytest.raises(checkpoint.CheckpointMismatch,
                     match=r"^init_from: .* holds a 1x16 resnet on agz17 planes for 9x9; this "
                           r"run trains a 1x8 resnet on agz17 planes for 9x9: set model.blocks"):
    training.make_task(config).init(0)


def test_timed_training_smoke_ships_a_network(tmp_path):
  games = [_spread_game(k) for k in range(6)] + [_spread_game(k, date="2017-06-01") for k in (6, 7)]
  data.save(data.from_games(19, games), str(tmp_path / "games"))
  out = tmp_path / "out"
  # It trains on from a network given (the smoke run's size), at the value weight given.
  import helpers  # pylint: disable=import-outside-toplevel
  start = helpers.make_checkpoint(tmp_path / "start", config=sl_dual_19x19.get_config(),
                                  value_hidden=8)
  cmd = [sys.executable, "-m", "agz_jax.timed_training", "--smoke", "--data",
         str(tmp_path / "games"), "--out", str(out), "--workdir", str(tmp_path / "run")]
  proc = subprocess.run(cmd + ["--init-from", start, "--value-weight", "1.5"], cwd=REPO,
                        capture_output=True, text=True, timeout=600)
  assert proc.returncode == 0, proc.stdout + proc.stderr
  assert f"starting from the network of {start} (a 1x8 resnet" in proc.stdout
  assert "first stretch: 1 step(s)" in proc.stdout and "3 more" in proc.stdout
  assert "skipped: bfloat16 (CPU: float32)" in proc.stdout
  assert sorted(os.listdir(out)) == ["human-19x19", "human-19x19.tar.gz", "metrics.jsonl"]
  config, network = checkpoint.load_network(str(out / "human-19x19"))
  assert config.task == "sl_dual" and config.model.blocks == 1 and network["batch_stats"]
  assert config.train.value_weight == 1.5 and config.init_from == start
  rows = [json.loads(line) for line in open(out / "metrics.jsonl", encoding="utf-8")]
  assert rows[-1]["iteration"] == 4 and "val_mse" in rows[-1]
  with tarfile.open(out / "human-19x19.tar.gz") as tar:
    assert "human-19x19/network" in tar.getnames()
  # Without an accelerator and without --smoke it stops at once, saying why.
  proc = subprocess.run(cmd[:3] + cmd[4:], cwd=REPO, capture_output=True, text=True, timeout=300)
  assert proc.returncode != 0 and "no accelerator" in proc.stderr.strip().splitlines()[-1]
  proc = subprocess.run(cmd[:5] + [str(tmp_path / "none"), "--out", str(tmp_path / "o2")],
                        cwd=REPO, capture_output=True, text=True, timeout=300)
  assert proc.returncode != 0 and "no games.npz" in proc.stderr.strip().splitlines()[-1]
  # A network of another size to start from: one line, before any training.
  deeper = helpers.make_checkpoint(tmp_path / "deeper", config=sl_dual_19x19.get_config(),
                                   value_hidden=8, blocks=2)
  proc = subprocess.run(cmd[:6] + ["--out", str(tmp_path / "o3"), "--init-from", deeper],
                        cwd=REPO, capture_output=True, text=True, timeout=300)
  last = proc.stderr.strip().splitlines()[-1]
  assert proc.returncode != 0 and last.startswith("timed_training: init_from: "), proc.stderr
  assert "holds a 2x8 resnet on agz17 planes for 19x19; this run trains a 1x8 resnet" in last
  # --encoding reaches the run's config (KataGo's planes, which a 17-plane network of the same
  # blocks and channels may start, tests/test_features_katago.py; not one of other blocks).
  proc = subprocess.run(cmd[:6] + ["--out", str(tmp_path / "o4"), "--init-from", deeper,
                                   "--encoding", "katago_noladders"],
                        cwd=REPO, capture_output=True, text=True, timeout=300)
  last = proc.stderr.strip().splitlines()[-1]
  assert proc.returncode != 0 and last.startswith("timed_training: init_from: "), proc.stderr
  assert "this run trains a 1x8 resnet on katago_noladders planes" in last, last


def test_a_network_exported_in_bfloat16_plays_in_float32(tmp_path):
  import helpers  # pylint: disable=import-outside-toplevel
  from agz_jax import export  # pylint: disable=import-outside-toplevel
  workdir = helpers.make_checkpoint(tmp_path / "run", size=5)
  out = tmp_path / "shipped"
  assert export.main([workdir, str(out), "--dtype", "bfloat16"]) == 0
  assert sorted(os.listdir(out)) == ["_CHECKPOINT_METADATA", "config", "network"]
  assert "commit_success.txt" not in os.listdir(out / "network")
  _, variables = checkpoint.load_network(str(out))
  _, original = checkpoint.load_network(workdir)
  for a, b in zip(jax.tree.leaves(variables), jax.tree.leaves(original)):
    assert a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=1 / 128, atol=1e-6)  # bfloat16 keeps 8 bits
  assert any(not np.array_equal(a, b) for a, b in zip(jax.tree.leaves(variables),
                                                       jax.tree.leaves(original)))
  assert load.load_player(str(out), simulations=2).name == "agz_jax-1x8"


def test_the_shipped_19x19_network_opens_like_a_human():
  """pretrained/human-19x19 (BENCHMARKS.md): its policy's first moves are corner points of
  the third and fourth lines, and a player that searches with its value head loads: PUCT
  (its config's), which searches under a clock in one compiled program."""
  from agz_jax import go  # pylint: disable=import-outside-toplevel
  path = load.pretrained_path("human-19x19")
  policy = load.load_player(path, policy_only=True)
  cfg = go.GoConfig(size=19, komi=7.5)
  state = go.init(cfg)
  for _ in range(4):
    action = policy.analyse(cfg, state)["action"]
    row, col = divmod(action, 19)
    assert {min(row, 18 - row), min(col, 18 - col)} <= {2, 3}, go.action_to_gtp(cfg, action)
    state = go.step(cfg, state, action)
  searcher = load.load_player(path, simulations=4)
  assert type(searcher).__name__ == "SearchPlayer"
  assert searcher.algorithm == "puct" and searcher.timed_search
  # Its value head is less sure than its policy: Q on the values' own scale, an unvisited
  # move at its parent's value (BENCHMARKS.md).
  settings = searcher.network.search_config(algorithm="puct", simulations=8, considered_actions=1)
  assert (settings.q_transform, settings.first_play) == ("bounded", "parent")


# Self-play at the tiniest size (tests/test_resume.py's), one iteration, no evaluation.
SELFPLAY = {**test_resume.SELFPLAY, "eval.every": 0, "checkpoint.every": 1, "iterations": 1}


def test_self_play_starts_from_a_supervised_network(tmp_path, capsys):
  import helpers  # pylint: disable=import-outside-toplevel
  from configs import default  # pylint: disable=import-outside-toplevel
  config = default.get_config()
  config.update_from_flattened_dict(SELFPLAY)
  start = helpers.make_checkpoint(tmp_path / "supervised", config=config.copy_and_resolve_references())
  config.init_from = start
  training.train_and_evaluate(config, str(tmp_path / "run"))
  assert f"starting from the network of {start} (a 1x8 resnet" in capsys.readouterr().out
  _, given = checkpoint.load_network(start)
  _, initial = checkpoint.load_network(os.path.join(tmp_path, "run", "checkpoints", "0"))
  jax.tree.map(np.testing.assert_array_equal, initial, given)  # iteration 0 is that network
  _, trained = checkpoint.load_network(str(tmp_path / "run"))
  assert jax.tree.leaves(trained)[0].shape == jax.tree.leaves(given)[0].shape
  # Another size, another encoding or a policy network is refused in one line.
  for change in ({"model.channels": 16}, {"game.history": 8}):
    other = default.get_config()
    other.update_from_flattened_dict({**SELFPLAY, **change})
    other.init_from = start
    with pytest.raises(ValueError, match=r"^init_from: .* holds a 1x8 resnet on agz17 planes for "
                       r"5x5; this run trains a 1x\d+ resnet"):
      training.make_task(other).init(0)
