"""Shared test helpers: a tiny checkpoint without training, a fake network."""

import functools
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct as flax_struct

from agz_jax import checkpoint, go, nets, search
from agz_jax.game import Game

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from configs import cpu_9x9, default  # noqa: E402  pylint: disable=wrong-import-position


@flax_struct.dataclass
class Network:
  """The part of a TrainState a checkpoint's `network` item holds."""
  params: dict
  batch_stats: dict


def make_checkpoint(workdir, size=9, seed=0, config=None, **model):
  """Saves a small network with random weights as training would: WORKDIR/checkpoints/1.

  The weights are drawn with numpy into the shapes of the real model (jax.eval_shape, nothing
  compiled), so a checkpoint costs a fraction of a second instead of a training iteration.
  `model` overrides fields of the config's model section (KataGo's switches). `config`: a
  training config of another game (its game and encoding; `size` is then unused).
  """
  from agz_jax import game as game_lib  # pylint: disable=import-outside-toplevel
  if config is None:
    config = cpu_9x9.get_config()
    config.game.size = size
  config.model.blocks, config.model.channels, config.model.value_hidden = 1, 8, 16
  config.model.update(model)
  the_game = game_lib.make(config.game)
  model = nets.make(config.model, num_actions=the_game.num_actions)
  planes = jnp.zeros((1, *the_game.planes_shape(config.model.encoding)), jnp.float32)
  shapes = jax.eval_shape(lambda: model.init(jax.random.PRNGKey(0), planes, train=False))
  rng = np.random.default_rng(seed)

  def fill(path, leaf):
    name = jax.tree_util.keystr(path)
    if name.endswith("['var']"):
      return np.ones(leaf.shape, leaf.dtype)
    if name.endswith("['mean']"):
      return np.zeros(leaf.shape, leaf.dtype)
    return rng.normal(0.0, 0.3, leaf.shape).astype(leaf.dtype)

  variables = jax.tree_util.tree_map_with_path(fill, shapes)
  saver = checkpoint.Checkpointer(str(workdir), keep=1)
  saver.save(1, Network(variables["params"], variables.get("batch_stats", {})), config)
  saver.close()
  return str(workdir)


@functools.partial(jax.jit, static_argnums=(0, 2))
def planes(cfg, states, encoding="agz17"):
  """go.features, compiled: called eagerly the 48 planes' ladder reading dispatches op by op,
  which costs several times one compile."""
  return go.features(cfg, states, encoding)


@functools.partial(jax.jit, static_argnums=0)
def legal_moves(cfg, state):
  """go.legal_actions, compiled: the tests that play random games call it at every move, and
  op by op it costs some 20 ms a move."""
  return go.legal_actions(cfg, state)


def fake_apply(variables, planes):
  """A 'network' whose prior logits ([A]) and value ([]) are given by its variables."""
  batch = planes.shape[0]
  actions = variables["logits"].shape[-1]
  return (jnp.broadcast_to(variables["logits"], (batch, actions)),
          jnp.broadcast_to(variables["value"], (batch,)))


def fake_evaluator(variables, states, rng_key):
  """fake_apply as a leaf evaluator: (variables, states, rng_key) -> (logits, value)."""
  del rng_key
  return fake_apply(variables, states.board[:, :, None, None])


def network_evaluator(cfg, apply_fn, encoding="agz17"):
  """A network's apply function as the search's evaluator on Go with `cfg`."""
  return search.network(Game(go, cfg), apply_fn, encoding)


def search_config(**overrides):
  """A SearchConfig with the default config's settings, `overrides` replacing fields."""
  return search.SearchConfig.from_config(default.get_config().search, **overrides)


def fake_variables(num_actions, logits=None, value=0.0):
  logits = np.zeros(num_actions) if logits is None else logits
  return {"logits": jnp.asarray(logits, jnp.float32), "value": jnp.float32(value)}


COLUMNS = "ABCDEFGHJKLMNOPQRST"  # GTP skips the letter I.


def point(size, vertex):
  """GTP vertex ('C4', 'pass') -> action index, computed independently of go.gtp_to_action."""
  if vertex == "pass":
    return size * size
  return (size - int(vertex[1:])) * size + COLUMNS.index(vertex[0])


def write_files(folder, files: dict) -> dict:
  """Writes {name: bytes} as folder/<name>.sgf; returns {name: path}."""
  paths = {}
  for name, data in files.items():
    path = os.path.join(folder, f"{name}.sgf")
    with open(path, "wb") as f:
      f.write(data)
    paths[name] = path
  return paths


def gtp_on_cpu_devices(args, devices: int, commands: str) -> list[str]:
  """Runs `python -m agz_jax.gtp ARGS --cpu-devices N` on `commands` (the test session's
  device count removed from its environment) and returns its replies; asserts it exits 0."""
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  proc = subprocess.run(
      [sys.executable, "-m", "agz_jax.gtp", *args, "--cpu-devices", str(devices)],
      input=commands, capture_output=True, text=True, timeout=600, env=env, check=False,
      cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  assert proc.returncode == 0, proc.stderr[-2000:]
  return [r for r in proc.stdout.split("\n\n") if r.strip()]
