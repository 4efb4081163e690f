"""A run's starting network in place of random weights, checked against the run's own network:
a dual network trained elsewhere, on human games say (`config.init_from`: load_start; a network
on AlphaGo Zero's 17 planes may start one on KataGo's), or the SL policy's convolutions under a
value network (`value.init_from`: load_convolutions)."""

import jax
import numpy as np

from agz_jax.alphago import katago


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

  A network on AlphaGo Zero's planes ("agz17") starts a run on KataGo's ("katago",
  "katago_noladders") of the same shapes otherwise: its first layer is carried over to
  KataGo's planes (agz17_to_katago), every other layer as it is.

  Raises:
    checkpoint.CheckpointMismatch (a ValueError): one line, where the network is not a resnet
      of the run's encoding and shapes.
    FileNotFoundError: no checkpoint at `path`.
  """
  from agz_jax import checkpoint  # pylint: disable=import-outside-toplevel  (orbax: when used)
  given, variables = checkpoint.load_network(path)
  theirs = describe(given)
  shapes = lambda tree: jax.tree.map(lambda a: tuple(a.shape), tree)
  encoding = given.model.get("encoding")
  carried = (given.model.kind == "resnet" and encoding == "agz17"
             and config.model.encoding in katago.ENCODINGS
             and "global_inputs" in like.get("params", {}))
  if carried:
    size = config.game.size
    variables = agz17_to_katago(variables, like, config.game.komi, size * size)
  try:
    fits = (given.model.kind == "resnet" and (carried or encoding == config.model.encoding)
            and shapes(variables) == shapes(like))
  except (TypeError, ValueError):  # other keys: another network's tree
    fits = False
  if not fits:
    raise checkpoint.CheckpointMismatch(
        f"init_from: {path} holds {theirs}; this run trains {describe(config)}: set "
        "model.blocks, model.channels, model.encoding and KataGo's switches to the "
        "checkpoint's (a 17-plane network may start a katago run of its blocks and channels), "
        "or start without init_from")
  if carried:
    theirs += f", its first layer carried over to {config.model.encoding} planes"
  return jax.tree.map(lambda a, b: np.asarray(a, b.dtype), variables, like), theirs


def agz17_to_katago(variables: dict, like: dict, komi: float, points: int) -> dict:
  """A network on AlphaGo Zero's planes carried over to KataGo's: `variables` with the first
  convolution's kernel (and the global input's projection, which the 17 planes' network lacks)
  in the shapes of `like`'s, computing what the old network computed on a position whose
  history planes all repeat the current board, for games at `komi` on a board of `points`.

  The 17 planes' kernels over the player's stones at the last T moves add up to KataGo's plane
  of its stones, those of the opponent's to its plane of theirs. The colour plane (ones when
  black is to play) has no plane of its own there: half its kernel goes to the board plane
  (ones), and the other half, signed by the colour, to the global feature of komi from the
  mover's view (-komi / 20 for black, +komi / 20 for white), which adds it as a bias per
  channel (exact for the kernel's centre tap, near at the edges for the rest). At komi 0 that
  feature cannot tell the colours apart, and the colour plane is averaged over both. KataGo's
  other planes and globals start at zero: the network learns what they add.
  """
  params = dict(variables["params"])
  kernel = np.asarray(params["Conv_0"]["kernel"], np.float32)  # [3, 3, 2T + 1, C]
  history = (kernel.shape[2] - 1) // 2
  mine = like["params"]
  new = np.zeros(mine["Conv_0"]["kernel"].shape, np.float32)   # [3, 3, spatial, C]
  if (new.shape[:2], new.shape[3]) != (kernel.shape[:2], kernel.shape[3]):
    return variables  # another width: load_start refuses it in one line
  colour = kernel[:, :, 2 * history]
  new[:, :, katago.OWN_STONES] = kernel[:, :, :history].sum(axis=2)
  new[:, :, katago.OPPONENT_STONES] = kernel[:, :, history:2 * history].sum(axis=2)
  new[:, :, katago.ON_BOARD] = colour / 2
  projection = np.zeros(mine["global_inputs"]["kernel"].shape, np.float32)  # [globals, C]
  komi = float(np.clip(komi, -(points + 20), points + 20))  # as the feature clips it
  if komi:
    # Black: -komi / 20 times this is +colour's sum / 2; white: -colour's sum / 2.
    projection[katago.SELF_KOMI] = -10.0 * colour.sum(axis=(0, 1)) / komi
  params["Conv_0"] = {"kernel": new}
  params["global_inputs"] = {"kernel": projection}
  return {**variables, "params": params}


def load_convolutions(path: str, params: dict) -> tuple[dict, list[str]]:
  """`params` (a fresh network's) with the hidden convolutions of the policy network at
  `path` in place of their random weights, and the names of the layers taken: the 2016 value
  network starting from the SL policy's layers, as the paper built it on them.

  A layer is taken where both networks have it under the same name (`conv_in`, `conv_0`, ...)
  with the same kernel shape; the first layer's kernel may have more input planes here than
  there (AlphaGo's 49th plane, the colour to play, beside the policy's 48), which start at
  zero, so that the starting network computes the policy's features. Output layers stay fresh.

  Raises:
    checkpoint.CheckpointMismatch (a ValueError): one line, where `path` holds no policy
      network or a layer it shares by name has another shape.
    FileNotFoundError: no checkpoint at `path`.
  """
  from agz_jax import checkpoint  # pylint: disable=import-outside-toplevel  (orbax: when used)
  given, variables = checkpoint.load_network(path)
  if given.model.kind != "policy":
    raise checkpoint.CheckpointMismatch(
        f"value.init_from: {path} holds {describe(given)}, not a policy network: give an SL "
        "policy (pretrained/alphago-19x19/sl_policy, say)")
  theirs = variables["params"]
  out, taken = dict(params), []
  for name in sorted(k for k in params if k.startswith("conv_")):
    if name == "conv_out" or name not in theirs:
      continue
    mine, kernel = params[name], np.asarray(theirs[name]["kernel"])
    extra = mine["kernel"].shape[2] - kernel.shape[2]
    if (kernel.shape[:2] + kernel.shape[3:] != mine["kernel"].shape[:2] + mine["kernel"].shape[3:]
        or extra < 0 or (extra and name != "conv_in")):
      raise checkpoint.CheckpointMismatch(
          f"value.init_from: {path}'s {name} has a {kernel.shape} kernel, this network's "
          f"{tuple(mine['kernel'].shape)}: set model.filters (and the planes) to the policy's "
          f"({given.model.filters} filters, {given.model.encoding}), or start without it")
    kernel = np.pad(kernel, ((0, 0), (0, 0), (0, extra), (0, 0)))
    out[name] = {"kernel": kernel.astype(mine["kernel"].dtype),
                 "bias": np.asarray(theirs[name]["bias"], mine["bias"].dtype)}
    taken.append(name)
  if not taken:
    raise checkpoint.CheckpointMismatch(
        f"value.init_from: {path} shares no convolution with this network: give the SL policy "
        "the value network is built on")
  return out, taken
