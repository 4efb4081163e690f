"""Checkpoints with orbax: save, restore the latest good one, skip broken ones.

Checkpoints live in WORKDIR/checkpoints/<iteration>/ with three items: `state`
(the whole TrainState: network, optimizer, games in progress, replay buffer,
PRNG key, counters), `network` (just the variables a player needs: params and
BatchNorm statistics, small enough to load anywhere) and `config` (the run's
config as JSON). Orbax writes a
checkpoint to a temporary directory and renames it when complete, so a run
killed while saving leaves no half checkpoint behind. On resume, a checkpoint
that cannot be read (truncated, half copied) is skipped with a warning, moved
to WORKDIR/checkpoints_damaged/ so that new saves can take its step, and the
one before it restored; a checkpoint that reads well but whose arrays do not
fit the config's state (another network size, another game) stops the run
with CheckpointMismatch: it is another run's, never to be replaced.

WORKDIR is a local folder or a URL (gs://bucket/run): orbax writes to either,
and the readers here go through agz_jax.paths.

Self-play runs also keep checkpoint 0, the untrained network, for ever: the
yardstick of a learning check (`--checkpoint WORKDIR/checkpoints/0`).
"""

import json
import logging
import os
import signal
import warnings

import orbax.checkpoint as ocp

from agz_jax import paths


class CheckpointMismatch(ValueError):
  """A checkpoint that reads well holds a state of another shape than the config's."""


class Checkpointer:
  """Keeps the last `keep` checkpoints of a run in WORKDIR/checkpoints, and those of `keep_steps`."""

  def __init__(self, workdir: str, keep: int, keep_steps: tuple[int, ...] = ()):
    self.directory = os.path.join(paths.absolute(workdir), "checkpoints")
    policies = ocp.checkpoint_managers
    self.manager = ocp.CheckpointManager(
        self.directory,
        options=ocp.CheckpointManagerOptions(
            preservation_policy=policies.AnyPreservationPolicy(
                [policies.LatestN(keep), policies.CustomSteps(keep_steps)]),
            create=True, cleanup_tmp_directories=True),
        # Handlers known up front, so that a checkpoint's metadata reads before any restore.
        item_handlers={"state": ocp.StandardCheckpointHandler(),
                       "network": ocp.StandardCheckpointHandler(),
                       "config": ocp.JsonCheckpointHandler()})

  def save(self, iteration: int, state, config) -> None:
    """Saves asynchronously; `close` (or the next save) waits for it."""
    network = {"params": state.params, "batch_stats": state.batch_stats}
    if hasattr(state, "patterns"):  # a fast policy's pattern dictionaries
      network["patterns"] = state.patterns
    self.manager.save(iteration, args=ocp.args.Composite(
        state=ocp.args.StandardSave(state),
        network=ocp.args.StandardSave(network),
        config=ocp.args.JsonSave(json.loads(config.to_json_best_effort()))))

  def restore_latest(self, abstract_state, config=None):
    """The newest checkpoint that restores, or (None, 0) if there is none.

    Args:
      abstract_state: the TrainState's shapes, dtypes and shardings
        (jax.ShapeDtypeStruct leaves); arrays are restored straight into them.
      config: the run's config, to name the keys where a mismatched checkpoint's differs.

    Returns:
      (state, iteration).

    Raises:
      CheckpointMismatch: the newest readable checkpoint does not fit `abstract_state`.
    """
    for step in sorted(self.manager.all_steps(), reverse=True):
      try:
        saved = self.manager.item_metadata(step)["state"]
        difference = _difference(saved, abstract_state)
      except Exception as e:  # pylint: disable=broad-exception-caught
        self._set_aside(step, e)
        continue
      # Two encodings of one shape (katago, katago_noladders) would restore, each plane
      # meaning another thing than the network learned.
      difference = difference or _encoding_difference(self.directory, step, config)
      if difference:
        raise CheckpointMismatch(
            f"checkpoint {self.directory}/{step} does not fit this config ({difference}"
            f"{_config_difference(self.directory, step, config)}): resume with the run's own "
            f"config (saved in {self.directory}/{step}/config/metadata) or train in a new "
            f"--workdir")
      try:
        restored = self.manager.restore(step, args=ocp.args.Composite(
            state=ocp.args.StandardRestore(abstract_state)))
        return restored["state"], step
      except Exception as e:  # pylint: disable=broad-exception-caught
        self._set_aside(step, e)
    return None, 0

  def _set_aside(self, step: int, error: Exception) -> None:
    """Warns of a damaged checkpoint and moves it out of the way of new saves."""
    from agz_jax.metrics import log  # pylint: disable=import-outside-toplevel
    import jax  # pylint: disable=import-outside-toplevel
    first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
    where = os.path.join(os.path.dirname(self.directory), "checkpoints_damaged", str(step))
    message = (f"checkpoint {self.directory}/{step} cannot be restored and is skipped "
               f"({type(error).__name__}: {first_line[:200]}); moved to {where}")
    warnings.warn(message)
    log("WARNING: " + message)
    if jax.process_index() == 0:
      paths.move(os.path.join(self.directory, str(step)), where)
    self.manager.reload()

  def close(self) -> None:
    self.manager.wait_until_finished()
    self.manager.close()


def _flat(tree, separator: str = "/") -> dict:
  """{'a/b/0': leaf} of a pytree (dataclass fields, dict keys and indices alike)."""
  import jax  # pylint: disable=import-outside-toplevel
  return {jax.tree_util.keystr(path, simple=True, separator=separator): leaf
          for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]}


def _difference(saved, abstract_state) -> str:
  """How a checkpoint's array metadata differs from the expected state ('' if it fits).

  Raises:
    ValueError: the metadata is unreadable (a damaged checkpoint).
  """
  saved = _flat(getattr(saved, "tree", saved))
  if not saved:
    raise ValueError("its array metadata is empty or unreadable")
  wanted = _flat(abstract_state)
  for name in sorted(set(saved) | set(wanted)):
    if name not in saved:
      return f"it has no {name}"
    if name not in wanted:
      return f"it has {name}, which this config's state has not"
    have, want = tuple(saved[name].shape), tuple(wanted[name].shape)
    if have != want:
      return f"{name} has shape {have} there, {want} here"
    if type(saved[name]).__name__ == "ArrayMetadata" and saved[name].dtype != wanted[name].dtype:
      return f"{name} is {saved[name].dtype} there, {wanted[name].dtype} here"
  return ""


def _encoding_difference(directory: str, step: int, config) -> str:
  """'its network reads katago planes, this config katago_noladders' or ''."""
  if config is None or "encoding" not in config.get("model", {}):
    return ""
  try:
    saved = upgrade_config(json.loads(_config_text(os.path.join(directory, str(step)))))
  except (OSError, ValueError):
    return ""
  there, here = saved.get("model", {}).get("encoding"), config.model.encoding
  if there is None or there == here:
    return ""
  return f"its network reads {there} planes, this config {here}"


def _config_difference(directory: str, step: int, config) -> str:
  """'; its config differs at model.channels (8 there, 16 here), ...' or ''."""
  if config is None:
    return ""
  try:
    saved = upgrade_config(json.loads(_config_text(os.path.join(directory, str(step)))))
  except (OSError, ValueError):
    return ""
  here, there = _flat(config.to_dict(), "."), _flat(saved, ".")
  keys = [k for k in sorted(set(here) | set(there))
          if here.get(k) != there.get(k) and k.split(".")[0] in ("model", "game")]
  if not keys:
    return ""
  shown = ", ".join(f"{k} ({there.get(k)} there, {here.get(k)} here)" for k in keys[:4])
  return f"; its config differs at {shown}"


class Preemption:
  """Turns SIGTERM into a flag the loop checks after each iteration."""

  def __init__(self):
    self.requested = False
    try:
      self._old = signal.signal(signal.SIGTERM, self._handler)
    except ValueError:  # not the main thread
      self._old = None

  def _handler(self, signum, frame):
    del signum, frame
    self.requested = True

  def restore(self):
    if self._old is not None:
      signal.signal(signal.SIGTERM, self._old)


def save_if_due(ckpt: Checkpointer, preemption: Preemption, step: int, state, config, *,
                due: bool, unit: str) -> bool:
  """Saves when `due` or when any host got SIGTERM; returns True when the run must stop.

  Every process must call it at the same steps (the SIGTERM check is collective).
  """
  from agz_jax import parallel  # pylint: disable=import-outside-toplevel
  from agz_jax.metrics import log  # pylint: disable=import-outside-toplevel
  stop = parallel.any_process(preemption.requested)  # every host stops at the same step
  if due or stop:
    ckpt.save(step, state, config)
  if stop:
    log(f"SIGTERM: checkpoint of {unit} {step} saved, stopping")
  return stop


def find_checkpoint(path: str) -> str:
  """The checkpoint directory meant by `path`: a training workdir (its newest
  checkpoint), its checkpoints/ folder, or one checkpoint directory; local or a URL.

  Raises:
    FileNotFoundError: no checkpoint there.
    paths.UnsupportedPath: a URL this installation cannot read.
  """
  path = paths.absolute(path)
  where = paths.path(path)
  if (where / "network").is_dir():
    return path
  folder = where / "checkpoints" if (where / "checkpoints").is_dir() else where
  if not folder.is_dir():
    raise FileNotFoundError(f"checkpoint {path!r} does not exist")
  steps = sorted((int(d.name) for d in folder.iterdir() if d.name.isdigit()
                  and (d / "network").is_dir()), reverse=True)
  if not steps:
    raise FileNotFoundError(f"no checkpoint with a network in {path!r}: give a training workdir "
                            f"or one of its checkpoints/<iteration> folders")
  return os.fspath(folder / str(steps[0]))


def export_network(path: str, out: str, dtype: str | None = None) -> str:
  """Copies what play needs of a checkpoint (its network and config, not the training state:
  no optimizer, replay buffer or games) to the folder `out`, for shipping; returns `out`.

  Args:
    path: a training workdir, its checkpoints/ folder or one checkpoint; local or a URL.
    out: the new folder, local.
    dtype: None keeps the arrays as saved; "bfloat16" stores the float32 ones
      in bfloat16, half the bytes (`restore_numpy` reads them back as float32).

  Raises:
    FileNotFoundError: no checkpoint at `path`.
    FileExistsError: `out` exists.
    paths.UnsupportedPath: `out` is a URL, or `path` one this installation cannot read.
    ValueError: an unknown dtype.
  """
  if dtype not in (None, "bfloat16"):
    raise ValueError(f"export: dtype must be bfloat16 or none, got {dtype!r}")
  if paths.is_remote(out):
    raise paths.UnsupportedPath(f"{out!r}: the network is written to a local folder; "
                                f"copy it to the bucket afterwards")
  directory = find_checkpoint(path)
  if os.path.exists(out):
    raise FileExistsError(f"{out} exists: give a new folder")
  os.makedirs(out)
  where = paths.path(directory)
  # Orbax's marker of a finished write names the machine's path: not shipped.
  paths.copy_folder(where / "config", os.path.join(out, "config"), skip=("commit_success.txt",))
  if dtype is None:
    paths.copy_folder(where / "network", os.path.join(out, "network"),
                      skip=("commit_success.txt",))
  else:
    import jax  # pylint: disable=import-outside-toplevel
    import jax.numpy as jnp  # pylint: disable=import-outside-toplevel
    import numpy as np  # pylint: disable=import-outside-toplevel
    narrow = lambda a: a.astype(jnp.bfloat16) if a.dtype == np.float32 else a
    tree = jax.tree.map(narrow, restore_numpy(os.fspath(where / "network")))
    with ocp.PyTreeCheckpointer() as checkpointer:
      checkpointer.save(os.path.abspath(os.path.join(out, "network")), tree)
    marker = os.path.join(out, "network", "commit_success.txt")  # it names this machine's path
    if os.path.exists(marker):
      os.remove(marker)
  with open(os.path.join(out, "_CHECKPOINT_METADATA"), "wb") as f:
    f.write((where / "_CHECKPOINT_METADATA").read_bytes())
  return out


def export_with_archive(path: str, out_dir: str, name: str, dtype: str | None = None) -> str:
  """export_network to OUT_DIR/NAME, and the same folder as one file, OUT_DIR/NAME.tar.gz (to
  carry home from a machine lent for a while); returns the folder."""
  import tarfile  # pylint: disable=import-outside-toplevel
  out = export_network(path, os.path.join(out_dir, name), dtype=dtype)
  with tarfile.open(os.path.join(out_dir, f"{name}.tar.gz"), "w:gz") as tar:
    tar.add(out, arcname=name)
  return out


def load_network(path: str):
  """Loads a trained network for play: (config, variables) from a checkpoint.

  Args:
    path: a training workdir, its checkpoints/ folder or one checkpoint.

  Returns:
    (ml_collections.ConfigDict of the run, {'params', 'batch_stats'} as numpy).
  """
  import ml_collections  # pylint: disable=import-outside-toplevel
  directory = find_checkpoint(path)
  config = ml_collections.ConfigDict(upgrade_config(json.loads(_config_text(directory))))
  return config, restore_numpy(os.path.join(directory, "network"))


def _config_text(directory: str) -> str:
  """The JSON of a checkpoint directory's config item."""
  return (paths.path(directory) / "config" / "metadata").read_text(encoding="utf-8")


def upgrade_config(config: dict) -> dict:
  """A checkpoint's config (as JSON) in today's layout, for checkpoints saved before it.

  Older runs named their input planes in `game.features` (now the network's
  `model.encoding`), had no `model.kind` (self-play runs trained the residual
  network, "sl_policy" runs the policy network), no `task` (all were self-play)
  no `eval.dirichlet_fraction` (evaluation games had no root noise), no
  `search.c_puct` (AlphaGo's search came later: its paper's 5) and, for value networks,
  no `model.relu_1x1` (they were trained with a ReLU after their 1x1 layer).
  """
  config = json.loads(json.dumps(config))
  config.setdefault("task", "selfplay")
  game, model = config.setdefault("game", {}), config.setdefault("model", {})
  game.setdefault("name", "go")
  model.setdefault("encoding", game.pop("features", "agz17"))
  game.pop("features", None)
  model.setdefault("kind", "policy" if config["task"] == "sl_policy" else "resnet")
  if model["kind"] == "value":
    model.setdefault("relu_1x1", True)
  config.setdefault("eval", {}).setdefault("dirichlet_fraction", 0.0)
  if "search" in config:
    config["search"].setdefault("c_puct", 5.0)
  return config


def restore_numpy(path: str):
  """A checkpointed pytree as numpy arrays on the host, whatever devices saved it.

  A run on 8 devices, a GPU or a TPU pod saves arrays with its own shardings;
  a player on one CPU must not need that topology to read them.
  """
  import jax  # pylint: disable=import-outside-toplevel
  import numpy as np  # pylint: disable=import-outside-toplevel
  # Orbax warns that an item folder has no metadata file of its own (the
  # checkpoint folder holds it); a player's stderr should not show that.
  absl_logger = logging.getLogger("absl")
  level = absl_logger.level
  absl_logger.setLevel(logging.ERROR)
  try:
    with ocp.PyTreeCheckpointer() as checkpointer:
      tree = checkpointer.metadata(path).item_metadata.tree
      as_numpy = jax.tree.map(lambda _: ocp.RestoreArgs(restore_type=np.ndarray), tree)
      restored = checkpointer.restore(path, restore_args=as_numpy)
  finally:
    absl_logger.setLevel(level)
  # A network shipped in bfloat16 (export_network) plays in float32.
  widen = lambda a: a.astype(np.float32) if a.dtype.name == "bfloat16" else a
  return jax.tree.map(widen, restored)
