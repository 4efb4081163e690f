"""A run's starting network (`config.init_from`): a dual network trained elsewhere (on human
games, say) in place of random weights, checked against the run's own network."""

import jax
import numpy as np


def describe(config) -> str:
  """A few words naming a run's network: 'a 10x128 resnet on agz17 planes for 19x19'."""
  model, size = config.model, config.game.get("size")
  if model.kind == "resnet":
    return (f"a {model.blocks}x{model.channels} resnet on {model.encoding} planes for "
            f"{size}x{size}")
  return f"a {model.kind!r} network on {model.get('encoding')} planes"


def load_start(path: str, config, like: dict) -> tuple[dict, str]:
  """The variables of the dual network at `path`, cast to the dtypes of `like` (the fresh
  run's {'params', 'batch_stats'}), and describe()'s words for it.

  Raises:
    checkpoint.CheckpointMismatch (a ValueError): one line, where the network is not a resnet
      of the run's encoding and shapes.
    FileNotFoundError: no checkpoint at `path`.
  """
  from agz_jax import checkpoint  # pylint: disable=import-outside-toplevel  (orbax: when used)
  given, variables = checkpoint.load_network(path)
  theirs = describe(given)
  shapes = lambda tree: jax.tree.map(lambda a: tuple(a.shape), tree)
  try:
    fits = (given.model.kind == "resnet" and given.model.encoding == config.model.encoding
            and shapes(variables) == shapes(like))
  except (TypeError, ValueError):  # other keys: another network's tree
    fits = False
  if not fits:
    raise checkpoint.CheckpointMismatch(
        f"init_from: {path} holds {theirs}; this run trains {describe(config)}: set "
        "model.blocks, model.channels, model.encoding and KataGo's switches to the "
        "checkpoint's, or start without init_from")
  return jax.tree.map(lambda a, b: np.asarray(a, b.dtype), variables, like), theirs
