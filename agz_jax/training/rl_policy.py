"""AlphaGo's reinforcement stage: the RL policy p_rho by policy gradient (task "rl_policy").

The policy starts from an SL checkpoint (`rl.init_from`). Each iteration plays
`rl.games` games on device between the current policy and an opponent drawn at
random from a pool of its earlier snapshots (the current policy joins the pool
every `rl.pool_every` iterations; the SL policy is its first member). The
learner plays black in half the games and white in the other half; every move
is sampled from the mover's policy restricted to sensible moves (legal, not
filling one's own eye), and a player with no sensible move passes; games run to
the end (two passes, or `rl.max_moves`) and are scored by Tromp-Taylor.

Then REINFORCE: the gradient of sum_t (z - b) log p(a_t | s_t) over the
learner's sampled moves, z = +1 / -1 the game's result for the learner,
baseline b = 0, averaged over the games, one optimizer step (ascent). The
distribution sampled (the sensible-moves softmax) is the one differentiated.
The learner's input planes are kept (as bytes) while the games are played, so
the update does not compute them again.

Every `eval.every` iterations the learner plays `eval.num_games` games against
the SL policy it started from (both sampling), reported as eval_win_rate.
"""

import functools

import jax
import jax.numpy as jnp
import ml_collections
import optax
from flax import struct

from agz_jax import checkpoint, go, nets, parallel
from agz_jax.metrics import format_eta, log
from agz_jax.policy_games import Games, masked_log_policy, play_games
from agz_jax.training import optim
from agz_jax.training.loop import Task
from agz_jax.training.supervised import DataParallelStep


@struct.dataclass
class RLState:
  """Everything an RL run needs to resume.

  Attributes:
    params: the learner's parameters.
    batch_stats: {} (as every policy checkpoint).
    opt_state: the optimizer's state.
    rng: PRNG key of the next iteration.
    step: [] int32, iterations done.
    pool: the opponents' parameters, stacked: [pool_size, ...] per leaf.
    pool_count: [] int32, snapshots put in the pool so far (the pool holds the
      last pool_size of them; slot 0 holds the SL policy until it is replaced).
    start: the SL policy's parameters (the yardstick of the evaluations).
  """

  params: dict
  batch_stats: dict
  opt_state: optax.OptState
  rng: jax.Array
  step: jax.Array
  pool: dict
  pool_count: jax.Array
  start: dict


def reinforce_gradients(model, params, games: Games, *, chunk: int, unroll: bool | None = None):
  """(loss, gradients) of REINFORCE over the learner's sampled moves:
  loss = -(1/G) sum_t z log p(a_t | s_t), computed `chunk` plies at a time (a batch of whole
  games does not fit one forward pass) up to the longest game (on a CPU: up to the buffer's
  end), gradients summed over the chunks.

  Args:
    unroll: every chunk in straight-line code (None: on a CPU) instead of a loop that stops
      after the longest game.
  """
  games = jax.tree.map(jnp.asarray, games)
  rows, half = games.action.shape
  num_games = 2 * half
  z_first, z_second = games.z[:half], games.z[half:]

  def chunk_loss(p, c):
    t = c * chunk + jnp.arange(chunk)
    t_safe = jnp.minimum(t, rows - 1)
    planes = games.planes[t_safe].astype(jnp.float32)
    logits = model.apply({"params": p}, planes.reshape((chunk * half,) + planes.shape[2:]))
    log_p = masked_log_policy(logits.reshape(chunk, half, -1), games.sensible[t_safe])
    chosen = jnp.take_along_axis(log_p, games.action[t_safe][..., None], axis=-1)[..., 0]
    z = jnp.where((t % 2 == 0)[:, None], z_first[None], z_second[None])
    use = games.sampled[t_safe] & (t < rows)[:, None]
    return -jnp.sum(jnp.where(use, z * chosen, 0.0)) / num_games

  def add(carry, c):
    loss, grads = carry
    value, g = jax.value_and_grad(chunk_loss)(params, c)
    return (loss + value, jax.tree.map(jnp.add, grads, g))

  zeros = (jnp.float32(0.0), jax.tree.map(jnp.zeros_like, params))
  if unroll or (unroll is None and jax.default_backend() == "cpu"):
    # XLA:CPU computes convolution gradients far slower inside a while loop or a cond than
    # in straight-line code (bench/rl_update.py measures it): every chunk up
    # to rows, unrolled, the ones after the longest game included.
    (loss, grads), _ = jax.lax.scan(lambda carry, c: (add(carry, c), None), zeros,
                                    jnp.arange((rows + chunk - 1) // chunk), unroll=True)
    return loss, grads
  chunks = (jnp.max(games.length) + chunk - 1) // chunk
  _, (loss, grads) = jax.lax.while_loop(lambda carry: carry[0] < chunks,
                                        lambda carry: (carry[0] + 1, add(carry[1], carry[0])),
                                        (jnp.int32(0), zeros))
  return loss, grads


def gradients(cfg, encoding, model, config, shards: int, state: RLState, key, *, shard=0):
  """(gradients, metrics) of device `shard`'s share of an iteration's games against one
  opponent drawn from the pool with `key` (the same on every device)."""
  k_opponent, k_games = jax.random.split(key)
  filled = jnp.minimum(state.pool_count, config.rl.pool_size)
  slot = jax.random.randint(k_opponent, (), 0, filled)
  opponent = jax.tree.map(lambda p: p[slot], state.pool)
  games = play_games(cfg, encoding, model, state.params, opponent,
                     jax.random.fold_in(k_games, shard), num_games=config.rl.games // shards,
                     record=True)
  _, grads = reinforce_gradients(model, state.params, games, chunk=config.rl.chunk)
  if config.train.weight_decay:
    grads = jax.tree.map(lambda g, p: g + 2 * config.train.weight_decay * p, grads, state.params)
  metrics = {"win_rate": jnp.mean((games.z > 0) + 0.5 * (games.z == 0)),
             "game_length": jnp.mean(games.length.astype(jnp.float32)),
             "policy_entropy": games.entropy, "opponent": slot.astype(jnp.float32)}
  return grads, metrics


def join_pool(config, state: RLState) -> RLState:
  """The current policy joins the pool (replacing the oldest snapshot once it is full)."""
  slot = state.pool_count % config.rl.pool_size
  pool = jax.tree.map(lambda q, p: q.at[slot].set(p), state.pool, state.params)
  return state.replace(pool=pool, pool_count=state.pool_count + 1)


def evaluate(cfg, encoding, model, config, state: RLState, key) -> dict:
  """The learner against the SL policy it started from, both sampling."""
  games = play_games(cfg, encoding, model, state.params, state.start, key,
                     num_games=config.eval.num_games, record=False)
  return {"eval_win_rate": jnp.mean((games.z > 0) + 0.5 * (games.z == 0)),
          "eval_game_length": jnp.mean(games.length.astype(jnp.float32))}


def check_start(config, sl_config) -> None:
  """Raises a ValueError naming the first setting where the run's config and its SL
  checkpoint differ (the RL policy is that network, on that game)."""
  if sl_config.model.kind != "policy":
    raise ValueError(f"rl.init_from {config.rl.init_from!r} holds a {sl_config.model.kind!r} "
                     "network; the RL policy starts from an SL policy network (task sl_policy)")
  for section, keys in (("model", ("kind", "encoding", "layers", "filters")),
                        ("game", ("size", "komi"))):
    for k in keys:
      mine, theirs = config[section][k], sl_config[section][k]
      if mine != theirs:
        raise ValueError(f"{section}.{k} is {mine!r} but the SL checkpoint "
                         f"{config.rl.init_from!r} has {theirs!r}: set --config.{section}.{k}="
                         f"{theirs!r}")


class RLPolicyTask(Task):
  """The jitted pieces of an RL policy run, built once from a config."""

  unit = "iteration"

  def __init__(self, config: ml_collections.ConfigDict):
    super().__init__(config)
    rl = config.rl
    if not rl.init_from:
      raise ValueError("rl.init_from must name the SL policy checkpoint to start from "
                       "(--config.rl.init_from=workdir/sl_policy_cpu)")
    if rl.games < 2 or rl.games % 2:
      raise ValueError(f"rl.games must be even and positive (half with each colour), got {rl.games}")
    if config.eval.every and config.eval.num_games % 2:
      raise ValueError(f"eval.num_games must be even, got {config.eval.num_games}")
    if rl.pool_size < 1 or rl.pool_every < 1 or rl.chunk < 1:
      raise ValueError("rl.pool_size, rl.pool_every and rl.chunk must be at least 1")
    sl_config, variables = checkpoint.load_network(rl.init_from)
    check_start(config, sl_config)
    self.total = config.iterations
    self.cfg = go.GoConfig(size=config.game.size, komi=config.game.komi,
                           history=config.game.history, max_moves=rl.max_moves)
    self.encoding = config.model.encoding
    self.items_per_unit = rl.games  # games per iteration: "positions/s" counts games here
    self.model = nets.make(config.model)
    self.optimizer = optim.make_optimizer(config.train, optim.step_schedule(config.train))
    self.mesh = parallel.make_mesh(config.mesh.num_devices)
    parallel.check_divisible(self.mesh, **{"rl.games": rl.games})
    if (rl.games // self.mesh.devices.size) % 2:
      raise ValueError(f"rl.games ({rl.games}) must give every device an even number of games "
                       f"({self.mesh.devices.size} devices)")
    sl_params = jax.tree.map(jnp.asarray, variables["params"])
    rep = parallel.replicated(self.mesh)

    def init(key):
      pool = jax.tree.map(lambda p: jnp.zeros((rl.pool_size,) + p.shape, p.dtype).at[0].set(p),
                          sl_params)
      return RLState(params=sl_params, batch_stats={}, opt_state=self.optimizer.init(sl_params),
                     rng=key, step=jnp.int32(0), pool=pool, pool_count=jnp.int32(1),
                     start=sl_params)

    abstract = jax.eval_shape(init, jax.random.PRNGKey(0))
    self.abstract_state = jax.tree.map(
        lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=rep), abstract)
    self._init = jax.jit(init, out_shardings=rep)
    self.train = DataParallelStep(self.mesh, self.optimizer, functools.partial(
        gradients, self.cfg, self.encoding, self.model, config, self.mesh.devices.size),
        with_state=True)
    self._join = jax.jit(functools.partial(join_pool, config), donate_argnums=0)
    self._evaluate = jax.jit(functools.partial(evaluate, self.cfg, self.encoding, self.model,
                                               config))

  def init(self, seed: int) -> RLState:
    return self._init(jax.random.PRNGKey(seed))

  def begin(self, workdir: str, start: int) -> None:
    c = self.config
    log(f"RL policy from {c.rl.init_from} ({c.model.layers}x{c.model.filters}, "
        f"{self.encoding}), {c.rl.games} games per iteration against a pool of "
        f"{c.rl.pool_size} (joined every {c.rl.pool_every}), iterations {start}..{self.total}")

  def step(self, state: RLState, i: int):
    state, metrics = self.train(state)
    if i % self.config.rl.pool_every == 0:
      state = self._join(state)
    return state, metrics

  def reporting(self, i: int) -> bool:
    return i % self.config.log_every == 0 or self._evaluating(i)

  def _evaluating(self, i: int) -> bool:
    every = self.config.eval.every
    return bool(every) and (i % every == 0 or i == self.total)

  def report(self, i: int, state: RLState, metrics: dict) -> tuple[RLState, dict]:
    if self._evaluating(i):
      key = jax.random.fold_in(jax.random.PRNGKey(self.config.eval.seed), i)
      metrics.update({k: float(v) for k, v in parallel.to_host(
          self._evaluate(state, key)).items()})
    return state, metrics

  def lines(self, i: int, metrics: dict, seconds: float, eta: float, compiling: bool) -> list[str]:
    speed = "compiling" if compiling else f"{self.config.rl.games / max(seconds, 1e-9):.1f} games/s"
    line = (f"it {i}/{self.total} | {speed} | win {metrics['win_rate']:.2f} against snapshot "
            f"{int(metrics['opponent'])} | len {metrics['game_length']:.0f} | "
            f"H {metrics['policy_entropy']:.2f}")
    if "eval_win_rate" in metrics:
      line += f" | vs SL {metrics['eval_win_rate']:.2f}"
    return [f"{line} | {seconds:.1f}s/it ETA {format_eta(eta)}"]


