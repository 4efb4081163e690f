"""AlphaGo's supervised stage: the policy network learns to predict human moves.

`python -m agz_jax.launch --config configs/sl_policy_cpu.py --workdir DIR` (a
config with `task = "sl_policy"`) runs `train_and_evaluate`: the games imported
by `python -m agz_jax.data.import_sgf` are split by date into training and
validation games; each jitted step samples a minibatch of random training
positions on the device (`agz_jax.data.positions`), computes the cross-entropy
of the human move, and takes an SGD step. Every `eval.every` steps a fixed set
of validation positions (never trained on) gives loss, top-1 and top-5 accuracy.
"""

import functools
import os
import time

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax
from flax import struct

from agz_jax import checkpoint, data, go, parallel, train
from agz_jax.data import positions
from agz_jax.metrics import MetricWriter, check_finite, format_eta, log
from agz_jax.nets import PolicyNet


@struct.dataclass
class SLState:
  """Everything a supervised run needs to resume.

  Attributes:
    params: the policy network's parameters.
    batch_stats: {} (the network has no normalisation; kept so that checkpoints
      hold the same `network` item as self-play runs).
    opt_state: the optimizer's state.
    rng: PRNG key for the next step.
    step: [] int32, updates done.
  """

  params: dict
  batch_stats: dict
  opt_state: optax.OptState
  rng: jax.Array
  step: jax.Array


def make_model(config: ml_collections.ConfigDict) -> PolicyNet:
  return PolicyNet(layers=config.model.layers, filters=config.model.filters,
                   dtype=train.compute_dtype(config))


def learning_rate(config: ml_collections.ConfigDict) -> optax.Schedule:
  """The step size, halved every `train.lr_halving_steps` steps."""
  t = config.train
  return optax.exponential_decay(t.learning_rate, transition_steps=t.lr_halving_steps,
                                 decay_rate=0.5, staircase=True)


def make_optimizer(config: ml_collections.ConfigDict) -> optax.GradientTransformation:
  """SGD with momentum, the step size halved every `lr_halving_steps` (AlphaGo), or Adam."""
  t = config.train
  schedule = learning_rate(config)
  if t.optimizer == "sgd":
    return optax.sgd(schedule, momentum=t.momentum)
  if t.optimizer == "adam":
    return optax.adam(schedule)
  raise ValueError(f"train.optimizer must be 'sgd' or 'adam', got {t.optimizer!r}")


game_config = train.game_config


def init_state(cfg: go.GoConfig, model, optimizer, rng_key) -> SLState:
  k_net, k_state = jax.random.split(rng_key)
  planes = jnp.zeros((1, cfg.size, cfg.size, cfg.num_planes), jnp.float32)
  params = model.init(k_net, planes)["params"]
  return SLState(params=params, batch_stats={}, opt_state=optimizer.init(params), rng=k_state,
                 step=jnp.int32(0))


def _scores(logits, action):
  """Cross-entropy, top-1 and top-5 hits of the human move, per position."""
  log_p = jax.nn.log_softmax(logits)
  loss = -jnp.take_along_axis(log_p, action[:, None], axis=-1)[:, 0]
  rank = jnp.sum(logits > jnp.take_along_axis(logits, action[:, None], axis=-1), axis=-1)
  return loss, (rank < 1).astype(jnp.float32), (rank < 5).astype(jnp.float32)


def train_step(cfg, model, optimizer, config, batch_sharding, state: SLState,
               table) -> tuple[SLState, dict]:
  """One update on a fresh minibatch of training positions. Jit and donate `state`.

  Every device replays its own share of the minibatch's games (`batch_sharding`
  splits them along the data axis); parameters are replicated.
  """
  rng, k_batch = jax.random.split(state.rng)
  batch = positions.sample(cfg, table, k_batch, num_games=config.data.games_per_batch,
                           positions_per_game=config.data.positions_per_game)
  batch = jax.lax.with_sharding_constraint(batch, batch_sharding)

  def loss_fn(params):
    logits = model.apply({"params": params}, batch.planes, train=True)
    loss, top1, _ = _scores(logits, batch.action)
    l2 = config.train.weight_decay * sum(jnp.sum(p ** 2) for p in jax.tree.leaves(params))
    return jnp.mean(loss) + l2, (jnp.mean(loss), jnp.mean(top1))

  grads, (loss, top1) = jax.grad(loss_fn, has_aux=True)(state.params)
  updates, opt_state = optimizer.update(grads, state.opt_state, state.params)
  params = optax.apply_updates(state.params, updates)
  state = state.replace(params=params, opt_state=opt_state, rng=rng, step=state.step + 1)
  return state, {"loss_policy": loss, "train_top1": top1}


def validation_positions(cfg, table, config) -> positions.Batch:
  """The fixed validation positions: the same ones at every evaluation and on resume."""
  chunk = config.data.games_per_batch * config.data.positions_per_game
  sample = jax.jit(functools.partial(positions.sample, cfg, num_games=config.data.games_per_batch,
                                     positions_per_game=config.data.positions_per_game,
                                     augment=False))
  parts = []
  key = jax.random.PRNGKey(config.eval.seed)
  for i in range(-(-config.eval.num_positions // chunk)):
    b = sample(table, jax.random.fold_in(key, i))
    parts.append(b.replace(planes=b.planes.astype(jnp.uint8)))
  return jax.tree.map(lambda *x: jnp.concatenate(x)[:config.eval.num_positions], *parts)


def evaluate(model, params, batch: positions.Batch) -> dict:
  """Validation loss and top-1 / top-5 accuracy (over every action, pass included)."""
  logits = model.apply({"params": params}, batch.planes.astype(jnp.float32))
  loss, top1, top5 = _scores(logits, batch.action)
  return {"val_loss": jnp.mean(loss), "val_top1": jnp.mean(top1), "val_top5": jnp.mean(top5)}


def load_tables(cfg: go.GoConfig, config) -> tuple[positions.GameTable, positions.GameTable, dict]:
  """Training and validation games from `data.dir`, split by `data.val_from`."""
  archive = data.load(config.data.dir)
  if archive.size != cfg.size:
    raise ValueError(f"{config.data.dir} holds {archive.size}x{archive.size} games; the config "
                     f"trains on {cfg.size}x{cfg.size} (game.size)")
  train_idx, val_idx = data.split_by_date(archive, config.data.val_from)
  if config.data.max_games:
    train_idx = train_idx[:config.data.max_games]
  if not len(val_idx):
    raise ValueError(f"no validation games dated {config.data.val_from} or later in "
                     f"{config.data.dir}; set data.val_from to an earlier date")
  lengths = np.diff(archive.offsets)
  if lengths.max() > cfg.max_moves:
    raise ValueError(f"the longest game has {lengths.max()} moves; game.max_moves "
                     f"({cfg.max_moves}) must cover it")
  info = {"train_games": len(train_idx), "val_games": len(val_idx),
          "train_positions": int(lengths[train_idx].sum()),
          "val_positions": int(lengths[val_idx].sum())}
  return (jax.tree.map(jnp.asarray, positions.make_table(archive, train_idx)),
          jax.tree.map(jnp.asarray, positions.make_table(archive, val_idx)), info)


class Trainer:
  """The jitted pieces of a supervised run, built once from a config."""

  def __init__(self, config: ml_collections.ConfigDict):
    self.config = config
    self.cfg = game_config(config)
    self.model = make_model(config)
    self.optimizer = make_optimizer(config)
    self.mesh = parallel.make_mesh(config.mesh.num_devices)
    rep = parallel.replicated(self.mesh)
    init = functools.partial(init_state, self.cfg, self.model, self.optimizer)
    abstract = jax.eval_shape(init, jax.random.PRNGKey(0))
    self.abstract_state = jax.tree.map(
        lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=rep), abstract)
    self._init = jax.jit(init, out_shardings=rep)
    parallel.check_divisible(self.mesh, **{"data.games_per_batch": config.data.games_per_batch})
    self.step = jax.jit(functools.partial(train_step, self.cfg, self.model, self.optimizer, config,
                                          parallel.split_leading(self.mesh)),
                        donate_argnums=0)
    self.evaluate = jax.jit(functools.partial(evaluate, self.model))

  def init(self, seed: int) -> SLState:
    return self._init(jax.random.PRNGKey(seed))


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> SLState:
  """Trains the SL policy network, resuming from the latest good checkpoint in `workdir`."""
  os.makedirs(workdir, exist_ok=True)
  trainer = Trainer(config)
  train_table, val_table, info = load_tables(trainer.cfg, config)
  log(f"{info['train_games']:,} training games ({info['train_positions']:,} positions), "
       f"{info['val_games']:,} validation games from {config.data.val_from} "
       f"({info['val_positions']:,} positions)")
  val_batch = validation_positions(trainer.cfg, val_table, config)
  ckpt = checkpoint.Checkpointer(workdir, keep=config.checkpoint.keep)
  state, start = ckpt.restore_latest(trainer.abstract_state)
  if state is None:
    state, start = trainer.init(config.seed), 0
  else:
    log(f"resumed from the checkpoint of step {start}")
  writer = MetricWriter(workdir)
  preemption = checkpoint.Preemption()
  total, per_step = config.steps, config.data.games_per_batch * config.data.positions_per_game
  log(f"training a {config.model.layers}-layer, {config.model.filters}-filter policy network on "
       f"{trainer.cfg.features} planes, {per_step} positions per step, steps {start}..{total}")
  t_last, step_last, t_start = time.perf_counter(), start, None
  try:
    for step in range(start + 1, total + 1):
      state, metrics = trainer.step(state, train_table)
      if step == start + 1:
        jax.block_until_ready(state)
        t_start, t_last, step_last = time.perf_counter(), time.perf_counter(), step
      evaluating = config.eval.every and (step % config.eval.every == 0 or step == total)
      saving = step % config.checkpoint.every == 0 or step == total
      if not (step % config.log_every == 0 or evaluating or saving):
        continue
      metrics = {k: float(v) for k, v in parallel.to_host(metrics).items()}
      check_finite(metrics, step)
      now = time.perf_counter()
      speed = (step - step_last) * per_step / max(now - t_last, 1e-9) if step > step_last else 0.0
      t_last, step_last = now, step
      metrics["positions_per_s"] = speed
      metrics["learning_rate"] = float(learning_rate(config)(step))
      if evaluating:
        metrics.update({k: float(v) for k, v in parallel.to_host(
            trainer.evaluate(state.params, val_batch)).items()})
      writer.write(step, metrics)
      elapsed = now - (t_start or now)
      eta = elapsed / max(step - start - 1, 1) * (total - step)
      speed_text = f"{speed:,.0f} pos/s" if step > start + 1 else "compiling"
      line = (f"step {step}/{total} | {speed_text} | loss {metrics['loss_policy']:.3f} "
              f"top1 {metrics['train_top1']:.3f} | lr {metrics['learning_rate']:.2g}")
      if evaluating:
        line += (f" | val loss {metrics['val_loss']:.3f} top1 {metrics['val_top1']:.3f} "
                 f"top5 {metrics['val_top5']:.3f}")
      log(f"{line} | ETA {format_eta(eta)}")
      if checkpoint.save_if_due(ckpt, preemption, step, state, config, due=saving, unit="step"):
        break
  finally:
    ckpt.close()
    writer.close()
    preemption.restore()
  return state

