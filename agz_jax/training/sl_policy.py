"""AlphaGo's supervised stage: the policy network learns to predict human moves (task
"sl_policy").

The games imported by `python -m agz_jax.data.import_sgf` are split by date into
training and validation games; each jitted step samples a minibatch of random
training positions on the device (`agz_jax.data.positions`), computes the
cross-entropy of the human move, and takes an SGD step. Every `eval.every`
steps a fixed set of validation positions (never trained on) gives loss, top-1
and top-5 accuracy.
"""

import functools

import jax
import jax.numpy as jnp
import ml_collections

from agz_jax import parallel
from agz_jax.data import positions
from agz_jax.metrics import log
from agz_jax.training.supervised import (DataParallelStep, SLState, SupervisedTask,
                                         cross_entropy_gradients, load_tables, policy_scores,
                                         validation_positions)


def gradients(cfg, model, config, shards: int, params, key, table, *, shard=0):
  """(gradients, metrics) of device `shard`'s 1/shards of a fresh minibatch drawn with `key`.

  Every device samples and replays its own share of the minibatch's games, so
  the shares' mean is the gradient of the whole minibatch.
  """
  games = config.data.games_per_batch // shards
  batch = positions.sample(cfg, table, key, encoding=config.model.encoding, num_games=games,
                           positions_per_game=config.data.positions_per_game,
                           first_game=shard * games)

  def loss_terms(params):
    logits = model.apply({"params": params}, batch.planes, train=True)
    return policy_scores(logits, batch.action)[:2]

  return cross_entropy_gradients(config, params, loss_terms)


def evaluate(model, params, batch: positions.Batch) -> dict:
  """Validation loss and top-1 / top-5 accuracy (over every action, pass included)."""
  logits = model.apply({"params": params}, batch.planes.astype(jnp.float32))
  loss, top1, top5 = policy_scores(logits, batch.action)
  return {"val_loss": jnp.mean(loss), "val_top1": jnp.mean(top1), "val_top5": jnp.mean(top5)}


class SLPolicyTask(SupervisedTask):
  """The jitted pieces of a supervised run, built once from a config."""

  def __init__(self, config: ml_collections.ConfigDict):
    super().__init__(config)
    self.items_per_unit = config.data.games_per_batch * config.data.positions_per_game
    self._build(config)
    parallel.check_divisible(self.mesh, **{"data.games_per_batch": config.data.games_per_batch})
    self.train = DataParallelStep(self.mesh, self.optimizer, functools.partial(
        gradients, self.cfg, self.model, config, self.mesh.devices.size))
    self.evaluate = jax.jit(functools.partial(evaluate, self.model))
    self.train_table = self.val_batch = None


  def begin(self, workdir: str, start: int) -> None:
    c = self.config
    train_table, val_table, info = load_tables(self.cfg, c)
    self.train_table = jax.device_put(train_table, parallel.replicated(self.mesh))  # once
    log(f"{info['train_games']:,} training games ({info['train_positions']:,} positions), "
        f"{info['val_games']:,} validation games from {c.data.val_from} "
        f"({info['val_positions']:,} positions)")
    self.val_batch = validation_positions(self.cfg, val_table, c)
    log(f"training a {c.model.layers}-layer, {c.model.filters}-filter policy network on "
        f"{c.model.encoding} planes, {self.items_per_unit} positions per step, "
        f"steps {start}..{self.total}")

  def step(self, state: SLState, i: int):
    del i
    return self.train(state, *self.step_inputs())

  def step_inputs(self) -> tuple:
    """What the jitted step takes besides the state: the training games."""
    return (self.train_table,)

  def report(self, i: int, state: SLState, metrics: dict) -> tuple[SLState, dict]:
    metrics["learning_rate"] = float(self.schedule(i))
    if self._evaluating(i):
      metrics.update({k: float(v) for k, v in parallel.to_host(
          self.evaluate(state.params, self.val_batch)).items()})
    return state, metrics
