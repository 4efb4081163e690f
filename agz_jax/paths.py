"""Workdir paths on any filesystem orbax writes to: local folders and buckets (gs://).

A training run's workdir, and every path under it (checkpoints, metrics.jsonl,
TensorBoard events, SGF samples, plots), is either a local folder or a URL such
as gs://bucket/run that every host of a pod sees. Orbax writes checkpoints to
either through tensorstore; everything else reads and writes them through
`path`, an `etils.epath.Path` (pathlib's interface; gs:// goes through gcsfs,
which finds a TPU VM's credentials itself). Objects in a bucket cannot be
appended to, renamed or made into folders: writers there write whole files.
"""

import importlib.util
import os
import shutil

from etils import epath

# URL scheme -> (the fsspec package epath needs for it, the pip extra that installs it).
_PACKAGES = {"gs": ("gcsfs", "agz_jax[gcs]")}


class UnsupportedPath(ValueError):
  """A path of a filesystem this installation cannot reach."""


def is_remote(p) -> bool:
  """Whether `p` (a string or path) is a URL such as gs://bucket/run rather than a local path."""
  return "://" in os.fspath(p)


def path(p) -> epath.Path:
  """`p` as an epath.Path, local or remote.

  Raises:
    UnsupportedPath: a URL whose scheme needs a package that is not installed, or
      that no filesystem serves.
  """
  p = os.fspath(p)
  if is_remote(p):
    scheme = p.split("://", 1)[0]
    if scheme not in _PACKAGES:
      raise UnsupportedPath(f"{p!r}: {scheme}:// paths are not supported; give a local folder "
                            f"or a gs:// URL")
    package, extra = _PACKAGES[scheme]
    if importlib.util.find_spec(package) is None:
      raise UnsupportedPath(f"{p!r}: {scheme}:// paths need the {package} package: "
                            f"pip install '{extra}'")
  return epath.Path(p)


def absolute(p) -> str:
  """A local path made absolute; a URL as it is."""
  p = os.fspath(p)
  return p if is_remote(p) else os.path.abspath(p)


def makedirs(p) -> None:
  """Creates a local folder and its parents; nothing for a URL (buckets have no folders)."""
  if not is_remote(path(p)):
    os.makedirs(p, exist_ok=True)


def move(src, dst) -> None:
  """Moves folder `src` to `dst`, replacing whatever is there.

  In a bucket, where nothing can be renamed, each object is copied, then removed.
  """
  src, dst = path(src), path(dst)
  if dst.exists():
    dst.rmtree()
  if not is_remote(src):
    os.makedirs(dst.parent, exist_ok=True)
    shutil.move(src, dst)
    return
  for item in _files(src):
    (dst / item.relative_to(src)).write_bytes(item.read_bytes())
  src.rmtree()


def copy_folder(src, dst, skip=()) -> None:
  """Copies folder `src` (local or a URL) to the new local folder `dst`, leaving out the files
  named in `skip`."""
  if not is_remote(src):
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(*skip))
    return
  src = path(src)
  os.makedirs(dst)
  for item in _files(src):
    if item.name in skip:
      continue
    target = os.path.join(dst, os.fspath(item.relative_to(src)))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "wb") as f:
      f.write(item.read_bytes())


def _files(folder: epath.Path):
  for item in folder.iterdir():
    if item.is_dir():
      yield from _files(item)
    else:
      yield item
