"""Every shipped config loads, states its command, and builds a consistent training state."""

import functools
import glob
import os
import sys

import jax
import pytest

from agz_jax import game, go, metrics, nets, training
from agz_jax.training import agz, optim, rollout_policy, supervised

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
CONFIGS = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(REPO, "configs", "*.py"))
                 if not p.endswith("__init__.py"))


def load(name):
  module = __import__(f"configs.{name}", fromlist=["get_config"])
  return module, module.get_config()


SELFPLAY = [name for name in CONFIGS if load(name)[1].task == "selfplay"]
SUPERVISED = [name for name in CONFIGS if load(name)[1].task == "sl_policy"]
FAST = [name for name in CONFIGS if load(name)[1].task == "rollout_policy"]
RL = [name for name in CONFIGS if load(name)[1].task == "rl_policy"]
VALUE = [name for name in CONFIGS if load(name)[1].task == "value"]
DUAL = [name for name in CONFIGS if load(name)[1].task == "sl_dual"]


def test_the_expected_configs_exist():
  assert {"default", "cpu_9x9", "gpu_9x9", "gpu_19x19", "tpu_v4"} <= set(SELFPLAY)
  assert {"sl_policy_19x19", "sl_policy_cpu"} <= set(SUPERVISED)
  assert {"rollout_policy", "tree_policy"} <= set(FAST)
  assert {"dots_and_boxes_cpu", "zero_9x9_cpu"} <= set(SELFPLAY) and RL == ["rl_policy_cpu"]
  assert VALUE == ["value_cpu"] and DUAL == ["sl_dual_19x19"]
  assert set(SELFPLAY) | set(SUPERVISED) | set(FAST) | set(RL) | set(VALUE) | set(DUAL) == set(
      CONFIGS)


@pytest.mark.parametrize("name", DUAL)
def test_dual_config_builds_the_dual_network_on_human_games(name):
  module, config = load(name)
  assert "python -m agz_jax.launch --config" in module.__doc__
  task = training.make_task(config)
  params = task.abstract_state.params
  assert params["Conv_0"]["kernel"].shape == (3, 3, 17, config.model.channels)
  assert params["Dense_0"]["kernel"].shape[-1] == 19 * 19 + 1  # the policy head
  assert jax.tree.leaves(task.abstract_state.batch_stats)
  assert task.cfg.max_moves >= 472 and config.data.positions_per_game == 1
  assert "tom-=" in config.data.val_from


@pytest.mark.parametrize("name", VALUE)
def test_value_config_builds_the_papers_head(name):
  module, config = load(name)
  assert "python -m agz_jax.launch --config" in module.__doc__
  task = training.make_task(config)
  params = task.abstract_state.params
  assert params["conv_in"]["kernel"].shape[2] == 49 and params["hidden"]["kernel"].shape[1] == 256


@pytest.mark.parametrize("name", RL)
def test_rl_config_starts_from_its_sl_checkpoint(name):
  module, config = load(name)
  assert "python -m agz_jax.launch --config" in module.__doc__
  config.rl.init_from = os.path.join(REPO, config.rl.init_from)
  task = training.make_task(config)
  params = task.abstract_state.params
  assert params["conv_in"]["kernel"].shape[2] == go.num_planes(task.cfg, config.model.encoding)
  pool = task.abstract_state.pool["conv_in"]["kernel"]
  assert pool.shape == (config.rl.pool_size,) + params["conv_in"]["kernel"].shape


@pytest.mark.parametrize("name", FAST)
def test_fast_policy_config_builds_a_training_state(name):
  module, config = load(name)
  assert "python -m agz_jax.launch --config" in module.__doc__
  rollout_policy.check_model(config.model)
  task = training.make_task(config)
  assert task.abstract_state.params["weights"].shape == (config.model.num_features,)
  assert task.abstract_state.patterns["3x3"].shape == (config.model.num_3x3, 2)
  assert go.GoConfig(size=config.game.size).num_points == task.cfg.num_points


@pytest.mark.parametrize("name", SUPERVISED)
def test_supervised_config_builds_a_training_state(name):
  module, config = load(name)
  assert "python -m agz_jax.launch --config" in module.__doc__
  cfg = game.make(config.game).cfg
  model = nets.make(config.model)
  optimizer = optim.make_optimizer(config.train, optim.halving_schedule(config.train))
  abstract = jax.eval_shape(functools.partial(supervised.init_state, cfg, config.model.encoding,
                                              model, optimizer), jax.random.PRNGKey(0))
  planes = go.num_planes(cfg, config.model.encoding)
  assert abstract.params["conv_in"]["kernel"].shape == (5, 5, planes, config.model.filters)
  assert abstract.params["point_bias"].shape == (cfg.num_points,)
  assert cfg.max_moves >= 472  # the longest KGS 6d+ game that the import keeps


def test_full_size_sl_policy_is_the_papers_network():
  _, config = load("sl_policy_19x19")
  assert (config.model.layers, config.model.filters, config.model.encoding) == (13, 192, "alphago48")
  assert (config.train.optimizer, config.train.learning_rate) == ("sgd", 0.003)


@pytest.mark.parametrize("name", SELFPLAY)
def test_config_builds_a_training_state(name):
  module, config = load(name)
  assert "python -m agz_jax.launch --config" in module.__doc__
  sp, tr = config.selfplay, config.train
  assert max(sp.num_games, tr.batch_size) % min(sp.num_games, tr.batch_size) == 0
  the_game = game.make(config.game)
  assert config.replay.rows_per_game >= the_game.max_length + sp.steps_per_iteration
  assert config.replay.min_ready <= sp.num_games * config.replay.rows_per_game
  model = nets.make(config.model, num_actions=the_game.num_actions)
  optimizer = optim.make_optimizer(config.train, optim.step_schedule(config.train))
  abstract = jax.eval_shape(functools.partial(agz.init_state, config, the_game, model, optimizer),
                            jax.random.PRNGKey(0))
  assert abstract.games.states.to_play.shape == (sp.num_games,)
  assert abstract.buffer.planes.shape == (sp.num_games, config.replay.rows_per_game,
                                          *the_game.planes_shape(config.model.encoding))
  logits = abstract.params["Dense_0"]["kernel"].shape[-1]
  assert logits == the_game.num_actions


def test_tpu_config_is_alphago_zero_sized():
  _, config = load("tpu_v4")
  assert (config.game.size, config.model.blocks, config.model.channels) == (19, 20, 256)
  assert config.model.dtype == "bfloat16"


def test_bad_choices_are_named():
  _, config = load("cpu_9x9")
  config.unlock()
  config.train.optimizer = "adagrad"
  with pytest.raises(ValueError, match="train.optimizer"):
    optim.make_optimizer(config.train, optim.step_schedule(config.train))
  config.model.dtype = "float16"
  with pytest.raises(ValueError, match="model.dtype"):
    nets.make(config.model)
  config.model.dtype, config.model.kind = "float32", "transformer"
  with pytest.raises(ValueError, match="model.kind must be one of resnet, policy"):
    nets.make(config.model)
  config.task = "ppo"
  with pytest.raises(ValueError, match="config.task must be one of selfplay, sl_policy"):
    training.make_task(config)


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
    agz.AlphaZeroTask(config)
