"""Human game records as numpy arrays: the GameArchive, its file, and views of it.

A GameArchive holds G games of one board size. Variable-length parts (moves,
setup stones) are concatenated into one array each, with an int64 offsets array
of G + 1 entries: game i's moves are `moves[offsets[i]:offsets[i + 1]]`.

Actions follow `agz_jax.go`: a point is row * size + col with row 0 at the top,
and size * size is a pass. Colours: 1 black, -1 white.

On disk the archive is one `games.npz` (numpy's compressed format, read without
pickle): strings are fixed-width unicode arrays, the board size a scalar.
"""

import os
import re
from typing import NamedTuple, Sequence

import numpy as np

GAMES_FILE = "games.npz"

_INT_FIELDS = {
    "moves": np.int16, "offsets": np.int64,
    "setup_black": np.int16, "setup_black_offsets": np.int64,
    "setup_white": np.int16, "setup_white_offsets": np.int64,
    "first_player": np.int8, "komi": np.float32, "handicap": np.int8, "winner": np.int8,
}
_STR_FIELDS = ("result", "date", "black_name", "white_name", "black_rank", "white_rank", "source")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class Game(NamedTuple):
  """One game, as stored in a GameArchive.

  Attributes:
    setup_black: int16 [Sb], black setup stones (SGF AB, handicap stones).
    setup_white: int16 [Sw], white setup stones (SGF AW).
    moves: int16 [L], the actions in order, colours alternating.
    first_player: 1 black or -1 white, the colour of the first move.
    komi: points given to white.
    handicap: SGF HA, 0 when absent.
    winner: 1 black won, -1 white won, 0 unknown, draw or void.
    result: the SGF RE text ('' when absent), e.g. 'W+Resign', 'B+3.5'.
    date: YYYY-MM-DD, or '' when unknown.
    black_name, white_name, black_rank, white_rank: SGF PB, PW, BR, WR ('' when absent).
    source: where the game came from: a file path relative to the imported
      folder, or 'ARCHIVE:MEMBER' for a game inside a tar archive.
  """

  setup_black: np.ndarray
  setup_white: np.ndarray
  moves: np.ndarray
  first_player: int
  komi: float
  handicap: int = 0
  winner: int = 0
  result: str = ""
  date: str = ""
  black_name: str = ""
  white_name: str = ""
  black_rank: str = ""
  white_rank: str = ""
  source: str = ""


class GameArchive(NamedTuple):
  """G games of one board size as numpy arrays (see the module docstring).

  Attributes:
    size: board side N.
    moves: int16 [M], all games' actions concatenated.
    offsets: int64 [G + 1], game i's moves are moves[offsets[i]:offsets[i + 1]].
    setup_black, setup_white: int16, setup stones concatenated.
    setup_black_offsets, setup_white_offsets: int64 [G + 1].
    first_player: int8 [G], 1 black, -1 white.
    komi: float32 [G].
    handicap: int8 [G].
    winner: int8 [G], 1 black won, -1 white won, 0 unknown, draw or void.
    result, date, black_name, white_name, black_rank, white_rank, source:
      unicode [G]; see Game.
  """

  size: int
  moves: np.ndarray
  offsets: np.ndarray
  setup_black: np.ndarray
  setup_black_offsets: np.ndarray
  setup_white: np.ndarray
  setup_white_offsets: np.ndarray
  first_player: np.ndarray
  komi: np.ndarray
  handicap: np.ndarray
  winner: np.ndarray
  result: np.ndarray
  date: np.ndarray
  black_name: np.ndarray
  white_name: np.ndarray
  black_rank: np.ndarray
  white_rank: np.ndarray
  source: np.ndarray

  @property
  def num_games(self) -> int:
    """G, the number of games."""
    return len(self.offsets) - 1

  def lengths(self) -> np.ndarray:
    """int64 [G]: the number of moves of each game."""
    return np.diff(self.offsets)


def _concat(parts: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
  """Concatenates int arrays into (int16 values, int64 [len(parts) + 1] offsets)."""
  offsets = np.zeros(len(parts) + 1, np.int64)
  offsets[1:] = np.cumsum([len(p) for p in parts])
  values = np.concatenate([np.asarray(p, np.int16) for p in parts]) if parts else np.zeros(0)
  return values.astype(np.int16), offsets


def _strings(values: Sequence[str]) -> np.ndarray:
  """A fixed-width unicode array (never an object array), '<U1' when empty."""
  return np.array(list(values), dtype=str) if len(values) else np.zeros(0, "<U1")


def from_games(size: int, games: Sequence[Game]) -> GameArchive:
  """Packs games (of one board size) into a GameArchive, in the given order."""
  moves, offsets = _concat([g.moves for g in games])
  black, black_offsets = _concat([g.setup_black for g in games])
  white, white_offsets = _concat([g.setup_white for g in games])
  column = lambda name, dtype: np.array([getattr(g, name) for g in games], dtype).reshape(-1)
  return GameArchive(
      size=int(size), moves=moves, offsets=offsets,
      setup_black=black, setup_black_offsets=black_offsets,
      setup_white=white, setup_white_offsets=white_offsets,
      first_player=column("first_player", np.int8), komi=column("komi", np.float32),
      handicap=column("handicap", np.int8), winner=column("winner", np.int8),
      **{name: _strings([getattr(g, name) for g in games]) for name in _STR_FIELDS})


def game(archive: GameArchive, i: int) -> Game:
  """Game i of the archive: setup, moves, first player, komi and what is known about it."""
  i = int(i)
  if not 0 <= i < archive.num_games:
    raise IndexError(f"game {i} is out of range: the archive has {archive.num_games} games")
  part = lambda values, offsets: values[offsets[i]:offsets[i + 1]]
  return Game(
      setup_black=part(archive.setup_black, archive.setup_black_offsets),
      setup_white=part(archive.setup_white, archive.setup_white_offsets),
      moves=part(archive.moves, archive.offsets),
      first_player=int(archive.first_player[i]), komi=float(archive.komi[i]),
      handicap=int(archive.handicap[i]), winner=int(archive.winner[i]),
      **{name: str(getattr(archive, name)[i]) for name in _STR_FIELDS})


def save(archive: GameArchive, directory: str) -> str:
  """Writes DIRECTORY/games.npz (replacing any earlier one) and returns its path.

  The file is written under a temporary name and renamed, so a reader never
  sees half a file.
  """
  os.makedirs(directory, exist_ok=True)
  path = os.path.join(directory, GAMES_FILE)
  arrays = {name: np.asarray(getattr(archive, name)) for name in (*_INT_FIELDS, *_STR_FIELDS)}
  arrays["size"] = np.int32(archive.size)
  tmp = path + ".tmp"
  with open(tmp, "wb") as f:
    np.savez_compressed(f, **arrays)
  os.replace(tmp, path)
  return path


def _check(path: str, archive: GameArchive):
  """Raises ValueError when the arrays of a loaded archive do not fit together."""
  g = archive.num_games
  pairs = (("moves", "offsets"), ("setup_black", "setup_black_offsets"),
           ("setup_white", "setup_white_offsets"))
  for values, offsets in pairs:
    o = getattr(archive, offsets)
    if len(o) != g + 1 or o[0] != 0 or o[-1] != len(getattr(archive, values)) or np.any(np.diff(o) < 0):
      raise ValueError(f"{path}: '{offsets}' does not fit '{values}'; the file is damaged: "
                       "re-run python -m agz_jax.data.import_sgf")
  for name in ("first_player", "komi", "handicap", "winner", *_STR_FIELDS):
    if getattr(archive, name).shape != (g,):
      raise ValueError(f"{path}: '{name}' has shape {getattr(archive, name).shape}, expected ({g},); "
                       "re-run python -m agz_jax.data.import_sgf")


def load(directory: str) -> GameArchive:
  """Reads DIRECTORY/games.npz, as written by `save`, fully into memory.

  Raises:
    FileNotFoundError: there is no games.npz in the directory.
    ValueError: the file cannot be read or lacks arrays, or they do not fit
      together; the message names the file and says to re-run the import.
  """
  path = os.path.join(directory, GAMES_FILE)
  if not os.path.isfile(path):
    raise FileNotFoundError(f"no {GAMES_FILE} in {directory}: run python -m agz_jax.data.import_sgf "
                            f"SGF_SOURCES --out {directory} first")
  try:
    with np.load(path, allow_pickle=False) as data:
      arrays = {name: data[name] for name in data.files}
  except Exception as e:  # a damaged zip, a truncated array, pickled objects...
    raise ValueError(f"cannot read {path} ({type(e).__name__}: {e}); "
                     "re-run python -m agz_jax.data.import_sgf") from None
  missing = [name for name in ("size", *_INT_FIELDS, *_STR_FIELDS) if name not in arrays]
  if missing:
    raise ValueError(f"{path} lacks {', '.join(missing)}: it was not written by "
                     "agz_jax.data.save; re-run python -m agz_jax.data.import_sgf")
  fields = {name: arrays[name].astype(dtype, copy=False) for name, dtype in _INT_FIELDS.items()}
  fields.update({name: arrays[name] for name in _STR_FIELDS})
  archive = GameArchive(size=int(arrays["size"]), **fields)
  _check(path, archive)
  return archive


def split_by_date(archive: GameArchive, val_from: str) -> tuple[np.ndarray, np.ndarray]:
  """Splits the games into training and validation sets by date.

  Validation gets every game dated on or after its source's first validation
  date; training gets the earlier games and those with an unknown date (a game
  of unknown date cannot be shown to be later than the training games, so it
  never enters the validation set). Every game is in exactly one set.

  Args:
    archive: the games.
    val_from: the first validation date, YYYY-MM-DD, for every game; or a
      comma-separated list of such a date (for games no other entry names) and
      PREFIX=YYYY-MM-DD entries for the games whose source starts with PREFIX
      (the first matching entry wins). "2017-05-01,tom-=2011-12-01" holds out
      the KGS games from May 2017 and the Tom games from December 2011; with
      no bare date, the games of other sources are all training games.

  Returns:
    (train, val): int64 game indices, each increasing.
  """
  default, rules = None, []
  for entry in (e.strip() for e in val_from.split(",")):
    prefix, _, date = entry.rpartition("=")
    if not _DATE.fullmatch(date) or (not prefix and "=" in entry):
      raise ValueError(f"split_by_date: val_from must be a date YYYY-MM-DD or a list of them and "
                       f"PREFIX=YYYY-MM-DD entries, got {val_from!r}")
    if prefix:
      rules.append((prefix, date))
    elif default is None:
      default = date
  dates = archive.date
  first = np.full(archive.num_games, default or "9999-99-99", dtype=dates.dtype)
  claimed = np.zeros(archive.num_games, bool)
  for prefix, date in rules:
    mine = np.char.startswith(archive.source, prefix) & ~claimed
    first[mine], claimed = date, claimed | mine
  val = (dates != "") & (dates >= first)
  return np.flatnonzero(~val).astype(np.int64), np.flatnonzero(val).astype(np.int64)


# A win on time, by forfeit or by the opponent's disconnection ('W+Time', 'B+T', 'W+Forfeit',
# 'B+Offline'): 16% of the KGS games, 6% of Tom's.
_OFF_THE_BOARD = re.compile(r"\s*[BW]\+\s*(t|time|timeout|f|forfeit|offline)\s*$", re.IGNORECASE)


def decided_on_the_board(results) -> np.ndarray:
  """bool [G]: the results not won on time, by forfeit or by a disconnection, where the loser
  may well have been ahead on the board (common late in fast games)."""
  return np.array([not _OFF_THE_BOARD.match(str(r)) for r in results], dtype=bool)


def value_games(archive: GameArchive, komi_range) -> np.ndarray:
  """bool [G]: the games whose result can train a value: even (no handicap, no setup stones), a
  komi in komi_range (LOW, HIGH), a winner, decided on the board (by resignation or the count,
  not on time, by forfeit or a disconnection: `decided_on_the_board`)."""
  low, high = komi_range
  no_setup = ((np.diff(archive.setup_black_offsets) == 0)
              & (np.diff(archive.setup_white_offsets) == 0))
  return ((archive.handicap == 0) & no_setup & (archive.komi >= low) & (archive.komi <= high)
          & (archive.winner != 0) & decided_on_the_board(archive.result))


def padded_moves(archive: GameArchive, idx, length: int) -> np.ndarray:
  """The moves of games `idx` as one int16 [len(idx), length] array.

  Row k holds game idx[k]'s first `length` moves (longer games are cut there),
  then -1 to the end of the row.
  """
  idx = np.asarray(idx, np.int64).reshape(-1)
  starts = archive.offsets[idx]
  lengths = np.minimum(archive.offsets[idx + 1] - starts, length)
  cols = np.arange(length, dtype=np.int64)
  valid = cols[None, :] < lengths[:, None]
  if not len(archive.moves):
    return np.full((len(idx), length), -1, np.int16)
  where = np.where(valid, starts[:, None] + cols[None, :], 0)
  return np.where(valid, archive.moves[where], -1).astype(np.int16)
