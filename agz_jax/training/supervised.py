"""What the supervised tasks share (sl_policy, sl_dual, value, rollout_policy; rl_policy's
update step): the state of a run, the data-parallel step, the human games' tables and their
fixed validation positions, the evaluations and progress lines.
"""

import functools

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax
from flax import struct
from jax.sharding import PartitionSpec, SingleDeviceSharding

from agz_jax import data, game as game_lib, go, nets, parallel
from agz_jax.data import positions
from agz_jax.metrics import format_eta
from agz_jax.training import optim
from agz_jax.training.loop import Task


@struct.dataclass
class SLState:
  """Everything a supervised run needs to resume.

  Attributes:
    params: the policy network's parameters.
    batch_stats: the network's batch-normalisation statistics ({} for networks
      without normalisation; kept so that checkpoints hold the same `network`
      item as self-play runs).
    opt_state: the optimizer's state.
    rng: PRNG key for the next step.
    step: [] int32, updates done.
  """

  params: dict
  batch_stats: dict
  opt_state: optax.OptState
  rng: jax.Array
  step: jax.Array


def init_state(cfg: go.GoConfig, encoding: str, model, optimizer, rng_key) -> SLState:
  k_net, k_state = jax.random.split(rng_key)
  planes = jnp.zeros((1,) + go.planes_shape(cfg, encoding), jnp.float32)
  variables = model.init(k_net, planes)
  params = variables["params"]
  return SLState(params=params, batch_stats=variables.get("batch_stats", {}),
                 opt_state=optimizer.init(params), rng=k_state, step=jnp.int32(0))


def policy_scores(logits, action):
  """Cross-entropy, top-1 and top-5 hits of the human move, per position: ([B],) * 3."""
  log_p = jax.nn.log_softmax(logits)
  loss = -jnp.take_along_axis(log_p, action[:, None], axis=-1)[:, 0]
  rank = jnp.sum(logits > jnp.take_along_axis(logits, action[:, None], axis=-1), axis=-1)
  return loss, (rank < 1).astype(jnp.float32), (rank < 5).astype(jnp.float32)


def cross_entropy_gradients(config, params, loss_terms):
  """(gradients, metrics) of a supervised task's loss.

  Args:
    loss_terms: params -> (cross-entropy [B], top-1 hits [B]); the loss is
      their mean cross-entropy plus the L2 penalty of train.weight_decay.
  """
  def loss_fn(params):
    loss, top1 = loss_terms(params)
    l2 = optim.l2_penalty(params, config.train.weight_decay)
    return jnp.mean(loss) + l2, (jnp.mean(loss), jnp.mean(top1))

  grads, (loss, top1) = jax.grad(loss_fn, has_aux=True)(params)
  return grads, {"loss_policy": loss, "train_top1": top1}


def apply_gradients(optimizer, state, rng, grads, metrics):
  """The state after one optimizer step (its next key `rng`), and the metrics.

  A network with batch normalisation passes its new running statistics as
  metrics["batch_stats"] (averaged over devices like the gradients); they
  replace the state's and leave the metrics.
  """
  metrics = dict(metrics)
  batch_stats = metrics.pop("batch_stats", state.batch_stats)
  updates, opt_state = optimizer.update(grads, state.opt_state, state.params)
  params = optax.apply_updates(state.params, updates)
  return state.replace(params=params, batch_stats=batch_stats, opt_state=opt_state, rng=rng,
                       step=state.step + 1), metrics


class DataParallelStep:
  """One supervised update, every device computing the gradients of its share of the minibatch.

  Call it as step(state, *inputs) -> (state, metrics); the state is replicated
  and is consumed. On one device, accelerators and pods the shares' gradients
  are averaged by an all-reduce inside one jitted step. Several CPU devices of
  one process (parallel.collectives_deadlock) instead pass their gradients to
  the first device, which averages them and updates the state, and the state
  is then copied to every device: no collective at all, for a few copies of
  the parameters per step.

  Args:
    mesh: the 'data' mesh.
    optimizer: the optax optimizer.
    gradients: gradients(params, key, *inputs, shard=i) -> (grads, metrics)
      of device i's share of the minibatch drawn with `key`.
    with_state: give `gradients` the whole state instead of its params (a task
      whose gradients read more of it: the RL policy's opponent pool).
  """

  def __init__(self, mesh, optimizer, gradients, with_state: bool = False):
    self.mesh = mesh
    self.with_state = with_state
    self.by_copies = parallel.collectives_deadlock(mesh)
    if self.by_copies:
      def rows(params, key, *inputs, shard):
        return jax.tree.map(lambda x: x[None], gradients(params, key, *inputs, shard=shard))

      def apply_mean(state, rng, stacked):
        return apply_gradients(optimizer, state, rng, *jax.tree.map(lambda x: jnp.mean(x, 0),
                                                                     stacked))

      self._gradients = jax.jit(parallel.on_every_shard(mesh, rows, PartitionSpec(parallel.DATA)))
      self._apply = jax.jit(apply_mean, donate_argnums=0)
      self._split = jax.jit(lambda key: tuple(jax.random.split(key)))
      self._first = SingleDeviceSharding(mesh.devices.flat[0])
    else:
      def whole(state, *inputs, shard):
        rng, key = jax.random.split(state.rng)
        given = state if with_state else state.params
        grads, metrics = jax.lax.pmean(gradients(given, key, *inputs, shard=shard),
                                       parallel.DATA)
        return apply_gradients(optimizer, state, rng, grads, metrics)

      self._step = jax.jit(parallel.on_every_shard(mesh, whole), donate_argnums=0)

  def __call__(self, state, *inputs):
    if not self.by_copies:
      return self._step(state, *inputs)
    rng, key = self._split(state.rng)
    stacked = self._gradients(state if self.with_state else state.params, key, *inputs)
    state, metrics = self._apply(*jax.device_put((state, rng, stacked), self._first))
    return jax.device_put(state, parallel.replicated(self.mesh)), metrics

  def programs(self, state, *inputs) -> list[str]:
    """The compiled programs of one step, as HLO text (to inspect their collectives)."""
    if not self.by_copies:
      return [self._step.lower(state, *inputs).compile().as_text()]
    rng, key = self._split(state.rng)
    given = state if self.with_state else state.params
    stacked = jax.eval_shape(self._gradients, given, key, *inputs)
    first = jax.device_put((state, rng), self._first)
    stacked = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=self._first),
                           stacked)
    return [self._gradients.lower(given, key, *inputs).compile().as_text(),
            self._apply.lower(*first, stacked).compile().as_text()]


def validation_positions(cfg, table, config) -> positions.Batch:
  """The fixed validation positions: the same ones at every evaluation and on resume."""
  chunk = config.data.games_per_batch * config.data.positions_per_game
  sample = jax.jit(functools.partial(positions.sample, cfg, encoding=config.model.encoding,
                                     num_games=config.data.games_per_batch,
                                     positions_per_game=config.data.positions_per_game,
                                     augment=False))
  parts = []
  key = jax.random.PRNGKey(config.eval.seed)
  for i in range(-(-config.eval.num_positions // chunk)):
    b = sample(table, jax.random.fold_in(key, i))
    parts.append(b.replace(planes=b.planes.astype(jnp.uint8)))
  return jax.tree.map(lambda *x: jnp.concatenate(x)[:config.eval.num_positions], *parts)


def check_archive(cfg: go.GoConfig, config, archive: data.GameArchive) -> None:
  """Raises ValueError when the imported games do not fit the config's board or max_moves."""
  if archive.size != cfg.size:
    raise ValueError(f"{config.data.dir} holds {archive.size}x{archive.size} games; the config "
                     f"trains on {cfg.size}x{cfg.size} (game.size)")
  lengths = archive.lengths()
  if len(lengths) and lengths.max() > cfg.max_moves:
    raise ValueError(f"the longest game has {lengths.max()} moves; game.max_moves "
                     f"({cfg.max_moves}) must cover it")


def load_tables(cfg: go.GoConfig, config) -> tuple[positions.GameTable, positions.GameTable, dict]:
  """Training and validation games from `data.dir`, split by `data.val_from`."""
  archive = data.load(config.data.dir)
  check_archive(cfg, config, archive)
  train_idx, val_idx = data.split_by_date(archive, config.data.val_from)
  if config.data.max_games:
    train_idx = train_idx[:config.data.max_games]
  if not len(val_idx):
    raise ValueError(f"no validation games dated {config.data.val_from} or later in "
                     f"{config.data.dir}; set data.val_from to an earlier date")
  lengths = np.diff(archive.offsets)
  info = {"train_games": len(train_idx), "val_games": len(val_idx),
          "train_positions": int(lengths[train_idx].sum()),
          "val_positions": int(lengths[val_idx].sum())}
  return (jax.tree.map(jnp.asarray, positions.make_table(archive, train_idx)),
          jax.tree.map(jnp.asarray, positions.make_table(archive, val_idx)), info)


class SupervisedTask(Task):
  """What the supervised tasks share: evaluations every `eval.every` steps, progress lines."""

  unit = "step"

  def _build(self, config: ml_collections.ConfigDict) -> None:
    """What every supervised task has: steps, rules, network, optimizer with AlphaGo's halving
    schedule, mesh and a replicated state (`init_state`)."""
    self.total = config.steps
    self.cfg = game_lib.make(config.game).cfg
    self.model = nets.make(config.model)
    self.schedule = optim.halving_schedule(config.train)
    self.optimizer = optim.make_optimizer(config.train, self.schedule)
    self.mesh = parallel.make_mesh(config.mesh.num_devices)
    rep = parallel.replicated(self.mesh)
    init = functools.partial(init_state, self.cfg, config.model.encoding, self.model,
                             self.optimizer)
    abstract = jax.eval_shape(init, jax.random.PRNGKey(0))
    self.abstract_state = jax.tree.map(
        lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=rep), abstract)
    self._init = jax.jit(init, out_shardings=rep)

  def init(self, seed: int) -> SLState:
    return self._init(jax.random.PRNGKey(seed))

  def _evaluating(self, i: int) -> bool:
    every = self.config.eval.every
    return bool(every) and (i % every == 0 or i == self.total)

  def reporting(self, i: int) -> bool:
    return i % self.config.log_every == 0 or self._evaluating(i)

  def lines(self, i: int, metrics: dict, seconds: float, eta: float, compiling: bool) -> list[str]:
    speed = "compiling" if compiling else f"{metrics['positions_per_s']:,.0f} pos/s"
    line = (f"step {i}/{self.total} | {speed} | loss {metrics['loss_policy']:.3f} "
            f"top1 {metrics['train_top1']:.3f} | lr {metrics['learning_rate']:.2g}")
    if "val_top1" in metrics:
      line += (f" | val loss {metrics['val_loss']:.3f} top1 {metrics['val_top1']:.3f} "
               f"top5 {metrics['val_top5']:.3f}")
    return [f"{line} | ETA {format_eta(eta)}"]
