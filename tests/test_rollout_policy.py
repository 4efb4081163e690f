"""The fast policies' training task: harvesting dictionaries, learning weights, checkpoints."""

import functools
import json
import os
import sys

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import pytest

from agz_jax import alphago, checkpoint, data, go, training
from agz_jax.data import positions
from agz_jax.alphago import patterns
from agz_jax.training import rollout_policy

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
from configs import rollout_policy as rollout_config  # noqa: E402  pylint: disable=wrong-import-position
from configs import tree_policy  # noqa: E402  pylint: disable=wrong-import-position
import helpers  # noqa: E402  pylint: disable=wrong-import-position

CFG = go.GoConfig(size=9, max_moves=162)


def local_game(rng, length, date):
  """A game whose moves mostly touch the previous move: what a pattern policy can learn."""
  state = go.init(CFG)
  moves = []
  for _ in range(length):
    legal = np.flatnonzero(np.asarray(helpers.legal_moves(CFG, state))[:-1])
    near = [p for p in legal if moves and abs(p // 9 - moves[-1] // 9) + abs(p % 9 - moves[-1] % 9) == 1]
    action = int(rng.choice(near if near and rng.random() < 0.9 else legal))
    moves.append(action)
    state = go.play(CFG, [action], state)
  return data.Game(setup_black=np.zeros(0, np.int16), setup_white=np.zeros(0, np.int16),
                   moves=np.asarray(moves, np.int16), first_player=1, komi=7.5, winner=1, date=date)


@pytest.fixture(scope="module")
def games_dir(tmp_path_factory):
  rng = np.random.default_rng(11)
  games = [local_game(rng, 40, "2016-01-01") for _ in range(10)]
  games += [local_game(rng, 40, "2017-06-01") for _ in range(3)]
  folder = str(tmp_path_factory.mktemp("games"))
  data.save(data.from_games(9, games), folder)
  return folder


def tiny_config(games_dir, features="rollout"):
  config = (rollout_config if features == "rollout" else tree_policy).get_config()
  config.game.size, config.game.max_moves = 9, 162
  config.model.num_3x3, config.model.num_response = 300, 200
  if features == "tree":
    config.model.num_diamond = 300
  config.data.dir, config.data.val_from = games_dir, "2017-01-01"
  config.data.games_per_batch, config.data.positions_per_game = 4, 16
  config.data.harvest_games, config.data.harvest_chunk, config.data.min_count = 100, 4, 1
  config.train.learning_rate = 0.05
  config.steps, config.log_every = 80, 40
  config.eval.every, config.eval.num_positions = 80, 256
  config.checkpoint.every = 40
  config.mesh.cpu_devices = 1
  return config


def test_the_policy_learns_the_moves_its_features_see_and_saves_its_dictionaries(games_dir, tmp_path,
                                                                               capsys):
  config = tiny_config(games_dir)
  workdir = str(tmp_path / "run")
  state = training.train_and_evaluate(config, workdir)
  out = capsys.readouterr().out
  assert "harvesting patterns from 10 training games" in out and "3x3 patterns:" in out
  assert int(state.step) == 80
  rows = [json.loads(line) for line in open(os.path.join(workdir, "metrics.jsonl"))]
  final = [r for r in rows if "val_top1" in r][-1]
  # About 60 legal points per position: chance is under 2%; 90% of the moves touch the last one.
  assert final["val_top1"] > 0.2, final
  assert final["val_top5"] > final["val_top1"]
  config_back, variables = checkpoint.load_network(workdir)
  assert config_back.model.kind == "fast_policy"
  assert variables["params"]["weights"].shape == (config.model.num_features,)
  np.testing.assert_array_equal(variables["patterns"]["3x3"], np.asarray(state.patterns["3x3"]))
  assert (variables["patterns"]["3x3"][:, 0] >= 0).sum() > 50
  # The response group is what the data rewards: its weight is the largest of the small groups.
  weights = variables["params"]["weights"]
  tables = patterns.make_tables(variables["patterns"])
  groups = alphago.patterns.FEATURES["rollout"]
  starts = dict(zip(groups, np.cumsum([0] + [dict(tables.sizes)[g] for g in groups])))
  assert weights[starts["response"]] > 0.5


def test_harvest_counts_every_position_once(games_dir):
  archive = data.load(games_dir)
  table = jax.tree.map(jnp.asarray, positions.make_table(archive, np.arange(3)))
  counter = rollout_policy.harvest(CFG, table, np.arange(3), chunk=2)  # the last chunk is padded
  expected = patterns.PatternCounter()
  codes = jax.jit(functools.partial(patterns.harvest_codes, CFG))
  for i in range(3):
    g = data.game(archive, i)
    state = go.init(CFG)
    for move in g.moves:
      expected.add(jax.tree.map(lambda x: np.asarray(x)[None], codes(state)))
      state = go.play(CFG, [int(move)], state)
  for kind in patterns.KINDS:
    np.testing.assert_array_equal(counter.codes[kind], expected.codes[kind])
    np.testing.assert_array_equal(counter.counts[kind], expected.counts[kind])
  assert counter.counts["3x3"].sum() > 3 * 40 * 40


def test_model_sizes_that_do_not_fit_are_named():
  config = rollout_config.get_config()
  with config.unlocked():
    config.model.num_features = ml_collections.FieldReference(5)
  with pytest.raises(ValueError, match="model.num_features is 5 .* set model.num_features = "):
    rollout_policy.check_model(config.model)
  config = tree_policy.get_config()
  config.model.num_diamond = 0
  with pytest.raises(ValueError, match="needs model.num_diamond >= 1"):
    rollout_policy.check_model(config.model)
  config = rollout_config.get_config()
  config.model.features = "bushes"
  with pytest.raises(ValueError, match="model.features must be one of rollout, tree"):
    rollout_policy.check_model(config.model)
  # Overriding a dictionary's size keeps the feature count right.
  config = rollout_config.get_config()
  config.model.num_3x3 = 10
  rollout_policy.check_model(config.model)


def test_the_tree_policy_trains_on_its_extra_groups(games_dir, tmp_path):
  config = tiny_config(games_dir, "tree")
  config.steps, config.eval.every, config.checkpoint.every = 20, 20, 20
  state = training.train_and_evaluate(config, str(tmp_path / "tree"))
  sizes = dict(patterns.group_sizes(300, 200, 300))
  assert state.params["weights"].shape == (sum(sizes[g] for g in patterns.TREE_GROUPS),)
  assert (np.asarray(state.patterns["diamond"])[:, 0] >= 0).sum() > 50
  # Every group got some gradient: its weights moved.
  start = 0
  moved = {}
  for g in patterns.TREE_GROUPS:
    moved[g] = bool(np.any(np.asarray(state.params["weights"][start:start + sizes[g]]) != 0))
    start += sizes[g]
  assert all(moved[g] for g in patterns.TREE_GROUPS if g != "nakade"), moved
