"""A run stopped and resumed from its checkpoint ends in the state of a run never stopped.

Both tasks, self-play and supervised, run through the shared loop
(training.train_and_evaluate) called directly: k steps, then the rest from the
checkpoint, against all the steps at once; the WHOLE final states are compared bit for bit.
Each call builds its own task and traces its step anew; the compiled program comes from the
test session's compilation cache (tests/conftest.py), which holds exactly what compiling would
give.
"""

import os
import sys

import jax
import numpy as np

from agz_jax import data, training
from agz_jax.training import agz

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "tests"))
from configs import default, sl_policy_cpu  # noqa: E402  pylint: disable=wrong-import-position
from test_sl_policy import random_game  # noqa: E402  pylint: disable=wrong-import-position


def _host(tree):
  return jax.tree.map(np.asarray, jax.device_get(tree))


def assert_same_state(a, b):
  a, b = _host(a), _host(b)
  assert jax.tree.structure(a) == jax.tree.structure(b)
  paths = jax.tree_util.tree_flatten_with_path(a)[0]
  for (path, x), y in zip(paths, jax.tree.leaves(b), strict=True):
    assert x.dtype == y.dtype, jax.tree_util.keystr(path)
    np.testing.assert_array_equal(x, y, err_msg=jax.tree_util.keystr(path))


# Games of 6 moves (no pass, no resignation so early), so iteration 2 ends them all and training
# starts; an evaluation every 2 iterations moves the reference and the Elo.
SELFPLAY = {
    "game.size": 5, "game.max_moves": 6, "game.history": 2, "model.blocks": 1,
    "model.channels": 8, "model.value_hidden": 16, "search.num_simulations": 4,
    "search.max_num_considered_actions": 4, "selfplay.num_games": 8,
    "selfplay.steps_per_iteration": 4, "replay.rows_per_game": 12, "replay.min_ready": 8,
    "train.batch_size": 8, "train.updates_per_iteration": 2, "eval.every": 2,
    "eval.num_games": 4, "eval.num_simulations": 4, "checkpoint.every": 2, "mesh.num_devices": 1,
    "log.sgf_slots": 0,
}


def _selfplay_config(iterations):
  config = default.get_config()
  config.update_from_flattened_dict(dict(SELFPLAY, iterations=iterations))
  return config


def assert_resumed(output: str, unit: str, start: int, end: int):
  """The run's output says it went on from `start` and shows progress lines for the units
  after it only (`it N/end` or `step N/end`)."""
  assert f"resumed from the checkpoint of {unit} {start}" in output, output[-2000:]
  prefix = "it" if unit == "iteration" else "step"
  shown = [int(line.split()[1].split("/")[0]) for line in output.splitlines()
           if line.startswith(f"{prefix} ") and f"/{end} " in line]
  assert shown and min(shown) == start + 1 and max(shown) == end, shown


def test_selfplay_resumed_after_two_iterations_equals_four_straight(tmp_path, capsys):
  stopped = str(tmp_path / "stopped")
  first = training.train_and_evaluate(_selfplay_config(2), stopped)
  assert int(first.iteration) == 2
  capsys.readouterr()
  resumed = training.train_and_evaluate(_selfplay_config(4), stopped)
  # It went on from the checkpoint of iteration 2 and ran iterations 3 and 4 only: a run
  # that ignored its checkpoint would end in the same state, but say and do otherwise.
  assert_resumed(capsys.readouterr().out, "iteration", 2, 4)
  straight = training.train_and_evaluate(_selfplay_config(4), str(tmp_path / "straight"))
  assert "resumed" not in capsys.readouterr().out
  assert int(straight.iteration) == 4
  assert_same_state(resumed, straight)
  # The compared state is not trivially the initial one: it trained and was evaluated.
  init = agz.AlphaZeroTask(_selfplay_config(4)).init(0)
  changed = lambda a, b: any(not np.array_equal(x, y) for x, y in
                             zip(jax.tree.leaves(_host(a)), jax.tree.leaves(_host(b))))
  assert changed(straight.params, init.params)
  assert changed(straight.reference, init.reference)
  assert changed(straight.buffer, init.buffer)


def test_supervised_resumed_after_three_steps_equals_six_straight(tmp_path, capsys):
  rng = np.random.default_rng(5)
  games = [random_game(rng, 20, date=d) for d in ["2016-01-01"] * 3 + ["2017-02-01"]]
  data.save(data.from_games(9, games), str(tmp_path / "games"))

  def config(steps):
    c = sl_policy_cpu.get_config()
    c.game.size, c.game.max_moves, c.model.encoding = 9, 162, "agz17"
    c.model.layers, c.model.filters = 2, 8
    c.data.dir, c.data.val_from = str(tmp_path / "games"), "2017-01-01"
    c.data.games_per_batch, c.data.positions_per_game = 4, 4
    c.train.optimizer, c.train.learning_rate = "adam", 3e-3
    c.steps, c.log_every, c.eval.every, c.eval.num_positions = steps, 1, 0, 16
    c.checkpoint.every = 3
    return c

  stopped = str(tmp_path / "stopped")
  assert int(training.train_and_evaluate(config(3), stopped).step) == 3
  capsys.readouterr()
  resumed = training.train_and_evaluate(config(6), stopped)
  assert_resumed(capsys.readouterr().out, "step", 3, 6)
  straight = training.train_and_evaluate(config(6), str(tmp_path / "straight"))
  assert int(straight.step) == 6
  assert_same_state(resumed, straight)
