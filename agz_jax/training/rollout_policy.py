"""AlphaGo's fast policies learn human moves (task "rollout_policy").

The rollout policy p_pi (and, with `model.features = "tree"`, the tree policy
p_tau) is a linear softmax over the pattern features of `agz_jax.alphago.patterns`.
A fresh run first harvests the pattern dictionaries from `data.harvest_games`
training games (every position replayed on the device, the canonical codes
counted on the host; the `model.num_*` most frequent patterns seen at least
`data.min_count` times are kept), then each jitted step samples training
positions on the device (`agz_jax.data.positions`, as the SL policy does),
computes their features and takes an optimizer step on the cross-entropy of
the human move among the legal ones. The dictionaries are part of the state
and of the checkpoint's `network` item, so a player needs nothing else.
"""

import functools
import time

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax
from flax import struct

from agz_jax import game as game_lib, go, nets, parallel
from agz_jax.data import positions
from agz_jax.metrics import format_eta, log
from agz_jax.alphago import patterns
from agz_jax.training import optim
from agz_jax.training.supervised import (DataParallelStep, SupervisedTask,
                                         cross_entropy_gradients, load_tables)


@struct.dataclass
class FastPolicyState:
  """Everything a run needs to resume.

  Attributes:
    params: {'weights': [F] float32, 'pass_logit': []}.
    batch_stats: {} (checkpoints hold the same `network` item as other runs).
    patterns: {'3x3', 'response'(, 'diamond'): [C, 2] int32} the harvested
      dictionaries' canonical codes (capacity C of each from the config; -1 rows
      unused); the diamond one only for the tree policy.
    opt_state: the optimizer's state.
    rng: PRNG key for the next step.
    step: [] int32, updates done.
  """

  params: dict
  batch_stats: dict
  patterns: dict
  opt_state: optax.OptState
  rng: jax.Array
  step: jax.Array


def capacities(model_config) -> dict:
  """{kind: dictionary capacity} of a fast policy's model config."""
  return {"3x3": model_config.num_3x3, "response": model_config.num_response,
          "diamond": model_config.num_diamond}


def feature_count(model_config) -> int:
  """F of a model config: what model.num_features must be."""
  sizes = dict(patterns.group_sizes(model_config.num_3x3, model_config.num_response,
                                    model_config.num_diamond))
  return sum(sizes[g] for g in patterns.groups_of(model_config))


def check_model(model_config) -> None:
  """A clear error when the model config's numbers do not fit together."""
  groups = patterns.groups_of(model_config)
  if model_config.features == "tree" and model_config.num_diamond < 1:
    raise ValueError("model.features = 'tree' needs model.num_diamond >= 1 (its diamond patterns)")
  if "pattern_diamond" not in groups and model_config.num_diamond:
    raise ValueError("model.num_diamond is only used by model.features = 'tree'; set it to 0")
  want = feature_count(model_config)
  if model_config.num_features != want:
    raise ValueError(f"model.num_features is {model_config.num_features} but the groups of "
                     f"{model_config.features!r} with these dictionary sizes have {want} features: "
                     f"set model.num_features = {want}")


def harvest(cfg: go.GoConfig, table: positions.GameTable, games: np.ndarray, *, chunk: int,
            kinds: tuple[str, ...] = tuple(patterns.KINDS),
            counter: patterns.PatternCounter | None = None,
            progress_every_s: float = 30.0) -> patterns.PatternCounter:
  """Counts the canonical patterns of `kinds` of every position of `games` (rows of `table`).

  Logs the games done, positions per second and the ETA every `progress_every_s`.
  """
  counter = counter or patterns.PatternCounter()
  lengths = np.asarray(table.length)
  total = int(lengths[np.asarray(games)].sum())
  began = shown = time.perf_counter()
  done = 0
  codes = jax.vmap(functools.partial(patterns.harvest_codes, cfg, kinds=kinds))

  @jax.jit
  def replay(table, rows):
    moves = table.moves[rows].astype(jnp.int32)
    start = jax.vmap(lambda b, w, c: go.init(cfg, b, w, c))(
        table.setup_black[rows].astype(jnp.int32), table.setup_white[rows].astype(jnp.int32),
        table.first_player[rows])
    step = jax.vmap(lambda s, a: go.step(cfg, s, a))

    def play(states, t):
      found = codes(states)
      alive = t < table.length[rows]
      found = {k: (hi, lo, valid & alive.reshape((-1,) + (1,) * (valid.ndim - 1)))
               for k, (hi, lo, valid) in found.items()}
      return step(states, moves[:, t]), found

    return jax.lax.scan(play, start, jnp.arange(moves.shape[1]))[1]

  for i in range(0, len(games), chunk):
    rows = np.asarray(games[i:i + chunk])
    rows = np.concatenate([rows, np.full(chunk - len(rows), rows[0])]) if len(rows) < chunk else rows
    found = jax.device_get(replay(table, jnp.asarray(rows)))
    if len(games) - i < chunk:  # the padding rows repeat a game: not counted twice
      keep = len(games) - i
      found = {k: tuple(x[:, :keep] for x in v) for k, v in found.items()}
    counter.add(found)
    done += int(lengths[rows[:len(games) - i]].sum())
    now = time.perf_counter()
    if now - shown > progress_every_s and done < total:
      speed = done / (now - began)
      log(f"  harvested {min(i + chunk, len(games)):,}/{len(games):,} games | {speed:,.0f} pos/s | "
          f"ETA {format_eta((total - done) / speed)}")
      shown = now
  return counter


def init_state(model, optimizer, num_points: int, codes: dict, rng_key) -> FastPolicyState:
  k_net, k_state = jax.random.split(rng_key)
  dummy = jnp.zeros((1, num_points, 1), jnp.int32)
  params = model.init(k_net, dummy)["params"]
  return FastPolicyState(params=params, batch_stats={}, patterns=codes,
                         opt_state=optimizer.init(params), rng=k_state, step=jnp.int32(0))


def encode(cfg: go.GoConfig, tables: patterns.Tables, groups, states: go.GoState):
  """(feature indices [B, P, G], legal actions [B, P + 1]) of a batch of states."""
  idx = jax.vmap(lambda s: patterns.indices(cfg, tables, s, groups))(states)
  return idx, jax.vmap(functools.partial(go.legal_actions, cfg))(states)


def _scores(logits, legal, action):
  """Cross-entropy, top-1 and top-5 hits of the human move among the legal actions."""
  logits = jnp.where(legal, logits, -1e9)
  log_p = jax.nn.log_softmax(logits)
  loss = -jnp.take_along_axis(log_p, action[:, None], axis=-1)[:, 0]
  rank = jnp.sum(logits > jnp.take_along_axis(logits, action[:, None], axis=-1), axis=-1)
  return loss, (rank < 1).astype(jnp.float32), (rank < 5).astype(jnp.float32)


def gradients(cfg, model, config, shards: int, params, key, table, tables: patterns.Tables, *,
              shard=0):
  """(gradients, metrics) of device `shard`'s share of a minibatch (as sl_policy.gradients)."""
  games = config.data.games_per_batch // shards
  states, action, _, _ = positions.sample_states(
      cfg, table, key, num_games=games, positions_per_game=config.data.positions_per_game,
      first_game=shard * games)
  idx, legal = encode(cfg, tables, patterns.groups_of(config.model), states)

  def loss_terms(params):
    return _scores(model.apply({"params": params}, idx), legal, action)[:2]

  return cross_entropy_gradients(config, params, loss_terms)


def evaluate(model, params, idx, legal, action) -> dict:
  """Validation loss and top-1 / top-5 accuracy among the legal actions."""
  logits = model.apply({"params": params}, idx)
  loss, top1, top5 = _scores(logits, legal, action)
  return {"val_loss": jnp.mean(loss), "val_top1": jnp.mean(top1), "val_top5": jnp.mean(top5)}


class FastPolicyTask(SupervisedTask):
  """The jitted pieces of a fast-policy run, built once from a config."""

  def __init__(self, config: ml_collections.ConfigDict):
    super().__init__(config)
    check_model(config.model)
    self.total = config.steps
    self.items_per_unit = config.data.games_per_batch * config.data.positions_per_game
    self.cfg = game_lib.make(config.game).cfg
    patterns.check_config(self.cfg)
    self.model = nets.make(config.model)
    self.groups = patterns.groups_of(config.model)
    self.schedule = optim.halving_schedule(config.train)
    self.optimizer = optim.make_optimizer(config.train, self.schedule)
    self.mesh = parallel.make_mesh(config.mesh.num_devices)
    parallel.check_divisible(self.mesh, **{"data.games_per_batch": config.data.games_per_batch})
    rep = parallel.replicated(self.mesh)
    empty = {k: np.full((c, 2), -1, np.int32) for k, c in capacities(config.model).items() if c}
    init = functools.partial(init_state, self.model, self.optimizer, self.cfg.num_points)
    abstract = jax.eval_shape(init, empty, jax.random.PRNGKey(0))
    self.abstract_state = jax.tree.map(
        lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=rep), abstract)
    self._init = jax.jit(init, out_shardings=rep)
    self.train = DataParallelStep(self.mesh, self.optimizer, functools.partial(
        gradients, self.cfg, self.model, config, self.mesh.devices.size))
    self._encode = jax.jit(functools.partial(encode, self.cfg, groups=self.groups))
    self.evaluate = jax.jit(functools.partial(evaluate, self.model))
    self._data = None
    self.tables = self.val = None

  def _games(self):
    if self._data is None:
      train_table, val_table, info = load_tables(self.cfg, self.config)
      self._data = jax.device_put(train_table, parallel.replicated(self.mesh)), val_table, info
    return self._data

  def init(self, seed: int) -> FastPolicyState:
    c = self.config
    train_table, _, _ = self._games()
    rng = np.random.default_rng(seed)
    count = min(c.data.harvest_games, train_table.num_games)
    games = np.sort(rng.choice(train_table.num_games, count, replace=False))
    log(f"harvesting patterns from {count:,} training games "
        f"({int(np.asarray(train_table.length)[games].sum()):,} positions)")
    kinds = tuple(k for k, capacity in capacities(c.model).items() if capacity)
    counter = harvest(self.cfg, train_table, games, chunk=c.data.harvest_chunk, kinds=kinds)
    codes = {}
    for kind, capacity in capacities(c.model).items():
      if capacity:  # (a kind the policy does not use is not kept: orbax saves no empty arrays)
        codes[kind] = counter.dictionary(kind, capacity, c.data.min_count)
        seen, frequent = counter.summary(kind, c.data.min_count)
        log(f"  {kind} patterns: {seen:,} seen, {frequent:,} seen {c.data.min_count}+ times, "
            f"{int(np.sum(codes[kind][:, 0] >= 0)):,} kept (capacity {capacity:,})")
    return self._init(codes, jax.random.PRNGKey(seed))

  def begin(self, workdir: str, start: int) -> None:
    c = self.config
    train_table, val_table, info = self._games()
    log(f"{info['train_games']:,} training games ({info['train_positions']:,} positions), "
        f"{info['val_games']:,} validation games from {c.data.val_from} "
        f"({info['val_positions']:,} positions)")
    del train_table

  def step(self, state: FastPolicyState, i: int):
    del i
    if self.tables is None:
      self._prepare(state)
    return self.train(state, *self.step_inputs())

  def step_inputs(self) -> tuple:
    """What the jitted step takes besides the state: the training games, the lookup tables."""
    return self._games()[0], self.tables

  def _prepare(self, state: FastPolicyState) -> None:
    """The lookup tables of the state's dictionaries and the fixed validation positions."""
    c = self.config
    self.tables = jax.device_put(patterns.make_tables(jax.device_get(state.patterns)),
                                 parallel.replicated(self.mesh))
    _, val_table, _ = self._games()
    sample = jax.jit(functools.partial(positions.sample_states, self.cfg,
                                       num_games=c.data.games_per_batch,
                                       positions_per_game=c.data.positions_per_game))
    chunk = c.data.games_per_batch * c.data.positions_per_game
    key = jax.random.PRNGKey(c.eval.seed)
    parts = []
    for i in range(-(-c.eval.num_positions // chunk)):
      states, action, _, _ = sample(val_table, jax.random.fold_in(key, i))
      parts.append(self._encode(self.tables, states=states) + (action,))
    self.val = jax.tree.map(lambda *x: jnp.concatenate(x)[:c.eval.num_positions], *parts)
    log(f"training a {c.model.features} policy of {c.model.num_features:,} features, "
        f"{self.items_per_unit} positions per step")

  def report(self, i: int, state: FastPolicyState, metrics: dict):
    metrics["learning_rate"] = float(self.schedule(i))
    if self._evaluating(i):
      metrics.update({k: float(v) for k, v in parallel.to_host(
          self.evaluate(state.params, *self.val)).items()})
    return state, metrics
