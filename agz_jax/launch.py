"""Starts training from a config file.

  python -m agz_jax.launch --config configs/cpu_9x9.py --workdir workdir/cpu_9x9
  python -m agz_jax.launch --config tpu_v4.py --workdir gs://bucket/run --config.iterations=5000

A bare config name is also looked up in the repository's configs/ folder.
A gs:// workdir needs the `gcs` extra (pip install 'agz_jax[gcs]').
Overrides use `--config.some.key=value`; an unknown key or a value of the wrong
type stops the launch at once. `--time_limit=600` makes the step that runs
past 600 seconds the run's last (evaluated and saved). Multi-host runs outside
Cloud TPU pods pass --coordinator_address, --num_processes and --process_id.
"""

import difflib
import sys

from absl import app, flags, logging
from ml_collections import config_flags

from agz_jax import config_files

_CONFIG = config_flags.DEFINE_config_file("config", None, "Training config file.", lock_config=True)
_WORKDIR = flags.DEFINE_string(
    "workdir", None, "Directory for checkpoints and metrics: a local folder or a URL "
    "(gs://bucket/run, which every host of a pod sees).")
_COORDINATOR = flags.DEFINE_string("coordinator_address", None, "Multi-host: host:port of process 0.")
_NUM_PROCESSES = flags.DEFINE_integer("num_processes", None, "Multi-host: number of processes.")
_PROCESS_ID = flags.DEFINE_integer("process_id", None, "Multi-host: this process's index.")
_TIME_LIMIT = flags.DEFINE_float("time_limit", None, "Seconds (compiling included) after which "
                                 "the step running is the run's last, evaluated and saved.")
flags.mark_flags_as_required(["config", "workdir"])


def resolve_config_path(argv: list[str]) -> list[str]:
  """Finds a bare --config name under configs/ and makes its folder importable as a package
  (config_files.register_package), so that the file's imports of its siblings work."""
  argv = list(argv)
  for i, arg in enumerate(argv):
    if arg == "--config" and i + 1 < len(argv):
      index, value, prefix = i + 1, argv[i + 1], ""
    elif arg.startswith("--config="):
      index, value, prefix = i, arg[len("--config="):], "--config="
    else:
      continue
    path, _, rest = value.partition(":")
    try:
      path = config_files.find(path)
    except FileNotFoundError as e:
      sys.exit(f"launch: {e}")
    config_files.register_package(path)
    argv[index] = prefix + path + (":" + rest if rest else "")
    check_overrides(argv, path)
    break
  return argv


def check_overrides(argv: list[str], config_path: str) -> None:
  """Stops with one clear line when an override names a key the config lacks."""
  config = config_files.load(config_path).get_config()
  known = sorted(_key_paths(config))
  for arg in argv:
    if not arg.startswith("--config."):
      continue
    key = arg[len("--config."):].split("=", 1)[0]
    if key not in known:
      close = difflib.get_close_matches(key, known, n=1)
      hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(known)}"
      sys.exit(f"launch: unknown config key {key!r} in {arg!r}{hint}")


def _key_paths(config, prefix=""):
  for name, value in config.items():
    path = prefix + name
    if hasattr(value, "items"):
      yield from _key_paths(value, path + ".")
    else:
      yield path


def main(argv):
  del argv
  if not flags.FLAGS["verbosity"].present:  # orbax logs every save at INFO; --verbosity=0 shows it
    logging.set_verbosity(logging.WARNING)
  # Imported here so that multi-host start-up happens before JAX touches devices.
  from agz_jax import checkpoint, game, parallel, paths, training  # pylint: disable=import-outside-toplevel
  config = _CONFIG.value
  try:
    paths.path(_WORKDIR.value)
  except paths.UnsupportedPath as e:
    sys.exit(f"launch: --workdir {e}")
  if config.task not in training.TASKS:
    sys.exit(f"launch: config.task must be one of {', '.join(training.TASKS)}, "
             f"got {config.task!r}")
  try:  # the game and the network's planes, before any device is touched
    the_game = game.make(config.game)
    if "encoding" in config.model:
      the_game.module.check_encoding(the_game.cfg, config.model.encoding)
  except ValueError as e:
    sys.exit(f"launch: {e} (config.game, config.model.encoding)")
  parallel.use_cpu_devices(config.mesh.cpu_devices)
  parallel.initialize_distributed(_COORDINATOR.value, _NUM_PROCESSES.value, _PROCESS_ID.value)
  try:
    training.train_and_evaluate(config, _WORKDIR.value, time_limit_s=_TIME_LIMIT.value)
  except (FileNotFoundError, checkpoint.CheckpointMismatch) as e:
    sys.exit(f"launch: {e}")  # missing data, another run's checkpoint: what to do, no traceback


def run():
  app.run(main, argv=resolve_config_path(sys.argv))


if __name__ == "__main__":
  run()
