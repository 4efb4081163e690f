"""AlphaGo's value network v_theta by regression on game results (task "value").

Three sources of positions (`value.source`):

  "selfplay"     one position per self-play game (`python -m agz_jax.data.value_data`,
                 folder `value.data_dir`); the last `value.test_fraction` of its games
                 are held out
  "human_cache"  a few positions per even human game, their planes computed once
                 (`python -m agz_jax.data.human_value`, folder `value.data_dir`); the
                 held-out games' positions, which the folder names, are held out
  "human"        every position of the imported human games (`data.dir`, as the SL
                 policy; games from `data.val_from` on are held out), the target being
                 the game's winner: the paper's over-fitting comparison

`value.init_from` names an SL policy whose convolutions the network starts from (the paper
built its value network on the SL policy's layers); by default it starts from random weights.

Each step samples a minibatch on device (a random board symmetry per position)
and takes an optimizer step on the mean squared error between v_theta(s) and
z, the result from the view of the player to move (positions of human games
without a known result are left out). Every `eval.every` steps: the MSE on a
fixed sample of training positions and on the held-out ones.
"""

import functools

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np

from agz_jax import go, nets, parallel
from agz_jax.data import positions, value_data
from agz_jax.metrics import format_eta, log
from agz_jax.training import optim, warm_start
from agz_jax.training.supervised import DataParallelStep, SLState, SupervisedTask, load_tables


def unpack(cfg: go.GoConfig, encoding: str, packed: jax.Array) -> jax.Array:
  """[B, bytes] packed planes -> [B, N, N, F] float32."""
  shape = go.planes_shape(cfg, encoding)
  bits = jnp.unpackbits(packed, axis=-1, count=int(np.prod(shape)))
  return bits.reshape((packed.shape[0],) + shape).astype(jnp.float32)


def symmetrise(planes: jax.Array, key: jax.Array) -> jax.Array:
  """Each position under a random one of the 8 board symmetries."""
  k = jax.random.randint(key, (planes.shape[0],), 0, go.NUM_SYMMETRIES)
  return jax.vmap(go.transform_planes)(planes, k)


def mse_gradients(config, model, params, planes, z, weight):
  """(gradients, metrics) of the weighted mean squared error (and the L2 penalty)."""
  def loss_fn(p):
    v = model.apply({"params": p}, planes, train=True)
    mse = jnp.sum(weight * (v - z) ** 2) / jnp.maximum(jnp.sum(weight), 1.0)
    return mse + optim.l2_penalty(p, config.train.weight_decay), mse

  grads, mse = jax.grad(loss_fn, has_aux=True)(params)
  return grads, {"loss_value": mse}


def selfplay_gradients(cfg, model, config, shards: int, params, key, packed, z, *, shard=0):
  """Device `shard`'s share of a minibatch of self-play positions."""
  batch = config.train.batch_size // shards
  k_pick, k_sym = jax.random.split(jax.random.fold_in(key, shard))
  idx = jax.random.randint(k_pick, (batch,), 0, z.shape[0])
  planes = symmetrise(unpack(cfg, config.model.encoding, packed[idx]), k_sym)
  return mse_gradients(config, model, params, planes, z[idx], jnp.ones(batch))


def human_gradients(cfg, model, config, shards: int, params, key, table, *, shard=0):
  """Device `shard`'s share of a minibatch of human-game positions (the game's winner)."""
  games = config.data.games_per_batch // shards
  batch = positions.sample(cfg, table, key, encoding=config.model.encoding, num_games=games,
                           positions_per_game=config.data.positions_per_game,
                           first_game=shard * games)
  weight = (batch.value_target != 0).astype(jnp.float32)
  return mse_gradients(config, model, params, batch.planes, batch.value_target, weight)


# The sources read from a folder of value data (packed planes, z).
FOLDER_SOURCES = ("selfplay", "human_cache")


def mse(model, params, planes, z, weight) -> jax.Array:
  v = model.apply({"params": params}, planes)
  return jnp.sum(weight * (v - z) ** 2) / jnp.maximum(jnp.sum(weight), 1.0)


class ValueTask(SupervisedTask):
  """The jitted pieces of a value-network run, built once from a config."""

  def __init__(self, config: ml_collections.ConfigDict):
    super().__init__(config)
    if config.model.kind != "value":
      raise ValueError(f"task value trains a value network: model.kind must be 'value', got "
                       f"{config.model.kind!r}")
    if config.value.source not in FOLDER_SOURCES + ("human",):
      raise ValueError(f"value.source must be 'selfplay', 'human_cache' or 'human', got "
                       f"{config.value.source!r}")
    if "relu_1x1" not in config.model:
      # Saved with the network, so that its checkpoint loads with the layer it trained with
      # (checkpoint.upgrade_config gives value networks saved without it their old ReLU).
      with config.unlocked():
        config.model.relu_1x1 = nets.ValueNet.relu_1x1
    self._build(config)
    go.check_encoding(self.cfg, config.model.encoding)
    shards = self.mesh.devices.size
    if config.value.source in FOLDER_SOURCES:
      self.items_per_unit = config.train.batch_size
      parallel.check_divisible(self.mesh, **{"train.batch_size": config.train.batch_size})
      grads = functools.partial(selfplay_gradients, self.cfg, self.model, config, shards)
    else:
      self.items_per_unit = config.data.games_per_batch * config.data.positions_per_game
      parallel.check_divisible(self.mesh, **{"data.games_per_batch": config.data.games_per_batch})
      grads = functools.partial(human_gradients, self.cfg, self.model, config, shards)
    self.train = DataParallelStep(self.mesh, self.optimizer, grads)
    self._mse = jax.jit(functools.partial(mse, self.model))
    self.inputs = None
    self.eval_sets = None

  def init(self, seed: int) -> SLState:
    """A fresh state: random weights, or with `value.init_from` the SL policy's convolutions
    under a fresh value head (warm_start.load_convolutions), with a fresh optimizer."""
    state = super().init(seed)
    path = self.config.value.get("init_from", "")
    if not path:
      return state
    params, taken = warm_start.load_convolutions(path, jax.device_get(state.params))
    rep = parallel.replicated(self.mesh)
    params = jax.device_put(params, rep)
    log(f"starting from the convolutions of {path} ({', '.join(taken)})")
    return state.replace(params=params,
                         opt_state=jax.jit(self.optimizer.init, out_shardings=rep)(params))

  def begin(self, workdir: str, start: int) -> None:
    c = self.config
    rep = parallel.replicated(self.mesh)
    n = c.eval.num_positions
    if c.value.source in FOLDER_SOURCES:
      info, packed, z, _ = value_data.read(c.value.data_dir)
      if (info["encoding"], info["size"]) != (c.model.encoding, self.cfg.size):
        raise ValueError(f"{c.value.data_dir} holds {info['encoding']} planes of "
                         f"{info['size']}x{info['size']} positions; the config reads "
                         f"{c.model.encoding} on {self.cfg.size}x{self.cfg.size}")
      planned = info.get("planned_positions", len(z))
      if len(z) != planned:
        raise ValueError(f"{c.value.data_dir} holds {len(z):,} of its {planned:,} positions: "
                         "run the command that writes it again, which goes on where it stopped")
      # A human cache names its held-out positions (the last); self-play data holds out a share.
      test = info.get("test_positions") or max(1, int(round(len(z) * c.value.test_fraction)))
      if len(z) - test < c.train.batch_size:
        raise ValueError(f"{len(z)} positions in {c.value.data_dir}: too few for a minibatch "
                         f"of {c.train.batch_size} after holding out {test}")
      train_packed, train_z = packed[:-test], z[:-test]
      self.inputs = jax.device_put((jnp.asarray(train_packed), jnp.asarray(train_z)), rep)
      unpacked = lambda p: unpack(self.cfg, c.model.encoding, jnp.asarray(p))
      self.eval_sets = {
          "train": (unpacked(train_packed[:n]), train_z[:n], np.ones(min(n, len(train_z)))),
          "test": (unpacked(packed[-test:][:n]), z[-test:][:n], np.ones(min(n, test)))}
      per_game = info.get("positions_per_game", 1)
      log(f"{len(z) - test:,} training positions, {test:,} held out, from {c.value.data_dir} "
          f"({per_game} per game, {info['batches']} batches)")
    else:
      train_table, val_table, info = load_tables(self.cfg, c)
      self.inputs = (jax.device_put(train_table, rep),)
      self.eval_sets = {name: self._fixed(table) for name, table in
                        (("train", train_table), ("test", val_table))}
      log(f"{info['train_games']:,} human training games ({info['train_positions']:,} "
          f"positions), {info['val_games']:,} held out")
    log(f"training a {c.model.layers}-layer, {c.model.filters}-filter value network on "
        f"{c.model.encoding} planes ({c.value.source} positions), steps {start}..{self.total}")

  def _fixed(self, table):
    """A fixed sample of a human-game table's positions for evaluation (the same every time)."""
    c = self.config
    per_game = c.data.positions_per_game
    games = -(-c.eval.num_positions // per_game)
    batch = jax.jit(functools.partial(positions.sample, self.cfg, encoding=c.model.encoding,
                                      num_games=games, positions_per_game=per_game,
                                      augment=False))(table, jax.random.PRNGKey(c.eval.seed))
    return (batch.planes, batch.value_target, (batch.value_target != 0).astype(jnp.float32))

  def step(self, state: SLState, i: int):
    del i
    return self.train(state, *self.inputs)

  def report(self, i: int, state: SLState, metrics: dict) -> tuple[SLState, dict]:
    metrics["learning_rate"] = float(self.schedule(i))
    if self._evaluating(i):
      for name, (planes, z, weight) in self.eval_sets.items():
        metrics[f"{name}_mse"] = float(self._mse(state.params, planes, z, weight))
    return state, metrics

  def lines(self, i: int, metrics: dict, seconds: float, eta: float, compiling: bool) -> list[str]:
    speed = "compiling" if compiling else f"{metrics['positions_per_s']:,.0f} pos/s"
    line = f"step {i}/{self.total} | {speed} | mse {metrics['loss_value']:.3f}"
    if "test_mse" in metrics:
      line += f" | train mse {metrics['train_mse']:.3f} test mse {metrics['test_mse']:.3f}"
    return [f"{line} | lr {metrics['learning_rate']:.2g} | ETA {format_eta(eta)}"]
