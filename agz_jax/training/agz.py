"""AlphaGo Zero: the fused on-device self-play + training iteration (task "selfplay").

One jitted `iteration(state) -> (state, metrics, trace)` does all the work of an
iteration on device: B games advance T searched moves (games that end are
scored and restarted), the positions enter the replay buffer with their game
results, then K minibatch updates run, each sample under a random one of the
game's symmetries. The training state is donated to it; only a small dict of
scalar metrics (and the moves of a few game slots, for SGF samples) comes back
to the host.
"""

import dataclasses
import functools
import os
from typing import Any

import jax
import jax.numpy as jnp
import ml_collections
import optax
from flax import struct
from jax.sharding import PartitionSpec

from agz_jax import arena, game as game_lib, nets, parallel, replay, search
from agz_jax.metrics import log, progress_line
from agz_jax.selfplay import Games, SelfPlayConfig, new_games, selfplay
from agz_jax.training import optim, warm_start
from agz_jax.training.loop import Task


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


def init_state(config, game, model, optimizer, rng_key) -> TrainState:
  """A fresh training state (jit it with out_shardings to build it sharded)."""
  k_net, k_games, k_state = jax.random.split(rng_key, 3)
  planes = jnp.zeros((1,) + game.planes_shape(config.model.encoding), jnp.float32)
  variables = model.init(k_net, planes, train=False)
  params, batch_stats = variables["params"], variables["batch_stats"]
  b = config.selfplay.num_games
  return TrainState(
      params=params, batch_stats=batch_stats, opt_state=optimizer.init(params),
      games=new_games(game, k_games, b, no_resign_fraction=config.selfplay.no_resign_fraction),
      buffer=replay.empty(game, config.model.encoding, b, config.replay.rows_per_game,
                          final_targets=SelfPlayConfig.from_config(config).final_targets),
      rng=k_state, iteration=jnp.int32(0),
      reference={"params": params, "batch_stats": batch_stats}, elo=jnp.float32(0))


@dataclasses.dataclass(frozen=True)
class LossWeights:
  """The weights of the loss's terms; a static jit argument.

  Attributes:
    weight_decay: c of AlphaGo Zero's L2 term.
    ownership: KataGo's ownership term, per board (divided by the points);
      0: the network has no ownership head.
    score: the score term (squared error in units of sqrt(points)); 0: no head.
    opponent_policy: the opponent's-reply policy term; 0: no head.
  """

  weight_decay: float
  ownership: float = 0.0
  score: float = 0.0
  opponent_policy: float = 0.0

  @classmethod
  def from_config(cls, config, game) -> "LossWeights":
    """From `train`'s weights, for the heads `model` switches on (the game must support them)."""
    model, tr = config.model, config.train
    heads = {"ownership": model.get("ownership_head", False),
             "score": model.get("score_head", False),
             "opponent_policy": model.get("opponent_policy_head", False)}
    for name in ("ownership", "score"):
      if heads[name] and not game.has(name):
        raise ValueError(f"model.{name}_head needs the game's {name}(), which "
                         f"{game.module.__name__} does not have: turn the head off")
    return cls(weight_decay=tr.weight_decay,
               **{name: tr[f"{name}_weight"] if on else 0.0 for name, on in heads.items()})


def loss_fn(model, weights: LossWeights, params, batch_stats, batch: replay.Sample):
  """AlphaGo Zero's loss (z - v)^2 - pi . log p + c ||theta||^2, weighted per sample,
  plus KataGo's auxiliary terms for the heads the network has.

  Each term is a weighted mean over the samples it has a target for: the
  policy over full searches, ownership and score over scored games, the
  opponent's policy over positions with a searched reply.
  """
  (logits, value, aux_out), new_vars = model.apply(
      {"params": params, "batch_stats": batch_stats}, batch.planes, train=True, aux=True,
      mutable=["batch_stats"])
  w = batch.weight

  def mean(per_sample, mask=1.0):
    return jnp.sum(w * mask * per_sample) / jnp.maximum(jnp.sum(w * mask), 1.0)

  log_p = jax.nn.log_softmax(logits)
  value_loss = mean((batch.value_target - value) ** 2)
  policy_loss = mean(-jnp.sum(batch.policy * log_p, axis=-1), batch.policy_weight)
  l2 = optim.l2_penalty(params, weights.weight_decay)
  entropy = mean(-jnp.sum(jnp.exp(log_p) * log_p, axis=-1))
  aux = {"loss_value": value_loss, "loss_policy": policy_loss, "loss_l2": l2,
         "policy_entropy": entropy}
  total = value_loss + policy_loss + l2
  if weights.ownership:
    # tanh(o) predicts the owner in [-1, 1]: cross-entropy of sigmoid(2o) against (1 + t) / 2.
    points = batch.ownership.shape[-1]
    bce = optax.sigmoid_binary_cross_entropy(2.0 * aux_out["ownership"], (1.0 + batch.ownership) / 2)
    aux["loss_ownership"] = mean(jnp.sum(bce, axis=-1) / points, batch.final_weight)
    total += weights.ownership * aux["loss_ownership"]
  if weights.score:
    scale = jnp.sqrt(jnp.float32(batch.planes.shape[1] * batch.planes.shape[2]))
    aux["loss_score"] = mean((batch.score / scale - aux_out["score"]) ** 2, batch.final_weight)
    total += weights.score * aux["loss_score"]
  if weights.opponent_policy:
    log_q = jax.nn.log_softmax(aux_out["opponent_policy"])
    aux["loss_opponent_policy"] = mean(-jnp.sum(batch.opponent_policy * log_q, axis=-1),
                                       batch.opponent_weight)
    total += weights.opponent_policy * aux["loss_opponent_policy"]
  return total, (aux, new_vars["batch_stats"])


def augment(game: game_lib.Game, batch: replay.Sample, rng_key) -> replay.Sample:
  """Each sample under its own random symmetry of the game, its planes and targets together."""
  k = jax.random.randint(rng_key, (batch.planes.shape[0],), 0, game.num_symmetries)

  def one(sample, k):
    planes, policy = game.transform(sample.planes, sample.policy, k)
    ownership = sample.ownership  # None when the buffer keeps none
    if ownership is not None:
      ownership = game.transform_points(ownership, k)
    return sample.replace(planes=planes, policy=policy, ownership=ownership,
                          opponent_policy=game.transform_actions(sample.opponent_policy, k))

  return jax.vmap(one)(batch, k)


def iteration(config, game, model, optimizer, state: TrainState,
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
  sp, tr = config.selfplay, config.train
  evaluator = search.flax_network(game, model, config.model.encoding)
  key = jax.random.fold_in(state.rng, state.iteration)
  k_play, k_train = jax.random.split(key)
  variables = {"params": state.params, "batch_stats": state.batch_stats}
  if config.eval.gating:
    variables = state.reference  # AGZ: self-play by the best network so far
  play = functools.partial(selfplay, game, evaluator, num_steps=sp.steps_per_iteration,
                           settings=SelfPlayConfig.from_config(config))
  games, records = parallel.per_shard(
      mesh, lambda v, g, k, first_game: play(v, g, k, first_game=first_game), games_arg=1,
      out_specs=(PartitionSpec(parallel.DATA), PartitionSpec(None, parallel.DATA)))(
          variables, state.games, k_play)
  buffer = replay.add(state.buffer, records)

  grad_fn = jax.value_and_grad(
      functools.partial(loss_fn, model, LossWeights.from_config(config, game)), has_aux=True)

  def update(carry, k):
    params, batch_stats, opt_state = carry
    k_sample, k_sym = jax.random.split(k)
    batch = augment(game, replay.sample(buffer, k_sample, tr.batch_size), k_sym)
    (_, (aux, batch_stats)), grads = grad_fn(params, batch_stats, batch)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return (optax.apply_updates(params, updates), batch_stats, opt_state), aux

  ready = replay.num_ready(buffer)
  carry = (state.params, state.batch_stats, state.opt_state)
  keys = jax.random.split(k_train, tr.updates_per_iteration)
  # XLA on CPU runs convolution gradients many times slower inside a loop or a
  # conditional than outside (bench/xla_loop.py), so there the K updates are unrolled, and while the
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
      # Player +1's (black's, in Go) share of the games that ended.
      black_win_rate=per_game((records.result > 0).astype(jnp.float32)),
      resigned=jnp.sum(records.resigned).astype(jnp.float32),
      resign_checked=jnp.sum(records.resign_checked).astype(jnp.float32),
      false_resign=jnp.sum(records.false_resign).astype(jnp.float32),
      root_value=jnp.mean(records.root_value),
      # Share of searched positions the network evaluated again (the others'
      # evaluations came from the previous search).
      root_evaluated=jnp.mean(records.root_evaluated.astype(jnp.float32)),
      # Share of moves searched in full (playout cap randomization; 1 without it).
      full_search=jnp.mean(records.full_search.astype(jnp.float32)),
      buffer_ready=ready.astype(jnp.float32),
      trained=enough.astype(jnp.float32))
  new_state = state.replace(params=params, batch_stats=batch_stats, opt_state=opt_state,
                            games=games, buffer=buffer, iteration=state.iteration + 1)
  # The moves of the first few game slots, for the SGF sample of self-play games.
  slots = config.log.sgf_slots
  trace = {k: getattr(records, k)[:, :slots] for k in
           ("action", "to_play", "root_value", "ended", "result", "resigned")}
  return new_state, metrics, trace


def evaluate(config, game, model, state: TrainState) -> tuple[TrainState, dict]:
  """The evaluation match against `state.reference`, its Elo and (with gating) the new best."""
  e = config.eval
  current = {"params": state.params, "batch_stats": state.batch_stats}
  key = jax.random.fold_in(jax.random.fold_in(state.rng, state.iteration), 7)
  settings = search.SearchConfig.from_config(config.search, num_simulations=e.num_simulations,
                                             dirichlet_fraction=e.dirichlet_fraction)
  reference, elo, metrics = arena.evaluate_and_rate(
      game, search.flax_network(game, model, config.model.encoding), current, state.reference,
      state.elo, key, num_games=e.num_games, search=settings,
      temperature_moves=e.temperature_moves,
      gating_threshold=e.gating_threshold if e.gating else None)
  return state.replace(reference=reference, elo=elo), metrics


def state_shardings(mesh, abstract: TrainState, num_games: int):
  """Games and replay buffer split along their game axis; everything else replicated."""
  split, rep = parallel.split_leading(mesh), parallel.replicated(mesh)
  leading = lambda tree: jax.tree.map(lambda _: split, tree)
  shardings = jax.tree.map(lambda _: rep, abstract)
  buffer = jax.tree.map(lambda x: split if x.ndim and x.shape[0] == num_games else rep,
                        abstract.buffer)
  return shardings.replace(games=leading(abstract.games), buffer=buffer)


_TRAIN_ONLY = ("loss_", "policy_entropy")


class AlphaZeroTask(Task):
  """The jitted, sharded pieces of an AlphaGo Zero run, built once from a config."""

  unit = "iteration"
  keep_steps = (0,)  # checkpoint 0, the untrained network: the yardstick of a learning check
  save_initial = True

  def __init__(self, config: ml_collections.ConfigDict):
    super().__init__(config)
    self.total = config.iterations
    self.items_per_unit = config.selfplay.num_games * config.selfplay.steps_per_iteration
    self.game = game_lib.make(config.game)
    self.model = nets.make(config.model, num_actions=self.game.num_actions)
    self.optimizer = optim.make_optimizer(config.train, optim.step_schedule(config.train))
    rows = config.replay.rows_per_game
    needed = self.game.max_length + config.selfplay.steps_per_iteration
    if rows < needed:
      raise ValueError(
          f"replay.rows_per_game ({rows}) must be at least game.max_moves + "
          f"selfplay.steps_per_iteration ({needed}): a game's early positions would be "
          f"overwritten before its result is known, and training would see only endgames")
    self.loss_weights = LossWeights.from_config(config, self.game)  # checks the heads
    sp = config.selfplay
    if sp.playout_cap_randomization and not 0 < sp.cheap_simulations < config.search.num_simulations:
      raise ValueError(f"selfplay.cheap_simulations ({sp.cheap_simulations}) must be between 1 "
                       f"and search.num_simulations - 1 ({config.search.num_simulations - 1})")
    self.mesh = parallel.make_mesh(config.mesh.num_devices)
    parallel.check_divisible(self.mesh, **{"selfplay.num_games": config.selfplay.num_games,
                                           "train.batch_size": config.train.batch_size})
    init = functools.partial(init_state, config, self.game, self.model, self.optimizer)
    abstract = jax.eval_shape(init, jax.random.PRNGKey(0))
    self.shardings = state_shardings(self.mesh, abstract, config.selfplay.num_games)
    self.abstract_state = jax.tree.map(
        lambda a, s: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s), abstract, self.shardings)
    self._init = jax.jit(init, out_shardings=self.shardings)
    self.iteration = jax.jit(
        functools.partial(iteration, config, self.game, self.model, self.optimizer,
                          mesh=self.mesh),
        in_shardings=(self.shardings,),
        out_shardings=(self.shardings, None, parallel.replicated(self.mesh)), donate_argnums=0)
    self.evaluate = jax.jit(functools.partial(evaluate, config, self.game, self.model),
                            in_shardings=(self.shardings,), out_shardings=(self.shardings, None),
                            donate_argnums=0)
    self._sgf = None

  def init(self, seed: int) -> TrainState:
    state = self._init(jax.random.PRNGKey(seed))
    if self.config.get("init_from", ""):
      state = self._start_from(state, self.config.init_from)
    return state

  def _start_from(self, state: TrainState, path: str) -> TrainState:
    """The fresh state with the network of checkpoint `path` (a supervised dual network, say)."""
    mine = {"params": state.params, "batch_stats": state.batch_stats}
    variables, theirs = warm_start.load_start(path, self.config, mine)
    put = lambda: (jax.device_put(variables["params"], self.shardings.params),
                   jax.device_put(variables["batch_stats"], self.shardings.batch_stats))
    params, batch_stats = put()
    reference = dict(zip(("params", "batch_stats"), put()))  # own buffers: the step donates both
    log(f"starting from the network of {path} ({theirs})")
    return state.replace(params=params, batch_stats=batch_stats,
                         opt_state=jax.jit(self.optimizer.init,
                                           out_shardings=self.shardings.opt_state)(params),
                         reference=reference)

  def begin(self, workdir: str, start: int) -> None:
    c = self.config
    self._sgf = game_lib.record_writer(self.game, os.path.join(workdir, "sgf"),
                                       every=c.log.sgf_every, fresh=start == 0)
    log(f"training {c.model.blocks}x{c.model.channels} network on {c.game.name} "
        f"({self.game.cfg}), {self.mesh.devices.size} device(s), "
        f"iterations {start}..{self.total}")

  def step(self, state: TrainState, i: int):
    state, metrics, trace = self.iteration(state)
    self._sgf.add(i, parallel.to_host(trace))
    return state, metrics

  def report(self, i: int, state: TrainState, metrics: dict) -> tuple[TrainState, dict]:
    if not metrics["trained"]:  # still filling the buffer: no losses to report
      metrics = {k: v for k, v in metrics.items() if not k.startswith(_TRAIN_ONLY)}
    if self.config.eval.every and i % self.config.eval.every == 0:
      state, match = self.evaluate(state)
      metrics.update({k: float(v) for k, v in parallel.to_host(match).items()})
    return state, metrics

  def lines(self, i: int, metrics: dict, seconds: float, eta: float, compiling: bool) -> list[str]:
    lines = [progress_line(i, self.total, metrics, seconds, eta,
                           min_ready=self.config.replay.min_ready, compiled=compiling)]
    if "eval_win_rate" in metrics:
      lines.append(f"  eval: win rate {metrics['eval_win_rate']:.2f} against the previous "
                   f"network, Elo {metrics['elo']:+.0f}")
    return lines
