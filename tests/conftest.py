"""Settings and fixtures for the whole suite.

Most of the suite's time on a CPU is XLA compiling. The session keeps one persistent compilation
cache, made empty for it and removed after it: this process, the pytest-xdist workers and every
process a test starts (training runs, GTP engines, the notebook's kernel, the accelerator suite's
parts) inherit it through the environment, so a program is compiled once per session and loaded
afterwards. A cache that outlived the session could hide a compile a test should see; the tests
that count compiles count lowerings (JAX_LOG_COMPILES logs "Compiling ..." when a program is
lowered, cache hit or not) or traces, which a cache does not skip.

Under the README's `-n 2` (with pyproject's `--dist loadfile`) a module is one unit of work: its
module-scoped fixtures (a trained network, running engines, the accelerator suite's run) are
built once, on one worker, and its tests never run at the same time as each other. The heaviest
modules are handed out first, so that the two workers finish together.
"""

import ctypes.util
import gc
import os
import shutil
import sys
import tempfile

import pytest

# The benchmarks some tests load import their shared helpers (bench/timing.py) as a script's
# folder gives them.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "bench"))

# The variable that carries the session's cache folder to the xdist workers (they start after
# the main process has configured itself and inherit its environment).
_SESSION_CACHE = "AGZ_JAX_TEST_COMPILE_CACHE"
_OWNED_CACHE = pytest.StashKey[str]()

# Modules in decreasing order of what they cost on 2 CPU cores (the totals are in
# docs/testing.md): the two workers take them first, so that no long module starts last. The
# rest follow in their usual order.
HEAVY_FIRST = (
    "test_alphago.py",
    "test_accelerator_suite.py",
    "test_parallel.py",
    "test_features_property.py",
    "test_launch.py",
    "test_go_property.py",
    "test_katago.py",
    "test_value.py",
)


def _jemalloc_for_the_processes_started() -> None:
  """jemalloc, where it is installed, for the xdist workers and every process a test starts.

  XLA's compiler allocates and frees small objects by the million (MLIR's attributes and
  patterns); with glibc's malloc a sixth of a compile went to the allocator, and jemalloc
  compiles the AlphaGo player's search some 15% faster (docs/testing.md). A library preloaded
  by name is searched where the system's libraries are; without it nothing changes.
  """
  library = ctypes.util.find_library("jemalloc")
  preload = os.environ.get("LD_PRELOAD", "")
  if library and library not in preload.split(":"):
    os.environ["LD_PRELOAD"] = ":".join(p for p in (library, preload) if p)


def pytest_configure(config):
  cache = os.environ.get(_SESSION_CACHE)
  if cache is None:  # the main process: a new cache, removed at the end
    cache = tempfile.mkdtemp(prefix="agz_jax_compile_cache_")
    os.environ[_SESSION_CACHE] = cache
    config.stash[_OWNED_CACHE] = cache
    _jemalloc_for_the_processes_started()
  os.environ.update({
      "JAX_COMPILATION_CACHE_DIR": cache,
      # Every program, however fast it compiles or small it is: the suite compiles thousands.
      "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
      "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1",
      # XLA's cheapest compile (no LLVM optimisation, no expensive passes), as JAX's own test
      # suite runs: the suite's programs are tiny and run briefly, so compiling them costs more
      # than running them.
      "JAX_DISABLE_MOST_OPTIMIZATIONS": "1",
  })
  import jax  # pylint: disable=import-outside-toplevel
  # Read from the environment when JAX is imported; set again in case something imported it first.
  jax.config.update("jax_compilation_cache_dir", cache)
  jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
  jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
  jax.config.update("jax_disable_most_optimizations", True)
  # No size limit (JAX's default): a limit turns on eviction, which reads every entry's access
  # time at each write, and the suite writes thousands. Several processes write at once; one that
  # reads an entry still being written gets a warning from JAX and compiles the program itself.


def pytest_unconfigure(config):
  cache = config.stash.get(_OWNED_CACHE, None)
  if cache is not None:
    shutil.rmtree(cache, ignore_errors=True)


# Modules whose tests each train or search a network, or share a set-up that does (each more
# than 45 s in all on 2 CPU cores, docs/testing.md): all `slow`, so that `-m "not slow"` stays a
# loop of minutes. Other modules mark their slow tests themselves.
SLOW_MODULES = (
    "test_katago.py", "test_value.py", "test_sl_policy.py", "test_human_dual.py",
    "test_search.py", "test_dots_and_boxes.py", "test_arena.py", "test_selfplay.py",
    "test_rl_policy.py", "test_resume.py", "test_rollout.py", "test_tournament.py",
    "test_selfplay_rules.py", "test_rollout_policy.py", "test_patterns.py", "test_gtp.py",
    "test_training_behaviour.py", "test_public_api.py", "test_search_anytime.py",
    "test_human_value.py",
)


@pytest.hookimpl(tryfirst=True)  # before -m selects by marker
def pytest_collection_modifyitems(items):
  """The heavy modules first (HEAVY_FIRST's order), the others after them in their usual order;
  SLOW_MODULES' tests marked slow."""
  order = {name: i for i, name in enumerate(HEAVY_FIRST)}
  items.sort(key=lambda item: order.get(item.path.name, len(order)))  # stable: keeps the rest
  for item in items:
    if item.path.name in SLOW_MODULES:
      item.add_marker(pytest.mark.slow)


@pytest.hookimpl(trylast=True)  # after the slowest durations
def pytest_terminal_summary(terminalreporter, config):
  """With --durations, the time of each module too (set-up, calls and tear-down, summed over the
  workers), so that every run shows where the time goes."""
  if config.option.durations is None:
    return
  totals, counts = {}, {}
  for reports in terminalreporter.stats.values():
    for report in reports:
      if isinstance(report, pytest.TestReport):
        module = report.nodeid.split("::", 1)[0]
        totals[module] = totals.get(module, 0.0) + report.duration
        counts[module] = counts.get(module, 0) + (report.when == "call")
  terminalreporter.write_sep("=", "module totals (set-up, calls and tear-down)")
  for module, seconds in sorted(totals.items(), key=lambda kv: -kv[1]):
    terminalreporter.write_line(f"{seconds:8.1f}s  {counts[module]:4d} tests  {module}")
  terminalreporter.write_line(f"{sum(totals.values()):8.1f}s  {sum(counts.values()):4d} tests  in all")


@pytest.fixture(autouse=True, scope="module")
def _free_compiled_code():
  """Frees each test module's compiled XLA programs when the module ends.

  The CPU backend maps every compiled program's code into memory. A whole
  suite's worth in one process outgrows the kernel's limit on memory maps
  (vm.max_map_count, 65530 by default), and a later compile then dies with a
  segmentation fault or an abort. The persistent cache brings back from disk
  what a later module compiles again.
  """
  yield
  import jax  # pylint: disable=import-outside-toplevel
  jax.clear_caches()
  gc.collect()
