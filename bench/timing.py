"""How every benchmark times and says where it ran.

A timed function is called once first (the compile, and whatever else a first call does),
then `repeats` times; the figure is the median, which a busy moment of the machine moves
little. Peers (ours and pgx's, one setting and another) are timed in the same rounds, one
call of each per round, so that a slower stretch of the machine falls on both.
"""

import importlib.metadata
import os
import platform
import time
from collections.abc import Callable

import jax
import numpy as np

# The libraries whose versions a figure depends on.
LIBRARIES = ("jax", "jaxlib", "flax", "mctx", "optax", "pgx")


def seconds(fn: Callable, *args, repeats: int) -> float:
  """The median time of `repeats` calls of fn(*args) (each waited for), after one call."""
  jax.block_until_ready(fn(*args))
  times = []
  for _ in range(repeats):
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    times.append(time.perf_counter() - start)
  return float(np.median(times))


def rounds(calls: dict[str, Callable[[int], object]], repeats: int) -> dict[str, list[float]]:
  """Each call timed once per round, after one untimed round.

  Args:
    calls: name -> call(round) (round 0 untimed, then 1 .. repeats); what it returns is
      waited for.
    repeats: timed rounds.

  Returns:
    name -> the seconds of its call in each timed round.
  """
  times = {name: [] for name in calls}
  for r in range(repeats + 1):
    for name, call in calls.items():
      start = time.perf_counter()
      jax.block_until_ready(call(r))
      if r:
        times[name].append(time.perf_counter() - start)
  return times


def paired(calls: dict[str, Callable[[int], object]], repeats: int) -> dict[str, float]:
  """The median time of each call, timed in the same rounds (`rounds`)."""
  return {name: float(np.median(t)) for name, t in rounds(calls, repeats).items()}


def _version(name: str) -> str | None:
  try:
    return importlib.metadata.version(name)
  except importlib.metadata.PackageNotFoundError:
    return None


def environment() -> str:
  """One line: the machine (processor, cores, JAX's backend and devices) and the versions of
  the libraries a figure depends on."""
  devices = jax.devices()
  kinds = sorted({d.device_kind for d in devices})
  processor = platform.processor() or platform.machine()
  versions = ", ".join(f"{name} {v}" for name in LIBRARIES if (v := _version(name)))
  return (f"{processor}, {os.cpu_count()} cores; backend {jax.default_backend()}, "
          f"{len(devices)} device(s) ({', '.join(kinds)}); python {platform.python_version()}, "
          f"{versions}")
