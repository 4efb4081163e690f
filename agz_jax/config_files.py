"""Config files (`configs/*.py`, or any folder of them): found by name or path, and loaded
so that they may import their siblings (`from configs import default`).

A config file's folder is a package (it has an `__init__.py`); loading a file registers that
package under the folder's name in `sys.modules`, so its siblings import from the folder
given, whatever the current folder: `sys.path` is not changed.
"""

import importlib.util
import os
import sys

# The repository's own configs (an editable install's).
CONFIGS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "configs")


def find(name: str) -> str:
  """The path of a config file: `name` itself where it exists, else configs/`name` under the
  current folder or the repository's configs.

  Raises:
    FileNotFoundError: none of them exists, with what to give instead.
  """
  if os.path.exists(name):
    return name
  for folder in (os.path.join(os.getcwd(), "configs"), CONFIGS):
    candidate = os.path.join(folder, name)
    if os.path.exists(candidate):
      return candidate
  raise FileNotFoundError(f"config file {name!r} not found (looked in the current folder and "
                          f"in configs/); give a path such as configs/cpu_9x9.py")


def register_package(path: str) -> None:
  """Makes the package of the config file at `path` (its folder, where it holds an
  `__init__.py`) importable under the folder's name, so that the file's imports of its
  siblings find them there. A package of that name already imported from elsewhere is
  replaced."""
  folder = os.path.dirname(os.path.abspath(path))
  init = os.path.join(folder, "__init__.py")
  if not os.path.exists(init):
    return  # a lone file: it imports no siblings
  name = os.path.basename(folder)
  known = sys.modules.get(name)
  if known is not None and list(getattr(known, "__path__", [])) == [folder]:
    return
  for module in [m for m in sys.modules if m.startswith(name + ".")]:
    del sys.modules[module]  # the siblings of another folder of that name
  spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[folder])
  package = importlib.util.module_from_spec(spec)
  sys.modules[name] = package
  spec.loader.exec_module(package)


def load(path: str):
  """The config file at `path` as a module (its `get_config()` builds the config)."""
  register_package(path)
  spec = importlib.util.spec_from_file_location(
      f"_agz_config_{os.path.splitext(os.path.basename(path))[0]}", path)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module
