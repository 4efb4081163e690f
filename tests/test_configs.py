"""Every shipped config loads, states its command, and builds a consistent training state."""

import functools
import glob
import os
import sys

import jax
import pytest

from agz_jax import metrics, train

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
CONFIGS = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(REPO, "configs", "*.py"))
                 if not p.endswith("__init__.py"))


def load(name):
  module = __import__(f"configs.{name}", fromlist=["get_config"])
  return module, module.get_config()


def test_the_expected_configs_exist():
  assert {"default", "cpu_9x9", "gpu_9x9", "gpu_19x19", "tpu_v4"} <= set(CONFIGS)


@pytest.mark.parametrize("name", CONFIGS)
def test_config_builds_a_training_state(name):
  module, config = load(name)
  assert "python -m agz_jax.launch --config" in module.__doc__
  sp, tr = config.selfplay, config.train
  assert max(sp.num_games, tr.batch_size) % min(sp.num_games, tr.batch_size) == 0
  max_moves = config.game.max_moves or 2 * config.game.size ** 2
  assert config.replay.rows_per_game >= max_moves + sp.steps_per_iteration
  assert config.replay.min_ready <= sp.num_games * config.replay.rows_per_game
  model, optimizer = train.make_model(config), train.make_optimizer(config)
  abstract = jax.eval_shape(functools.partial(train.init_state, config, model, optimizer),
                            jax.random.PRNGKey(0))
  n = config.game.size
  assert abstract.games.states.board.shape == (sp.num_games, n * n)
  assert abstract.buffer.planes.shape == (sp.num_games, config.replay.rows_per_game, n, n,
                                          2 * config.game.history + 1)
  logits = abstract.params["Dense_0"]["kernel"].shape[-1]
  assert logits == n * n + 1


def test_tpu_config_is_alphago_zero_sized():
  _, config = load("tpu_v4")
  assert (config.game.size, config.model.blocks, config.model.channels) == (19, 20, 256)
  assert config.model.dtype == "bfloat16"


def test_bad_choices_are_named():
  _, config = load("cpu_9x9")
  config.unlock()
  config.train.optimizer = "adagrad"
  with pytest.raises(ValueError, match="train.optimizer"):
    train.make_optimizer(config)
  config.model.dtype = "float16"
  with pytest.raises(ValueError, match="model.dtype"):
    train.make_model(config)


def test_nan_loss_stops_training_with_a_clear_message():
  metrics.check_finite({"loss_value": 0.5, "games": 3.0}, 7)
  with pytest.raises(metrics.NonFiniteLossError, match="iteration 7: loss_policy is nan"):
    metrics.check_finite({"loss_policy": float("nan")}, 7)
  with pytest.raises(metrics.NonFiniteLossError, match="loss_value is inf"):
    metrics.check_finite({"loss_value": float("inf")}, 3)


def test_a_buffer_too_short_for_whole_games_is_refused():
  _, config = load("cpu_9x9")
  config.unlock()
  config.replay.rows_per_game = 48
  with pytest.raises(ValueError, match=r"replay.rows_per_game \(48\) must be at least .* \(178\)"):
    train.Trainer(config)
