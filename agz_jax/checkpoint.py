"""Checkpoints with orbax: save, restore the latest good one, skip broken ones.

Checkpoints live in WORKDIR/checkpoints/<iteration>/ with three items: `state`
(the whole TrainState: network, optimizer, games in progress, replay buffer,
PRNG key, counters), `network` (just the variables a player needs: params and
BatchNorm statistics, small enough to load anywhere) and `config` (the run's
config as JSON). Orbax writes a
checkpoint to a temporary directory and renames it when complete, so a run
killed while saving leaves no half checkpoint behind; a checkpoint that is
damaged anyway is skipped with a warning and the one before it restored.

Self-play runs also keep checkpoint 0, the untrained network, for ever: the
yardstick of a learning check (`--checkpoint WORKDIR/checkpoints/0`).
"""

import json
import logging
import os
import signal
import warnings

import orbax.checkpoint as ocp


class Checkpointer:
  """Keeps the last `keep` checkpoints of a run in WORKDIR/checkpoints, and those of `keep_steps`."""

  def __init__(self, workdir: str, keep: int, keep_steps: tuple[int, ...] = ()):
    self.directory = os.path.abspath(os.path.join(workdir, "checkpoints"))
    policies = ocp.checkpoint_managers
    self.manager = ocp.CheckpointManager(
        self.directory,
        options=ocp.CheckpointManagerOptions(
            preservation_policy=policies.AnyPreservationPolicy(
                [policies.LatestN(keep), policies.CustomSteps(keep_steps)]),
            create=True, cleanup_tmp_directories=True),
        item_names=("state", "network", "config"))

  def save(self, iteration: int, state, config) -> None:
    """Saves asynchronously; `close` (or the next save) waits for it."""
    network = {"params": state.params, "batch_stats": state.batch_stats}
    self.manager.save(iteration, args=ocp.args.Composite(
        state=ocp.args.StandardSave(state),
        network=ocp.args.StandardSave(network),
        config=ocp.args.JsonSave(json.loads(config.to_json_best_effort()))))

  def restore_latest(self, abstract_state):
    """The newest checkpoint that restores, or (None, 0) if there is none.

    Args:
      abstract_state: the TrainState's shapes, dtypes and shardings
        (jax.ShapeDtypeStruct leaves); arrays are restored straight into them.

    Returns:
      (state, iteration).
    """
    for step in sorted(self.manager.all_steps(), reverse=True):
      try:
        restored = self.manager.restore(step, args=ocp.args.Composite(
            state=ocp.args.StandardRestore(abstract_state)))
        return restored["state"], step
      except Exception as e:  # pylint: disable=broad-exception-caught
        first_line = (str(e).strip().splitlines() or [type(e).__name__])[0]
        warnings.warn(f"checkpoint {self.directory}/{step} cannot be restored and is skipped "
                      f"({type(e).__name__}: {first_line[:200]})")
    return None, 0

  def close(self) -> None:
    self.manager.wait_until_finished()
    self.manager.close()


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
  checkpoint), its checkpoints/ folder, or one checkpoint directory."""
  path = os.path.abspath(path)
  if os.path.isdir(os.path.join(path, "network")):
    return path
  folder = os.path.join(path, "checkpoints") if os.path.isdir(os.path.join(path, "checkpoints")) else path
  if not os.path.isdir(folder):
    raise FileNotFoundError(f"checkpoint {path!r} does not exist")
  steps = sorted((int(d) for d in os.listdir(folder) if d.isdigit()
                  and os.path.isdir(os.path.join(folder, d, "network"))), reverse=True)
  if not steps:
    raise FileNotFoundError(f"no checkpoint with a network in {path!r}: give a training workdir "
                            f"or one of its checkpoints/<iteration> folders")
  return os.path.join(folder, str(steps[0]))


def load_network(path: str):
  """Loads a trained network for play: (config, variables) from a checkpoint.

  Args:
    path: a training workdir, its checkpoints/ folder or one checkpoint.

  Returns:
    (ml_collections.ConfigDict of the run, {'params', 'batch_stats'} as numpy).
  """
  import ml_collections  # pylint: disable=import-outside-toplevel
  directory = find_checkpoint(path)
  with open(os.path.join(directory, "config", "metadata"), encoding="utf-8") as f:
    config = ml_collections.ConfigDict(upgrade_config(json.load(f)))
  return config, restore_numpy(os.path.join(directory, "network"))


def upgrade_config(config: dict) -> dict:
  """A checkpoint's config (as JSON) in today's layout, for checkpoints saved before it.

  Older runs named their input planes in `game.features` (now the network's
  `model.encoding`), had no `model.kind` (self-play runs trained the residual
  network, "sl_policy" runs the policy network), no `task` (all were self-play)
  and no `eval.dirichlet_fraction` (evaluation games had no root noise).
  """
  config = json.loads(json.dumps(config))
  config.setdefault("task", "selfplay")
  game, model = config.setdefault("game", {}), config.setdefault("model", {})
  game.setdefault("name", "go")
  model.setdefault("encoding", game.pop("features", "agz17"))
  game.pop("features", None)
  model.setdefault("kind", "policy" if config["task"] == "sl_policy" else "resnet")
  config.setdefault("eval", {}).setdefault("dirichlet_fraction", 0.0)
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
      return checkpointer.restore(path, restore_args=as_numpy)
  finally:
    absl_logger.setLevel(level)
