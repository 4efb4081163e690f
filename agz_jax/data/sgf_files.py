"""Game records to import: SGF files found in folders, SGF and kifu archives streamed."""

import os
import sys
import tarfile
from typing import Iterator, Sequence

from agz_jax.data import kifu

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")


def is_archive(path: str) -> bool:
  return path.lower().endswith(ARCHIVE_SUFFIXES)


def is_sgf(path: str) -> bool:
  return path.lower().endswith(".sgf")


def find_files(sources: Sequence[str]) -> list[tuple[str, str]]:
  """The SGF files and archives to read, as (path, name to report) pairs.

  Folders are searched recursively (sorted, so the order is reproducible);
  a file named directly is read whatever its suffix (archives by suffix).

  Raises:
    FileNotFoundError: a source does not exist.
  """
  found = []
  for src in sources:
    if os.path.isdir(src):
      for folder, dirs, files in os.walk(src):
        dirs.sort()
        for f in sorted(files):
          if is_sgf(f) or is_archive(f):
            path = os.path.join(folder, f)
            found.append((path, os.path.relpath(path, src)))
    elif os.path.isfile(src):
      found.append((src, os.path.basename(src)))
    else:
      raise FileNotFoundError(f"no such file or folder: {src}")
  return found


class Reader:
  """Streams (source, record) from files and archives, counting what it has read.

  A record is an SGF game's bytes, or a `kifu.KifuGame` for a line of a kifu
  archive (`agz_jax.data.kifu`; what its index held beside the games is
  counted in `kifu_stats`). A file or archive that cannot be read is
  reported in `errors` and skipped (the games read from an archive before
  the damage are kept).
  """

  def __init__(self, files: Sequence[tuple[str, str]]):
    self.files = list(files)
    self.total_bytes = sum(os.path.getsize(path) for path, _ in self.files)
    self.files_read = 0
    self.errors: list[str] = []
    self.kifu_stats = kifu.KifuStats()
    self._done_bytes = 0
    self._open = None

  @property
  def bytes_read(self) -> int:
    """Bytes of the input files read so far (compressed bytes for archives)."""
    current = self._open.tell() if self._open is not None and not self._open.closed else 0
    return self._done_bytes + current

  def __iter__(self) -> Iterator[tuple[str, bytes | kifu.KifuGame]]:
    for path, name in self.files:
      try:
        if is_archive(path):
          yield from self._members(path, name)
        else:
          with open(path, "rb") as f:
            data = f.read()
          yield name, data
      except Exception as e:  # pylint: disable=broad-exception-caught
        self.errors.append(f"{name}: {type(e).__name__}: {e}")
        print(f"import_sgf: cannot read {name} ({type(e).__name__}: {e}); skipping the rest of it",
              file=sys.stderr)
      self._open = None
      self._done_bytes += os.path.getsize(path)
      self.files_read += 1

  def _members(self, path: str, name: str) -> Iterator[tuple[str, bytes | kifu.KifuGame]]:
    """The .sgf members and kifu games of an archive, read as a stream."""
    joiner = kifu.Joiner(name, self.kifu_stats)
    with open(path, "rb") as raw:
      self._open = raw
      with tarfile.open(fileobj=raw, mode="r|*") as tar:
        for member in tar:
          if member.isfile() and is_sgf(member.name):
            yield f"{name}:{member.name}", tar.extractfile(member).read()
          elif member.isfile() and kifu.is_kifu_member(member.name):
            yield from joiner.add(member.name, tar.extractfile(member).read())
    yield from joiner.finish()
