"""AlphaGo's supervised stage: positions sampled on the device, the SL policy network, training.

The games are random legal 9x9 games made here (some with setup stones and white moving first),
stored as a GameArchive like the imported human games.
"""

import functools
import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import data, go, training
from agz_jax.training import sl_policy, supervised
from agz_jax.data import positions
from agz_jax.nets import PolicyNet

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
from configs import sl_policy_cpu  # noqa: E402  pylint: disable=wrong-import-position
import helpers  # noqa: E402  pylint: disable=wrong-import-position

CFG = go.GoConfig(size=9, komi=7.5, max_moves=162)
ENCODING = "alphago48"


def random_game(rng, length, setup=False, white_first=False, date="2016-01-01", winner=1):
  cfg = go.GoConfig(size=9, max_moves=162)
  black = [int(x) for x in rng.choice(81, 3, replace=False)] if setup else []
  state = go.init(cfg, black=black, to_play=go.WHITE if white_first else go.BLACK)
  moves = []
  for _ in range(length):
    legal = np.flatnonzero(np.asarray(helpers.legal_moves(cfg, state))[:-1])
    action = int(rng.choice(legal))
    moves.append(action)
    state = go.play(cfg, [action], state)
  return data.Game(setup_black=np.asarray(black, np.int16), setup_white=np.zeros(0, np.int16),
                   moves=np.asarray(moves, np.int16), first_player=-1 if white_first else 1,
                   komi=7.5, winner=winner, date=date)


@pytest.fixture(scope="module")
def archive():
  rng = np.random.default_rng(7)
  games = [random_game(rng, 12), random_game(rng, 40, setup=True, white_first=True, winner=-1),
           random_game(rng, 25, winner=0), random_game(rng, 30, date="2017-06-01"),
           random_game(rng, 18, setup=True, date="2017-07-01", winner=-1)]
  return data.from_games(9, games)


@functools.cache
def _sampler(num_games, positions_per_game, augment):
  return jax.jit(functools.partial(positions.sample, CFG, encoding=ENCODING, num_games=num_games,
                                   positions_per_game=positions_per_game, augment=augment))


def _host_state(archive, i, move_number):
  g = data.game(archive, i)
  state = go.init(CFG, black=[int(x) for x in g.setup_black], white=[int(x) for x in g.setup_white],
                  to_play=g.first_player)
  return go.play(CFG, [int(x) for x in g.moves[:move_number]], state)


def test_positions_equal_a_move_by_move_host_replay(archive):
  table = jax.tree.map(jnp.asarray, positions.make_table(archive, np.arange(archive.num_games)))
  batch = _sampler(6, 4, False)(table, jax.random.PRNGKey(0))
  single = jax.jit(go.features, static_argnums=(0, 2))
  assert batch.planes.shape == (24, 9, 9, 48)
  assert len(set(np.asarray(batch.game).tolist())) > 2
  for i in range(24):
    g, n = int(batch.game[i]), int(batch.move_number[i])
    state = _host_state(archive, g, n)
    np.testing.assert_array_equal(np.asarray(batch.planes[i]), np.asarray(single(CFG, state, ENCODING)),
                                  err_msg=f"game {g} move {n}")
    assert int(batch.action[i]) == int(data.game(archive, g).moves[n])
    assert float(batch.value_target[i]) == int(archive.winner[g]) * int(state.to_play)


def test_symmetries_move_planes_and_target_together(archive):
  table = jax.tree.map(jnp.asarray, positions.make_table(archive, np.arange(archive.num_games)))
  key = jax.random.PRNGKey(1)
  plain, turned = _sampler(6, 4, False)(table, key), _sampler(6, 4, True)(table, key)
  np.testing.assert_array_equal(plain.game, turned.game)
  moved = 0
  for i in range(24):
    matches = [k for k in range(8) if np.array_equal(
        np.asarray(go.transform_planes(plain.planes[i], k)), np.asarray(turned.planes[i]))]
    assert matches, f"position {i}: augmented planes are no symmetry of the original"
    one_hot = jax.nn.one_hot(plain.action[i], CFG.num_actions)
    targets = {int(jnp.argmax(go.transform_policy(one_hot, k))) for k in matches}
    assert int(turned.action[i]) in targets
    moved += int(turned.action[i]) != int(plain.action[i])
  assert moved > 0


def test_positions_are_uniform_over_the_data(archive):
  # Game 1 has 40 moves and game 0 has 12: game 1 must come up about 40/12 times as often.
  table = jax.tree.map(jnp.asarray, positions.make_table(archive, np.array([0, 1])))
  counts = np.zeros(2)
  for seed in range(4):
    batch = _sampler(64, 1, False)(table, jax.random.PRNGKey(seed))
    counts += np.bincount(np.asarray(batch.game), minlength=2)
    assert np.all(np.asarray(batch.move_number) < np.asarray(table.length)[np.asarray(batch.game)])
  assert 2.3 < counts[1] / counts[0] < 5.5


def test_validation_games_are_never_trained_on(archive, tmp_path):
  data.save(archive, str(tmp_path))
  config = sl_policy_cpu.get_config()
  config.data.dir, config.data.val_from, config.game.size = str(tmp_path), "2017-01-01", 9
  train_table, val_table, info = supervised.load_tables(CFG, config)
  assert (info["train_games"], info["val_games"]) == (3, 2)
  train_moves = {tuple(np.asarray(r).tolist()) for r in train_table.moves}
  for i in (3, 4):  # dated 2017-06 and 2017-07
    moves = data.game(archive, i).moves.tolist()
    assert not any(list(r[:len(moves)]) == moves for r in train_moves)
    assert any(np.asarray(r[:len(moves)]).tolist() == moves for r in val_table.moves)


def test_policy_net_has_the_paper_shape():
  net = PolicyNet()
  shapes = jax.eval_shape(lambda: net.init(jax.random.PRNGKey(0), jnp.zeros((1, 19, 19, 48))))
  params = shapes["params"]
  assert params["conv_in"]["kernel"].shape == (5, 5, 48, 192)
  assert params["conv_0"]["kernel"].shape == (3, 3, 192, 192)
  assert "conv_10" in params and "conv_11" not in params          # 11 3x3 layers
  assert params["conv_out"]["kernel"].shape == (1, 1, 192, 1)
  assert params["point_bias"].shape == (361,)
  count = sum(int(np.prod(x.shape)) for x in jax.tree.leaves(params))
  assert 3.8e6 < count < 4.0e6                                     # the paper's ~3.9M
  small = PolicyNet(layers=3, filters=8)
  v = small.init(jax.random.PRNGKey(0), jnp.zeros((1, 9, 9, 17)))
  logits = small.apply(v, jnp.ones((2, 9, 9, 17)))
  assert logits.shape == (2, 82) and logits.dtype == jnp.float32


def _tiny_config(workdir_data, encoding="agz17"):
  config = sl_policy_cpu.get_config()
  config.game.size, config.game.max_moves, config.model.encoding = 9, 162, encoding
  config.model.layers, config.model.filters = 3, 16
  config.data.dir, config.data.val_from = workdir_data, "2017-01-01"
  config.data.games_per_batch, config.data.positions_per_game = 4, 8
  config.train.optimizer, config.train.learning_rate = "adam", 3e-3
  config.steps, config.log_every = 150, 50
  config.eval.every, config.eval.num_positions = 150, 64
  config.checkpoint.every = 100
  return config


def test_supervised_training_learns_checkpoints_and_resumes(tmp_path, capsys):
  # Every game is the same sequence, so the next move is a function of the position: a network
  # that learns reaches a validation accuracy far above chance (1 / 82).
  rng = np.random.default_rng(3)
  base = random_game(rng, 24)
  games = [base._replace(date=d) for d in ["2016-01-01"] * 4 + ["2017-02-01"] * 2]
  data.save(data.from_games(9, games), str(tmp_path / "games"))
  config = _tiny_config(str(tmp_path / "games"))
  workdir = str(tmp_path / "run")
  config.steps = 100
  training.train_and_evaluate(config, workdir)
  config.steps = 150
  state = training.train_and_evaluate(config, workdir)
  out = capsys.readouterr().out
  assert "resumed from the checkpoint of step 100" in out
  assert "step 150/150" in out and "val loss" in out and "pos/s" in out
  assert int(state.step) == 150
  rows = [json.loads(line) for line in open(os.path.join(workdir, "metrics.jsonl"))]
  final = [r for r in rows if "val_top1" in r][-1]
  assert final["iteration"] == 150
  assert final["val_top1"] > 0.6, final
  assert final["val_top5"] >= final["val_top1"]
  assert sorted(os.listdir(os.path.join(workdir, "checkpoints"))) == ["100", "150"]


def test_a_time_limit_makes_the_running_step_the_last_one_evaluated_and_saved(tmp_path, capsys):
  rng = np.random.default_rng(5)
  games = [random_game(rng, 24, date=d) for d in ["2016-01-01"] * 3 + ["2017-02-01"]]
  data.save(data.from_games(9, games), str(tmp_path / "games"))
  config = _tiny_config(str(tmp_path / "games"))
  workdir = str(tmp_path / "run")
  state = training.train_and_evaluate(config, workdir, time_limit_s=0.0)
  out = capsys.readouterr().out
  assert int(state.step) == 1
  assert "time limit of 0 s reached: step 1 is the last" in out
  assert "step 1/1" in out and "val loss" in out
  rows = [json.loads(line) for line in open(os.path.join(workdir, "metrics.jsonl"))]
  assert [r["iteration"] for r in rows] == [1] and "val_top1" in rows[0]
  assert os.listdir(os.path.join(workdir, "checkpoints")) == ["1"]


def test_launch_without_imported_games_fails_with_one_line(tmp_path):
  cmd = [sys.executable, "-m", "agz_jax.launch", "--config", "configs/sl_policy_cpu.py",
         "--workdir", str(tmp_path / "run"), f"--config.data.dir={tmp_path / 'nothing'}"]
  proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
  assert proc.returncode != 0
  last = proc.stderr.strip().splitlines()[-1]
  assert "no games.npz in" in last and "agz_jax.data.import_sgf" in last, proc.stderr[-2000:]
  assert "Traceback" not in proc.stderr


def test_gtp_plays_an_sl_policy_checkpoint_on_its_own_planes(tmp_path, monkeypatch):
  from agz_jax import checkpoint, gtp  # pylint: disable=import-outside-toplevel
  from agz_jax.players import load_player  # pylint: disable=import-outside-toplevel
  config = sl_policy_cpu.get_config()
  config.game.size, config.model.encoding = 9, "alphago48"
  config.model.layers, config.model.filters = 3, 8
  trainer = sl_policy.SLPolicyTask(config)
  saver = checkpoint.Checkpointer(str(tmp_path), keep=1)
  saver.save(1, trainer.init(0), config)
  saver.close()
  player = load_player(str(tmp_path), simulations=8)
  assert player.planes == {"history": 8} and player.encoding == "alphago48"
  assert player.simulations == 0 and player.name == "agz_jax-sl-3x8"
  engine = gtp.Engine(player, komi=7.5)
  assert go.num_planes(engine.cfg, player.encoding) == 48
  played = []
  for colour in ("b", "w", "b", "w"):
    _, ok, vertex = engine.handle(f"genmove {colour}")
    assert ok, vertex
    assert vertex.lower() not in played and vertex != "resign"
    played.append(vertex.lower())
  assert int(engine.state.move_count) == 4

  def first_moves(**kwargs):
    engine = gtp.Engine(load_player(str(tmp_path), **kwargs), komi=7.5)
    return [engine.handle(f"genmove {c}")[2].lower() for c in "bwbw"]

  assert first_moves(seed=1) == first_moves(seed=2) == played   # the policy's best moves

  # Without a value it never fills its own eyes, and passes only when nothing else is left.
  cfg = engine.cfg
  full = go.init(cfg, black=[p for p in range(81) if p not in (0, 80)], to_play=go.BLACK)
  assert player.analyse(cfg, full)["action"] == cfg.pass_action
  almost = go.init(cfg, black=[p for p in range(81) if p not in (0, 40, 41, 80)], to_play=go.BLACK)
  assert player.analyse(cfg, almost)["action"] in (40, 41)    # a two-point eye is no eye yet

  # The picture of its policy says that there is no value, even when a search is asked for.
  from agz_jax import show  # pylint: disable=import-outside-toplevel
  captions = []
  monkeypatch.setattr(show, "draw", lambda position, probabilities, **kw: captions.append(kw["caption"]))
  show.main(["--checkpoint", str(tmp_path), "--empty", "9", "--search", "8",
             "--out", str(tmp_path / "p.png")])
  assert captions and captions[0].startswith("a policy network alone: no value")
  sampled = [first_moves(seed=s, sample_moves=2) for s in (1, 2, 3)]
  assert len({tuple(m[:2]) for m in sampled}) > 1               # drawn from the policy
