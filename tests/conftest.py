"""Fixtures for the whole suite."""

import gc

import pytest


@pytest.fixture(autouse=True, scope="module")
def _free_compiled_code():
  """Frees each test module's compiled XLA programs when the module ends.

  The CPU backend maps every compiled program's code into memory. A whole
  suite's worth in one process outgrows the kernel's limit on memory maps
  (vm.max_map_count, 65530 by default), and a later compile then dies with a
  segmentation fault or an abort.
  """
  yield
  import jax  # pylint: disable=import-outside-toplevel
  jax.clear_caches()
  gc.collect()
