"""Kifu archives: one game per line and an index beside them (the Tom server's 9-dan games).

An archive (tar, read as a stream) holds `Kifu.index` and `kifu/YYYY-MM` files:

  kifu/YYYY-MM   ID<TAB>;B[pd];W[dp];...            one game per line (SGF move syntax)
  Kifu.index     ID<TAB>date<TAB>white<TAB>black<TAB>komi<TAB>result<TAB>moves<TAB>time

A `Joiner` joins the two by ID, in whichever order the archive holds them
(lines met before the index wait for it), giving one `KifuGame` per game
line; `to_game` turns it into a `Game` with the same skip reasons as an SGF
record, plus 'not in index' for a line whose ID the index lacks. Index entries
that no line names are counted (`KifuStats.index_without_game`).
"""

import dataclasses
import re
from typing import NamedTuple

import numpy as np

from agz_jax.data.games import Game
from agz_jax.data.records import Skip, normalise_date, winner_of

INDEX_NAME = "Kifu.index"
_MOVE = re.compile(r";([BW])\[([a-s]{2}|tt|)\]")
_LINE_MOVES = re.compile(r"(?:;[BW]\[(?:[a-s]{2}|tt|)\])*")
_COLOURS = {"B": 1, "W": -1}


class IndexEntry(NamedTuple):
  """One game's line of Kifu.index."""

  date: str
  white: str
  black: str
  komi: str
  result: str


class KifuGame(NamedTuple):
  """One game line and its index entry (None: the index does not name the line's ID)."""

  source: str
  moves: str
  entry: IndexEntry | None


@dataclasses.dataclass
class KifuStats:
  """What reading a kifu archive found besides its games."""

  index_entries: int = 0
  index_without_game: int = 0
  bad_index_lines: int = 0


def is_kifu_member(name: str) -> bool:
  """Whether an archive member is a kifu file or the index (`kifu/YYYY-MM`, `Kifu.index`)."""
  parts = name.replace("\\", "/").split("/")
  return parts[-1] == INDEX_NAME or (len(parts) >= 2 and parts[-2] == "kifu")


def parse_index(text: str, stats: KifuStats) -> dict[str, IndexEntry]:
  """Kifu.index as {id: entry}; a line with fewer than 6 fields is counted and skipped."""
  entries = {}
  for line in text.splitlines():
    if not line.strip():
      continue
    fields = line.split("\t")
    if len(fields) < 6:
      stats.bad_index_lines += 1
      continue
    game_id, date, white, black, komi, result = (f.strip() for f in fields[:6])
    entries[game_id] = IndexEntry(date, white, black, komi, result)
  stats.index_entries += len(entries)
  return entries


class Joiner:
  """Joins one archive's game lines to its index, in whichever order the two come.

  Feed it each kifu member with `add`, then call `finish`; both return the
  (source, KifuGame) pairs ready so far. Lines met before the index wait for
  it; at the end, lines whose ID the index lacks come with entry None, and
  index entries that no line named are counted in `stats.index_without_game`.
  """

  def __init__(self, archive_name: str, stats: KifuStats):
    self.archive_name, self.stats = archive_name, stats
    self.index: dict[str, IndexEntry] | None = None
    self.waiting: list[tuple[str, str, str]] = []
    self.named: set[str] = set()

  def _joined(self, items):
    index = self.index or {}
    for source, game_id, moves in items:
      self.named.add(game_id)
      yield source, KifuGame(source, moves, index.get(game_id))

  def add(self, member_name: str, data: bytes) -> list[tuple[str, KifuGame]]:
    text = data.decode("utf-8", errors="replace")
    if member_name.replace("\\", "/").rsplit("/", 1)[-1] == INDEX_NAME:
      self.index = parse_index(text, self.stats)
      ready, self.waiting = self.waiting, []
      return list(self._joined(ready))
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
      if not line.strip():
        continue
      game_id, _, moves = line.partition("\t")
      game_id = game_id.strip()
      lines.append((f"{self.archive_name}:{member_name}:{game_id or f'line {number}'}", game_id,
                    moves.strip()))
    if self.index is None:
      self.waiting += lines
      return []
    return list(self._joined(lines))

  def finish(self) -> list[tuple[str, KifuGame]]:
    ready, self.waiting = self.waiting, []
    out = list(self._joined(ready))
    self.stats.index_without_game += len(set(self.index or {}) - self.named)
    return out


def to_game(record: KifuGame, size: int) -> Game:
  """The Game of a kifu line (before the length, legality and duplicate checks).

  Args:
    record: the line and its index entry.
    size: the board size (the lines hold no size; points must fit it).

  Raises:
    Skip('not in index'): the index does not name the line's ID.
    Skip('unparsable'): the line is not a sequence of ;B[..] / ;W[..] moves
      (points within the board, or a pass: B[] or B[tt]).
    Skip('non-alternating moves'): one colour moves twice in a row.
  """
  if record.entry is None:
    raise Skip("not in index")
  if not _LINE_MOVES.fullmatch(record.moves):
    raise Skip("unparsable")
  colours, actions = [], []
  for colour, where in _MOVE.findall(record.moves):
    if where in ("", "tt"):
      action = size * size
    else:
      col, row = ord(where[0]) - ord("a"), ord(where[1]) - ord("a")
      if col >= size or row >= size:
        raise Skip("unparsable")
      action = row * size + col
    colours.append(_COLOURS[colour])
    actions.append(action)
    if len(actions) >= 2 and actions[-1] == actions[-2] == size * size:
      break
  if any(a == b for a, b in zip(colours, colours[1:])):
    raise Skip("non-alternating moves")
  entry = record.entry
  try:
    komi = float(entry.komi)
  except ValueError:
    komi = float("nan")
  if not np.isfinite(komi):
    raise Skip("unparsable")
  return Game(setup_black=np.zeros(0, np.int16), setup_white=np.zeros(0, np.int16),
              moves=np.array(actions, np.int16), first_player=colours[0] if colours else 1,
              komi=komi, handicap=0, winner=winner_of(entry.result), result=entry.result,
              date=normalise_date(entry.date), black_name=entry.black, white_name=entry.white,
              source=record.source)
