"""Devices: the mesh, how the training state is laid out on it, multi-host start-up.

One mesh axis, 'data', over every device of every host. Games, the replay
buffer and minibatches are split along it; network parameters and optimizer
state are replicated. The same code runs on one CPU, 8 fake CPU devices, a GPU
or a TPU pod.
"""

import os

import jax
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec

DATA = "data"


def initialize_distributed(coordinator_address: str | None = None, num_processes: int | None = None,
                           process_id: int | None = None) -> None:
  """Connects the hosts of a multi-host run (call before anything touches devices).

  On Cloud TPU pods every argument is found automatically; elsewhere pass all
  three. Does nothing when no argument is given and no TPU pod is detected.
  """
  given = [x is not None for x in (coordinator_address, num_processes, process_id)]
  if any(given) and not all(given):
    raise ValueError("multi-host: give all of coordinator_address, num_processes and process_id, "
                     "or none of them")
  if all(given):
    jax.distributed.initialize(coordinator_address=coordinator_address,
                               num_processes=num_processes, process_id=process_id)
  elif _on_tpu_pod():
    jax.distributed.initialize()


def use_cpu_devices(count: int) -> None:
  """Splits the host CPU into `count` JAX devices (call before anything touches devices).

  XLA on CPU runs each convolution on one core, so on a machine without an
  accelerator a single device leaves the other cores idle while the network
  runs; with one device per core, games and minibatches are split over the
  cores like over the chips of a pod. It changes nothing where an accelerator
  is the default backend, nothing when XLA_FLAGS already sets a count (as the
  tests do), and nothing when called again with the count already set (a
  notebook cell run twice).
  """
  if count < 1:
    raise ValueError(f"the CPU devices (mesh.cpu_devices, --cpu-devices) must be at least 1, got {count}")
  if (count == 1 or "xla_force_host_platform_device_count" in os.environ.get("XLA_FLAGS", "")
      or jax.config.jax_num_cpu_devices == count):
    return
  jax.config.update("jax_num_cpu_devices", count)


def default_compile_cache() -> str:
  """Where programs compiled by one process are kept for the next: JAX_COMPILATION_CACHE_DIR
  when set, else agz_jax/jax under the user's cache folder (XDG_CACHE_HOME or ~/.cache)."""
  if os.environ.get("JAX_COMPILATION_CACHE_DIR"):
    return os.environ["JAX_COMPILATION_CACHE_DIR"]
  base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
  return os.path.join(base, "agz_jax", "jax")


def add_engine_flags(parser) -> None:
  """The flags of a process that plays (the GTP engine, the web page): its CPU devices, on each
  of which a search grows a tree, and the folder of its compiled searches (use_engine_flags)."""
  parser.add_argument("--cpu-devices", type=int, default=None,
                      help="on a machine without an accelerator, split the CPU into this many "
                           "devices, on each of which a PUCT or AlphaGo search grows a tree of "
                           "the position at the same time (default: one per core this process "
                           "may use)")
  parser.add_argument("--compile-cache", default=default_compile_cache(),
                      help="folder where compiled searches are kept, so that the next start "
                           "skips compiling ('none': off; default %(default)s)")


def use_engine_flags(args) -> None:
  """Applies add_engine_flags' flags; call before anything touches devices or compiles.

  Raises:
    ValueError: a device count below 1.
  """
  use_cpu_devices(len(os.sched_getaffinity(0)) if args.cpu_devices is None else args.cpu_devices)
  use_compile_cache(None if args.compile_cache == "none" else args.compile_cache)


def use_compile_cache(directory: str | None, min_compile_seconds: float = 0.5) -> None:
  """Keeps compiled programs in `directory` (None: off) for later processes to load.

  A GTP engine compiles its search at its first move (tens of seconds on a CPU
  for an AlphaGo player); with the cache, a GUI or a match that starts the
  engine again loads it instead. JAX keys every entry on the program, the
  devices and the compiler's flags, so a stale entry is never used. Programs
  that compile faster than `min_compile_seconds` are not kept. Call before the
  first compile.
  """
  if directory is None:
    return
  jax.config.update("jax_compilation_cache_dir", directory)
  jax.config.update("jax_persistent_cache_min_compile_time_secs", min_compile_seconds)
  jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def _on_tpu_pod() -> bool:
  """Cloud TPU VMs of a multi-host slice list all their workers in this variable."""
  return "," in os.environ.get("TPU_WORKER_HOSTNAMES", "")


def make_mesh(num_devices: int = -1) -> Mesh:
  """A 1-D 'data' mesh over the first `num_devices` devices (-1: all, on all hosts)."""
  devices = jax.devices()
  if num_devices != -1:
    if not 1 <= num_devices <= len(devices):
      raise ValueError(f"mesh: asked for {num_devices} devices, {len(devices)} available")
    if jax.process_count() > 1 and num_devices != len(devices):
      raise ValueError(f"mesh: a multi-host run uses every device (mesh.num_devices=-1), "
                       f"got {num_devices} of {len(devices)}")
    devices = devices[:num_devices]
  return Mesh(np.asarray(devices), (DATA,))


def per_shard(mesh: Mesh | None, fn, *, games_arg: int, out_specs):
  """`fn` run by every device on its own shard of the games, with no communication.

  Args:
    mesh: the 'data' mesh; None runs `fn` on the whole batch.
    fn: fn(*args, first_game=...) where args[games_arg] is a pytree of games
      (leading axis split over the devices) and the other args are replicated;
      `first_game` is the global index of the shard's first game.
    games_arg: position of the games among fn's arguments.
    out_specs: PartitionSpec (prefix) tree of fn's outputs, with DATA on each
      output's game axis.

  Returns:
    A function of the same arguments as fn, less first_game.
  """
  if mesh is None:
    return lambda *args: fn(*args, first_game=0)

  def local(*args):
    games = jax.tree.leaves(args[games_arg])[0].shape[0]
    return fn(*args, first_game=jax.lax.axis_index(DATA) * games)

  def call(*args):
    in_specs = tuple(PartitionSpec(DATA) if i == games_arg else PartitionSpec()
                     for i in range(len(args)))
    return jax.shard_map(local, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                         check_vma=False)(*args)

  return call


def on_every_shard(mesh: Mesh, fn, out_specs=PartitionSpec()):
  """`fn` run by every device on the same (replicated) arguments, told which shard it is.

  For steps whose data each device makes itself (a minibatch sampled on the
  device): fn(*args, shard=i) draws its own share from `i`. With the default
  out_specs its results are taken as replicated, so it must first reduce
  whatever depends on its share over DATA (`lax.pmean` of the gradients, say);
  with PartitionSpec(DATA) each device's results are rows of the outputs.
  """
  def local(*args):
    return fn(*args, shard=jax.lax.axis_index(DATA))

  def call(*args):
    return jax.shard_map(local, mesh=mesh, in_specs=(PartitionSpec(),) * len(args),
                         out_specs=out_specs, check_vma=False)(*args)

  return call


def collectives_deadlock(mesh: Mesh) -> bool:
  """Whether XLA's collectives are to be avoided on this mesh: several CPU devices of one process.

  Their in-process all-reduce was seen to wait forever for a device whose
  work had not started while the machine was busy (XLA's CPU runtime runs
  every device on one thread pool).
  """
  devices = mesh.devices.flatten()
  return len(devices) > 1 and devices[0].platform == "cpu" and jax.process_count() == 1


def replicated(mesh: Mesh) -> NamedSharding:
  return NamedSharding(mesh, PartitionSpec())


def split_leading(mesh: Mesh) -> NamedSharding:
  """Split along the first axis (games, buffer slots, minibatch)."""
  return NamedSharding(mesh, PartitionSpec(DATA))


def check_divisible(mesh: Mesh, **sizes: int) -> None:
  devices = mesh.devices.size
  for name, size in sizes.items():
    if size % devices:
      raise ValueError(f"{name}={size} must be a multiple of the number of devices ({devices})")


def to_host(tree):
  """Fetches replicated (or fully addressable) arrays to numpy on every host."""
  def fetch(x):
    if isinstance(x, jax.Array) and not x.is_fully_addressable:
      x = x.addressable_data(0)
    return np.asarray(x)
  return jax.tree.map(fetch, tree)


def any_process(flag: bool) -> bool:
  """True on every process when `flag` is true on any one; all processes must call it together."""
  if jax.process_count() == 1:
    return flag
  return bool(np.any(multihost_utils.process_allgather(np.bool_(flag))))
