"""AlphaGo Zero training: the fused on-device iteration and the loop around it.

One jitted `iteration(state) -> (state, metrics)` does all the work of an
iteration on device: B games advance T searched moves (games that end are
scored and restarted), the positions enter the replay buffer with their game
results, then K minibatch updates run, each sample under a random one of the 8
board symmetries. The training state is donated to it; only a small dict of
scalar metrics comes back to the host.
"""

import functools
import os
import time
from typing import Any

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax
from flax import struct
from jax.sharding import PartitionSpec

from agz_jax import arena, checkpoint, go, parallel, replay, sgf
from agz_jax.metrics import MetricWriter, check_finite, log, progress_line
from agz_jax.nets import AlphaZeroNet
from agz_jax.selfplay import Games, new_games, selfplay


@struct.dataclass
class TrainState:
  """Everything training needs to continue after a restart.

  Attributes:
    params: network parameters.
    batch_stats: BatchNorm running statistics.
    opt_state: optimizer state.
    games: [B] self-play games in progress.
    buffer: the replay buffer ([B, R] positions).
    rng: PRNG key; each iteration folds in its number.
    iteration: [] int32, iterations done.
    reference: variables of the last evaluated (or, with gating, the best)
      network, the opponent of the next evaluation match.
    elo: [] float32, the current network's Elo relative to the first network.
  """

  params: Any
  batch_stats: Any
  opt_state: Any
  games: Games
  buffer: replay.ReplayBuffer
  rng: jax.Array
  iteration: jax.Array
  reference: Any
  elo: jax.Array


def game_config(config: ml_collections.ConfigDict) -> go.GoConfig:
  g = config.game
  return go.GoConfig(size=g.size, komi=g.komi, history=g.history, max_moves=g.max_moves,
                     features=g.features)


def compute_dtype(config: ml_collections.ConfigDict):
  """The network's compute dtype named by model.dtype."""
  dtypes = {"float32": jnp.float32, "bfloat16": jnp.bfloat16}
  if config.model.dtype not in dtypes:
    raise ValueError(f"model.dtype must be one of {sorted(dtypes)}, got {config.model.dtype!r}")
  return dtypes[config.model.dtype]


def make_model(config: ml_collections.ConfigDict) -> AlphaZeroNet:
  return AlphaZeroNet(blocks=config.model.blocks, channels=config.model.channels,
                      value_hidden=config.model.value_hidden, dtype=compute_dtype(config))


def make_optimizer(config: ml_collections.ConfigDict) -> optax.GradientTransformation:
  """SGD with momentum and a step schedule (AGZ), or Adam; L2 is in the loss."""
  t = config.train
  schedule = optax.piecewise_constant_schedule(
      t.learning_rate, {int(b): t.lr_decay for b in t.lr_boundaries})
  if t.optimizer == "sgd":
    return optax.sgd(schedule, momentum=t.momentum)
  if t.optimizer == "adam":
    return optax.adam(schedule)
  raise ValueError(f"train.optimizer must be 'sgd' or 'adam', got {t.optimizer!r}")


def search_kwargs(search: ml_collections.ConfigDict) -> dict:
  return dict(algorithm=search.algorithm, num_simulations=search.num_simulations,
              max_num_considered_actions=search.max_num_considered_actions,
              gumbel_scale=search.gumbel_scale, dirichlet_alpha=search.dirichlet_alpha,
              dirichlet_fraction=search.dirichlet_fraction, pb_c_init=search.pb_c_init,
              pb_c_base=search.pb_c_base)


def selfplay_search_kwargs(config: ml_collections.ConfigDict) -> dict:
  return dict(search_kwargs(config.search), min_pass_moves=config.selfplay.min_pass_moves)


def init_state(config, model, optimizer, rng_key) -> TrainState:
  """A fresh training state (jit it with out_shardings to build it sharded)."""
  cfg = game_config(config)
  k_net, k_games, k_state = jax.random.split(rng_key, 3)
  planes = jnp.zeros((1, cfg.size, cfg.size, cfg.num_planes), jnp.float32)
  variables = model.init(k_net, planes, train=False)
  params, batch_stats = variables["params"], variables["batch_stats"]
  b = config.selfplay.num_games
  return TrainState(
      params=params, batch_stats=batch_stats, opt_state=optimizer.init(params),
      games=new_games(cfg, k_games, b, no_resign_fraction=config.selfplay.no_resign_fraction),
      buffer=replay.empty(cfg, b, config.replay.rows_per_game),
      rng=k_state, iteration=jnp.int32(0),
      reference={"params": params, "batch_stats": batch_stats}, elo=jnp.float32(0))


def loss_fn(model, weight_decay, params, batch_stats, planes, policy, value_target, weight):
  """AlphaGo Zero's loss (z - v)^2 - pi . log p + c ||theta||^2, weighted per sample."""
  (logits, value), new_vars = model.apply({"params": params, "batch_stats": batch_stats}, planes,
                                          train=True, mutable=["batch_stats"])
  total = jnp.maximum(jnp.sum(weight), 1.0)
  log_p = jax.nn.log_softmax(logits)
  value_loss = jnp.sum(weight * (value_target - value) ** 2) / total
  policy_loss = jnp.sum(weight * -jnp.sum(policy * log_p, axis=-1)) / total
  l2 = weight_decay * sum(jnp.sum(p ** 2) for p in jax.tree.leaves(params))
  entropy = jnp.sum(weight * -jnp.sum(jnp.exp(log_p) * log_p, axis=-1)) / total
  aux = {"loss_value": value_loss, "loss_policy": policy_loss, "loss_l2": l2,
         "policy_entropy": entropy}
  return value_loss + policy_loss + l2, (aux, new_vars["batch_stats"])


def _augment(planes, policy, rng_key):
  """Each sample under its own random board symmetry."""
  k = jax.random.randint(rng_key, (planes.shape[0],), 0, go.NUM_SYMMETRIES)
  return jax.vmap(go.transform_planes)(planes, k), jax.vmap(go.transform_policy)(policy, k)


def iteration(config, model, optimizer, state: TrainState,
              mesh=None) -> tuple[TrainState, dict, dict]:
  """One iteration: T self-play steps on B games, then K updates. Jit and donate `state`.

  With a mesh, every device plays its own shard of the games without talking
  to the others (shard_map); a game's randomness comes from its global index,
  so the games are the same on any number of devices. The updates run on the
  whole sharded minibatch (gradients are averaged over the devices).

  Returns:
    (state, metrics: dict of [] scalars, trace: dict of [T, S] arrays, the moves
    of the first S = log.sgf_slots game slots for the SGF sample).
  """
  cfg = game_config(config)
  sp, tr = config.selfplay, config.train
  apply_fn = lambda v, x: model.apply(v, x, train=False)
  key = jax.random.fold_in(state.rng, state.iteration)
  k_play, k_train = jax.random.split(key)
  variables = {"params": state.params, "batch_stats": state.batch_stats}
  if config.eval.gating:
    variables = state.reference  # AGZ: self-play by the best network so far
  play = functools.partial(
      selfplay, cfg, apply_fn, num_steps=sp.steps_per_iteration,
      search=selfplay_search_kwargs(config), temperature_moves=sp.temperature_moves,
      resign_threshold=sp.resign_threshold, resign_min_moves=sp.resign_min_moves,
      no_resign_fraction=sp.no_resign_fraction)
  games, records = parallel.per_shard(
      mesh, lambda v, g, k, first_game: play(v, g, k, first_game=first_game), games_arg=1,
      out_specs=(PartitionSpec(parallel.DATA), PartitionSpec(None, parallel.DATA)))(
          variables, state.games, k_play)
  buffer = replay.add(state.buffer, records)

  grad_fn = jax.value_and_grad(functools.partial(loss_fn, model, tr.weight_decay), has_aux=True)

  def update(carry, k):
    params, batch_stats, opt_state = carry
    k_sample, k_sym = jax.random.split(k)
    planes, policy, target, weight = replay.sample(buffer, k_sample, tr.batch_size)
    planes, policy = _augment(planes, policy, k_sym)
    (_, (aux, batch_stats)), grads = grad_fn(params, batch_stats, planes, policy, target, weight)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return (optax.apply_updates(params, updates), batch_stats, opt_state), aux

  ready = replay.num_ready(buffer)
  carry = (state.params, state.batch_stats, state.opt_state)
  keys = jax.random.split(k_train, tr.updates_per_iteration)
  # XLA on CPU runs convolution gradients ~25x slower inside a loop or a
  # conditional than outside, so there the K updates are unrolled, and while the
  # buffer fills they run anyway and their result is dropped (a select, not a
  # lax.cond).
  trained, aux = jax.lax.scan(update, carry, keys, unroll=jax.default_backend() == "cpu")
  enough = ready >= config.replay.min_ready
  params, batch_stats, opt_state = jax.tree.map(lambda new, old: jnp.where(enough, new, old),
                                                trained, carry)

  ended = records.ended
  games_done = jnp.sum(ended)
  per_game = lambda x: jnp.sum(jnp.where(ended, x, 0)) / jnp.maximum(games_done, 1)
  metrics = {k: jnp.mean(v) for k, v in aux.items()}
  metrics.update(
      games=games_done.astype(jnp.float32),
      game_length=per_game(records.length.astype(jnp.float32)),
      black_win_rate=per_game((records.result > 0).astype(jnp.float32)),
      resigned=jnp.sum(records.resigned).astype(jnp.float32),
      resign_checked=jnp.sum(records.resign_checked).astype(jnp.float32),
      false_resign=jnp.sum(records.false_resign).astype(jnp.float32),
      root_value=jnp.mean(records.root_value),
      # Share of searched positions the network evaluated again (the others'
      # evaluations came from the previous search).
      root_evaluated=jnp.mean(records.root_evaluated.astype(jnp.float32)),
      buffer_ready=ready.astype(jnp.float32),
      trained=enough.astype(jnp.float32))
  new_state = state.replace(params=params, batch_stats=batch_stats, opt_state=opt_state,
                            games=games, buffer=buffer, iteration=state.iteration + 1)
  # The moves of the first few game slots, for the SGF sample of self-play games.
  slots = config.log.sgf_slots
  trace = {k: getattr(records, k)[:, :slots] for k in
           ("action", "to_play", "root_value", "ended", "result", "resigned")}
  return new_state, metrics, trace


class Trainer:
  """The jitted, sharded pieces of a training run, built once from a config."""

  def __init__(self, config: ml_collections.ConfigDict):
    self.config = config
    self.cfg = game_config(config)
    self.model = make_model(config)
    self.optimizer = make_optimizer(config)
    rows, needed = config.replay.rows_per_game, self.cfg.max_moves + config.selfplay.steps_per_iteration
    if rows < needed:
      raise ValueError(
          f"replay.rows_per_game ({rows}) must be at least game.max_moves + "
          f"selfplay.steps_per_iteration ({needed}): a game's early positions would be "
          f"overwritten before its result is known, and training would see only endgames")
    self.mesh = parallel.make_mesh(config.mesh.num_devices)
    parallel.check_divisible(self.mesh, **{"selfplay.num_games": config.selfplay.num_games,
                                           "train.batch_size": config.train.batch_size})
    init = functools.partial(init_state, config, self.model, self.optimizer)
    abstract = jax.eval_shape(init, jax.random.PRNGKey(0))
    self.shardings = state_shardings(self.mesh, abstract, config.selfplay.num_games)
    self.abstract_state = jax.tree.map(
        lambda a, s: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s), abstract, self.shardings)
    self._init = jax.jit(init, out_shardings=self.shardings)
    self.iteration = jax.jit(
        functools.partial(iteration, config, self.model, self.optimizer, mesh=self.mesh),
        in_shardings=(self.shardings,),
        out_shardings=(self.shardings, None, parallel.replicated(self.mesh)), donate_argnums=0)
    self.evaluate = jax.jit(
        functools.partial(arena.evaluate_and_rate, self.cfg, self.model, config),
        in_shardings=(self.shardings,), out_shardings=(self.shardings, None), donate_argnums=0)

  def init(self, seed: int) -> TrainState:
    return self._init(jax.random.PRNGKey(seed))


def state_shardings(mesh, abstract: TrainState, num_games: int):
  """Games and replay buffer split along their game axis; everything else replicated."""
  split, rep = parallel.split_leading(mesh), parallel.replicated(mesh)
  leading = lambda tree: jax.tree.map(lambda _: split, tree)
  shardings = jax.tree.map(lambda _: rep, abstract)
  buffer = jax.tree.map(lambda x: split if x.ndim and x.shape[0] == num_games else rep,
                        abstract.buffer)
  return shardings.replace(games=leading(abstract.games), buffer=buffer)


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> TrainState:
  """Trains from a config, resuming from the latest good checkpoint in `workdir`.

  Returns:
    The final training state.
  """
  os.makedirs(workdir, exist_ok=True)
  trainer = Trainer(config)
  # Checkpoint 0, the untrained network, stays: the yardstick of a learning check.
  ckpt = checkpoint.Checkpointer(workdir, keep=config.checkpoint.keep, keep_steps=(0,))
  state, start = ckpt.restore_latest(trainer.abstract_state)
  if state is None:
    state = trainer.init(config.seed)
    start = 0
    ckpt.save(0, state, config)
  else:
    log(f"resumed from the checkpoint of iteration {start}")
  writer = MetricWriter(workdir)
  sgf_writer = sgf.SelfPlayWriter(os.path.join(workdir, "sgf"), trainer.cfg,
                                  every=config.log.sgf_every, fresh=start == 0)
  preemption = checkpoint.Preemption()
  total = config.iterations
  positions = config.selfplay.num_games * config.selfplay.steps_per_iteration
  log(f"training {config.model.blocks}x{config.model.channels} network on "
       f"{trainer.cfg.size}x{trainer.cfg.size}, {trainer.mesh.devices.size} device(s), "
       f"iterations {start}..{total}")
  times = []
  try:
    for it in range(start + 1, total + 1):
      t0 = time.perf_counter()
      state, metrics, trace = trainer.iteration(state)
      sgf_writer.add(it, parallel.to_host(trace))
      metrics = {k: float(v) for k, v in parallel.to_host(metrics).items()}
      if not metrics["trained"]:  # still filling the buffer: no losses to report
        metrics = {k: v for k, v in metrics.items() if not k.startswith(_TRAIN_ONLY)}
      seconds = time.perf_counter() - t0
      times.append(seconds)
      metrics["positions_per_s"] = positions / seconds
      metrics["seconds_per_iteration"] = seconds
      check_finite(metrics, it)
      if config.eval.every and it % config.eval.every == 0:
        state, match = trainer.evaluate(state)
        metrics.update({k: float(v) for k, v in parallel.to_host(match).items()})
      writer.write(it, metrics)
      recent = np.median(times[1:][-5:]) if len(times) > 1 else seconds  # not the compiling one
      log(progress_line(it, total, metrics, seconds, recent * (total - it),
                         min_ready=config.replay.min_ready, compiled=it == start + 1))
      if "eval_win_rate" in metrics:
        log(f"  eval: win rate {metrics['eval_win_rate']:.2f} against the previous network, "
             f"Elo {metrics['elo']:+.0f}")
      if checkpoint.save_if_due(ckpt, preemption, it, state, config, unit="iteration",
                                due=it % config.checkpoint.every == 0 or it == total):
        break
  finally:
    ckpt.close()
    writer.close()
    preemption.restore()
  return state


_TRAIN_ONLY = ("loss_", "policy_entropy")

