"""AlphaGo Zero's dual network learned from human games (task "sl_dual").

The supervised counterpart of self-play (AlphaGo Zero, "Supervised learning"
in its Methods): the `resnet` network's policy head learns the human move
(cross-entropy) and its value head the game's result from the mover's view
(mean squared error, weighted by `train.value_weight`; the paper used 0.01),
plus L2, with a random one of the 8 symmetries per position. Every step
replays its minibatch's games on the device (`agz_jax.data.positions`); by
default each position comes from a game of its own (`data.positions_per_game
= 1`), the remedy for the value head's over-fitting to whole games.

Value targets come only from games whose result means something: even games
(no handicap, no setup stones) with a komi in `data.value_komi` and a winner
decided on the board (not on time, by forfeit or a disconnection, where the
loser may have been ahead); the other games train the policy only.

`init_from` starts from a dual network trained before (the shipped one, say) instead of
random weights.

Every `eval.every` steps: policy loss, top-1 and top-5 on fixed held-out
positions (the games of `eval.policy_source`, KGS's 2017-05 by default); value
MSE on fixed held-out positions of even games, overall and by move number (0-49,
50-99, ...), and on as many fixed training positions (the over-fitting pair).
"""

import functools

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np

from agz_jax import data, parallel
from agz_jax.data import positions
from agz_jax.metrics import format_eta, log
from agz_jax.training import optim, supervised, warm_start
from agz_jax.training.supervised import DataParallelStep, SLState, SupervisedTask

MOVE_BUCKET = 50  # value MSE is reported per this many moves
MOVE_BUCKETS = 7  # 0-49, ..., 250-299, 300+


def value_loss(value, target):
  """Mean squared error over the positions with a target (target 0: none), and their count."""
  has = (target != 0).astype(jnp.float32)
  count = jnp.sum(has)
  return jnp.sum(has * (value - target) ** 2) / jnp.maximum(count, 1.0), count


def gradients(cfg, model, config, shards: int, state: SLState, key, table, *, shard=0):
  """(gradients, metrics with the new batch statistics) of device `shard`'s share of a
  minibatch drawn with `key`."""
  games = config.data.games_per_batch // shards
  batch = positions.sample(cfg, table, key, encoding=config.model.encoding, num_games=games,
                           positions_per_game=config.data.positions_per_game,
                           first_game=shard * games)

  def loss_fn(params):
    (logits, value), updates = model.apply(
        {"params": params, "batch_stats": state.batch_stats}, batch.planes, train=True,
        mutable=["batch_stats"])
    ce, top1, _ = supervised.policy_scores(logits, batch.action)
    mse, count = value_loss(value, batch.value_target)
    l2 = optim.l2_penalty(params, config.train.weight_decay)
    loss = jnp.mean(ce) + config.train.value_weight * mse + l2
    return loss, {"loss_policy": jnp.mean(ce), "train_top1": jnp.mean(top1), "loss_value": mse,
                  "value_positions": count, "batch_stats": updates["batch_stats"]}

  grads, metrics = jax.grad(loss_fn, has_aux=True)(state.params)
  return grads, metrics


def evaluate(model, variables, batch: positions.Batch, chunk: int) -> dict:
  """Policy and value figures of fixed positions, `chunk` positions at a time.

  Returns:
    loss, top1, top5 (policy) and, over the positions with a value target,
    mse and, per move bucket b, mse_b with its count count_b.
  """
  def apply(planes):
    return model.apply(variables, planes.astype(jnp.float32))

  n = batch.action.shape[0]
  planes = batch.planes.reshape((n // chunk, chunk) + batch.planes.shape[1:])
  logits, value = jax.lax.map(apply, planes)
  logits, value = logits.reshape(n, -1), value.reshape(n)
  loss, top1, top5 = supervised.policy_scores(logits, batch.action)
  out = {"loss": jnp.mean(loss), "top1": jnp.mean(top1), "top5": jnp.mean(top5)}
  out["mse"], out["count"] = value_loss(value, batch.value_target)
  bucket = jnp.minimum(batch.move_number // MOVE_BUCKET, MOVE_BUCKETS - 1)
  for b in range(MOVE_BUCKETS):
    target = jnp.where(bucket == b, batch.value_target, 0.0)
    out[f"mse_{b * MOVE_BUCKET}"], out[f"count_{b * MOVE_BUCKET}"] = value_loss(value, target)
  return out


def _fixed_positions(cfg, table, config, num: int, seed: int) -> positions.Batch:
  """`num` fixed positions of `table`'s games, one per game draw, without symmetries."""
  c = ml_collections.ConfigDict({"model": {"encoding": config.model.encoding},
                                 "data": {"games_per_batch": min(num, 512), "positions_per_game": 1},
                                 "eval": {"seed": seed, "num_positions": num}})
  return supervised.validation_positions(cfg, table, c)


class SLDualTask(SupervisedTask):
  """The jitted pieces of a supervised dual-network run, built once from a config."""

  def __init__(self, config: ml_collections.ConfigDict):
    super().__init__(config)
    if config.model.kind != "resnet":
      raise ValueError(f"task sl_dual trains the dual network: model.kind must be 'resnet', got "
                       f"{config.model.kind!r}")
    self.items_per_unit = config.data.games_per_batch * config.data.positions_per_game
    self._build(config)
    parallel.check_divisible(self.mesh, **{"data.games_per_batch": config.data.games_per_batch})
    chunk = config.eval.chunk
    for name in ("num_positions", "num_value_positions"):
      if config.eval[name] % chunk:
        raise ValueError(f"eval.{name} ({config.eval[name]}) must be a multiple of eval.chunk "
                         f"({chunk})")
    self.train = DataParallelStep(self.mesh, self.optimizer, functools.partial(
        gradients, self.cfg, self.model, config, self.mesh.devices.size), with_state=True)
    self.evaluate = jax.jit(functools.partial(evaluate, self.model, chunk=chunk))
    self.train_table = None
    self.fixed: dict[str, positions.Batch] = {}

  def init(self, seed: int) -> SLState:
    """A fresh state: random weights, or the dual network of `init_from` (to train on from
    a shipped network, with another value weight, say) with a fresh optimizer."""
    state = super().init(seed)
    path = self.config.get("init_from", "")
    if not path:
      return state
    variables, theirs = warm_start.load_start(
        path, self.config, {"params": state.params, "batch_stats": state.batch_stats})
    rep = parallel.replicated(self.mesh)
    params = jax.device_put(variables["params"], rep)
    log(f"starting from the network of {path} ({theirs})")
    return state.replace(params=params, batch_stats=jax.device_put(variables["batch_stats"], rep),
                         opt_state=jax.jit(self.optimizer.init, out_shardings=rep)(params))

  def begin(self, workdir: str, start: int) -> None:
    c = self.config
    archive = data.load(c.data.dir)
    supervised.check_archive(self.cfg, c, archive)
    train_idx, val_idx = data.split_by_date(archive, c.data.val_from)
    if c.data.max_games:
      train_idx = train_idx[:c.data.max_games]
    with_value = data.value_games(archive, c.data.value_komi)
    policy_val = val_idx[np.char.startswith(archive.source[val_idx], c.eval.policy_source)]
    value_val = val_idx[with_value[val_idx]]
    for name, idx in (("policy validation", policy_val), ("value validation", value_val)):
      if not len(idx):
        raise ValueError(f"no {name} games in {c.data.dir} (data.val_from {c.data.val_from!r}, "
                         f"eval.policy_source {c.eval.policy_source!r}): set them to match the "
                         "imported games")
    lengths = archive.lengths()
    log(f"{len(train_idx):,} training games ({int(lengths[train_idx].sum()):,} positions), of "
        f"them {int(with_value[train_idx].sum()):,} with a value target "
        f"({int(lengths[train_idx][with_value[train_idx]].sum()):,} positions); held out: "
        f"{len(policy_val):,} games for the policy, {len(value_val):,} for the value")
    winner = np.where(with_value, archive.winner, 0).astype(np.int8)  # value targets only there
    archive = archive._replace(winner=winner)
    table = lambda idx: jax.tree.map(jnp.asarray, positions.make_table(archive, idx))
    self.train_table = jax.device_put(table(train_idx), parallel.replicated(self.mesh))
    train_value = train_idx[with_value[train_idx]]
    self.fixed = {
        "val": _fixed_positions(self.cfg, table(policy_val), c, c.eval.num_positions, c.eval.seed),
        "val_value": _fixed_positions(self.cfg, table(value_val), c, c.eval.num_value_positions,
                                      c.eval.seed + 1),
        "train_value": _fixed_positions(self.cfg, table(train_value), c,
                                        c.eval.num_value_positions, c.eval.seed + 2),
    }
    log(f"training a {c.model.blocks}-block, {c.model.channels}-channel dual network on "
        f"{c.model.encoding} planes, {self.items_per_unit} positions per step (value weight "
        f"{c.train.value_weight:g}), steps {start}..{self.total}")

  def step(self, state: SLState, i: int):
    del i
    return self.train(state, self.train_table)

  def report(self, i: int, state: SLState, metrics: dict) -> tuple[SLState, dict]:
    metrics["learning_rate"] = float(self.schedule(i))
    if self._evaluating(i):
      variables = {"params": state.params, "batch_stats": state.batch_stats}
      got = {name: parallel.to_host(self.evaluate(variables, batch))
             for name, batch in self.fixed.items()}
      metrics.update(val_loss=float(got["val"]["loss"]), val_top1=float(got["val"]["top1"]),
                     val_top5=float(got["val"]["top5"]), val_mse=float(got["val_value"]["mse"]),
                     train_mse=float(got["train_value"]["mse"]))
      for b in range(MOVE_BUCKETS):
        if float(got["val_value"][f"count_{b * MOVE_BUCKET}"]):
          metrics[f"val_mse_{b * MOVE_BUCKET}"] = float(got["val_value"][f"mse_{b * MOVE_BUCKET}"])
    return state, metrics

  def lines(self, i: int, metrics: dict, seconds: float, eta: float, compiling: bool) -> list[str]:
    speed = "compiling" if compiling else f"{metrics['positions_per_s']:,.0f} pos/s"
    line = (f"step {i}/{self.total} | {speed} | loss {metrics['loss_policy']:.3f} "
            f"top1 {metrics['train_top1']:.3f} value {metrics['loss_value']:.3f} | "
            f"lr {metrics['learning_rate']:.2g}")
    if "val_top1" in metrics:
      line += (f" | val top1 {metrics['val_top1']:.3f} top5 {metrics['val_top5']:.3f} "
               f"mse {metrics['val_mse']:.3f} (train {metrics['train_mse']:.3f})")
    return [f"{line} | ETA {format_eta(eta)}"]
