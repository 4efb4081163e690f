"""Imports human game records (the KGS 6d+ SGF archives, the Tom 9-dan kifu archive) into a
GameArchive.

Usage:
  python -m agz_jax.data.import_sgf SRC... --out DIR [--size 19] [--min-moves 20]
  python -m agz_jax.data.import_sgf ../shared/data/kgs ../shared/data/tom --out data/human

SRC is a folder (searched recursively for .sgf files and archives), an .sgf
file or a .tar.gz / .tgz / .tar.bz2 / .tar.xz archive. An archive's .sgf
members and its kifu games (`kifu/YYYY-MM` files of one game per line, joined
to `Kifu.index` by ID: `agz_jax.data.kifu`) are streamed, never extracted to
disk. Writes DIR/games.npz (see `agz_jax.data.games`) and DIR/import.json (the
counts printed at the end). Games of every source go through the same checks,
so a game found in two sources is kept once.

What is kept of a game (its main line; variations are ignored):
  - setup stones: AB / AW of the root node (AE is ignored); handicap: HA, 0
    when absent or not an integer from 0 to 127.
  - moves as actions (row 0 at the top, pass = size * size; B[] and, on boards
    up to 19x19, B[tt] are passes), cut after the first two consecutive passes
    (both kept): whatever follows the end of the game is dropped.
  - the first player: the colour of the first move.
  - komi: KM; when KM is absent or not a number, 0.0 for handicap games (HA of
    2 or more, or black setup stones) and 6.5 otherwise.
  - the result RE as text ('' when absent) and the winner it names: 1 for
    'B+...', -1 for 'W+...', 0 otherwise (draw, void, unknown, no RE).
  - PB, PW, BR, WR as text; DT as YYYY-MM-DD from the first date in it ('' when
    it has no full date, e.g. '2001' or '?').
  - the source: the file's path relative to the folder given, or
    'ARCHIVE:MEMBER' for an archive member ('ARCHIVE:MEMBER:ID' for a kifu game).
  A kifu game has no setup stones; its komi, result, date (YYYY-MM-DD from the
  index's 'YYYY.MM.DD hh:mm') and players come from its index entry.
  Games whose result names no winner are kept (winner 0: they train a policy,
  not a value) and counted as 'of them no winner'.

Games are skipped, and counted, for these reasons (checked in this order):
  unparsable: not an SGF game sgfmill can read (or a bad move property); a
    kifu line that is not ;B[..];W[..]... moves on the board, or whose komi is
    not a number.
  not in index: a kifu line whose ID its archive's Kifu.index lacks (index
    entries that no line names are counted too).
  wrong size: the board is not --size.
  bad setup: setup stones after the root node, a point given to both colours,
    or a setup chain without a liberty.
  non-alternating moves: one colour moves twice in a row.
  too short: fewer than --min-moves moves (passes count).
  too long: more than 2 * size * size moves.
  illegal move: a move that `agz_jax.go` refuses (occupied point, suicide,
    positional superko); the reasons are counted too.
  duplicate: same setup, first player and moves as an earlier kept game.

Legality is checked in batches: the games are sorted by length, a chunk of them
is padded into [chunk, L] (passes after the end, L a multiple of 64) and played
with one compiled `lax.scan` of `vmap(go.step)` per 64 moves. go.step refuses an
illegal move by setting `forfeit` and leaving the position as it was, so the
final state names the illegal move (its `move_count`) and is the position in
which the host asks `go.illegal_reason` why.
"""

import argparse
import dataclasses
import functools
import json
import os
import sys
import time
from typing import NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from sgfmill import sgf

from agz_jax import go
from agz_jax.data import games as games_lib, kifu
from agz_jax.data.records import SKIP_REASONS, Skip, normalise_date, winner_of
from agz_jax.data.sgf_files import Reader, find_files


ILLEGAL_REASONS = ("occupied", "suicide", "superko")
REPORT_FILE = "import.json"

_BLOCK = 64          # moves per compiled scan; game lengths are padded to a multiple of it
_SETUP_WIDTH = 32    # setup lists are padded to a multiple of this
_BUFFER_CHUNKS = 8   # games are sorted by length within this many chunks
_KOMI_EVEN, _KOMI_HANDICAP = 6.5, 0.0
_COLOURS = {"b": go.BLACK, "w": go.WHITE}


class IllegalMove(NamedTuple):
  """An illegal move found in a game: its number (1 = first move) and why."""

  source: str
  move: int
  action: int
  reason: str


# ----------------------------------------------------------------------------
# One SGF game.


def _value(node, ident):
  """A root property's value as sgfmill types it, None when absent or unreadable."""
  try:
    return node.get(ident) if node.has_property(ident) else None
  except ValueError:
    return None


def _text(node, ident: str) -> str:
  """A root property as text, '' when absent or unreadable."""
  value = _value(node, ident)
  return "" if value is None else str(value).strip()


def _handicap(root) -> int:
  value = _value(root, "HA")
  return value if isinstance(value, int) and 0 <= value <= 127 else 0


def _komi(root, handicap: int, black_setup) -> float:
  value = _value(root, "KM")
  if isinstance(value, float) and np.isfinite(value):
    return value
  return _KOMI_HANDICAP if handicap >= 2 or len(black_setup) else _KOMI_EVEN


def _setup(cfg: go.GoConfig, sgf_game) -> tuple[list[int], list[int]]:
  """The root's setup stones as sorted points; Skip('bad setup') when they are not a position."""
  nodes = sgf_game.get_main_sequence()
  if any(node.has_setup_stones() for node in nodes[1:]):
    raise Skip("bad setup")
  black, white, _ = sgf_game.get_root().get_setup_stones()
  black = sorted(go.sgf_move_to_action(cfg.size, m) for m in black)
  white = sorted(go.sgf_move_to_action(cfg.size, m) for m in white)
  try:
    go.check_setup(cfg, black, white)
  except ValueError:
    raise Skip("bad setup") from None
  return black, white


def _moves(size: int, sgf_game) -> tuple[list[int], list[int]]:
  """(colours, actions) of the main line, cut after two consecutive passes."""
  colours, actions = [], []
  for node in sgf_game.get_main_sequence():
    colour, move = node.get_move()
    if colour is None:
      continue
    colours.append(_COLOURS[colour])
    actions.append(go.sgf_move_to_action(size, move))
    if len(actions) >= 2 and actions[-1] == actions[-2] == size * size:
      break
  return colours, actions


def parse_game(data: bytes, size: int = 19, source: str = "") -> games_lib.Game:
  """Reads one SGF game record.

  Args:
    data: the SGF file's bytes.
    size: the board size to accept.
    source: stored as the game's source.

  Returns:
    The Game (before the length, legality and duplicate checks).

  Raises:
    Skip: with reason 'unparsable', 'wrong size', 'bad setup' or
      'non-alternating moves'.
  """
  try:
    sgf_game = sgf.Sgf_game.from_bytes(data)
    game_size = sgf_game.get_size()
  except Exception:  # pylint: disable=broad-exception-caught
    raise Skip("unparsable") from None
  if game_size != size:
    raise Skip("wrong size")
  cfg = go.GoConfig(size=size)
  try:
    colours, actions = _moves(size, sgf_game)
    black, white = _setup(cfg, sgf_game)
  except Skip:
    raise
  except Exception:  # pylint: disable=broad-exception-caught
    raise Skip("unparsable") from None
  if any(a == b for a, b in zip(colours, colours[1:])):
    raise Skip("non-alternating moves")
  root = sgf_game.get_root()
  handicap = _handicap(root)
  result = _text(root, "RE")
  return games_lib.Game(
      setup_black=np.array(black, np.int16), setup_white=np.array(white, np.int16),
      moves=np.array(actions, np.int16), first_player=colours[0] if colours else go.BLACK,
      komi=_komi(root, handicap, black), handicap=handicap, winner=winner_of(result),
      result=result, date=normalise_date(_text(root, "DT")),
      black_name=_text(root, "PB"), white_name=_text(root, "PW"),
      black_rank=_text(root, "BR"), white_rank=_text(root, "WR"), source=source)


# ----------------------------------------------------------------------------
# Batched legality check.


@functools.partial(jax.jit, static_argnums=0)
def _start(cfg: go.GoConfig, black, white, to_play) -> go.GoState:
  """[B] initial states from [B, S] setup lists padded with P (which .at[].set drops)."""
  return jax.vmap(lambda b, w, t: go.init(cfg, b, w, t))(black, white, to_play)


@functools.partial(jax.jit, static_argnums=0, donate_argnums=1)
def _advance(cfg: go.GoConfig, states: go.GoState, moves) -> go.GoState:
  """Plays [B, _BLOCK] moves on [B] games (an illegal move freezes its game)."""
  play = jax.vmap(functools.partial(go.step, cfg))
  return jax.lax.scan(lambda s, a: (play(s, a), None), states, moves.T)[0]


def _round_up(n: int, k: int) -> int:
  return max(k, -(-n // k) * k)


def _pad(rows: Sequence[np.ndarray], num_rows: int, width: int, fill: int) -> np.ndarray:
  out = np.full((num_rows, width), fill, np.int32)
  for i, row in enumerate(rows):
    out[i, :len(row)] = row
  return out


def _check_chunk(cfg: go.GoConfig, chunk: Sequence[games_lib.Game],
                 chunk_size: int) -> dict[int, tuple[int, int, str]]:
  """Plays up to chunk_size games at once.

  Returns:
    {index in chunk: (0-based move index, action, reason)} for the games with
    an illegal move.
  """
  p = cfg.num_points
  width = _round_up(max(max(len(g.setup_black), len(g.setup_white)) for g in chunk), _SETUP_WIDTH)
  length = _round_up(max(len(g.moves) for g in chunk), _BLOCK)
  to_play = np.ones(chunk_size, np.int8)
  to_play[:len(chunk)] = [g.first_player for g in chunk]
  states = _start(cfg, _pad([g.setup_black for g in chunk], chunk_size, width, p),
                  _pad([g.setup_white for g in chunk], chunk_size, width, p), to_play)
  moves = _pad([g.moves for g in chunk], chunk_size, length, p)  # passes after the end
  for k in range(0, length, _BLOCK):
    states = _advance(cfg, states, moves[:, k:k + _BLOCK])
  forfeit = np.asarray(states.forfeit)[:len(chunk)]
  move_count = np.asarray(states.move_count)
  found = {}
  for j in np.flatnonzero(forfeit):
    index = int(move_count[j])
    action = int(chunk[j].moves[index])
    before = jax.tree.map(lambda x, j=j: x[j], states)
    before = before.replace(terminated=jnp.bool_(False), forfeit=jnp.int8(0))
    found[int(j)] = (index, action, go.illegal_reason(cfg, before, action) or "unknown")
  return found


def find_illegal(candidates: Sequence[games_lib.Game], size: int,
                 chunk_size: int = 512) -> dict[int, tuple[int, int, str]]:
  """Checks every move of the games with the JAX rules, chunk_size games at a time.

  Returns:
    {index in candidates: (0-based move index, action, reason)} for the games
    with an illegal move.
  """
  cfg = go.GoConfig(size=size, komi=0.0, history=1)
  order = sorted(range(len(candidates)), key=lambda i: len(candidates[i].moves))
  found = {}
  for start in range(0, len(order), chunk_size):
    ids = order[start:start + chunk_size]
    for j, hit in _check_chunk(cfg, [candidates[i] for i in ids], chunk_size).items():
      found[ids[j]] = hit
  return found


# ----------------------------------------------------------------------------
# The import.


class _Progress:
  """A progress line on stderr at most every `every` seconds."""

  def __init__(self, reader: Reader, every: float = 5.0):
    self.reader, self.every = reader, every
    self.start = self.last = time.time()

  def report(self, games_read: int, checked: int, force: bool = False):
    now = time.time()
    if not force and now - self.last < self.every:
      return
    self.last = now
    elapsed = max(now - self.start, 1e-9)
    done, total = self.reader.bytes_read, self.reader.total_bytes
    eta = f"{elapsed * (total - done) / done:.0f} s" if done else "?"
    print(f"import_sgf: {self.reader.files_read}/{len(self.reader.files)} files, "
          f"{games_read} games read, {checked} checked, {games_read / elapsed:.0f} games/s, "
          f"{100 * done / max(total, 1):.0f}% of the input, ETA {eta}", file=sys.stderr, flush=True)


def _new_counts() -> dict:
  return {"files": 0, "games": 0, "kept": 0, "skipped": dict.fromkeys(SKIP_REASONS, 0),
          "illegal": dict.fromkeys(ILLEGAL_REASONS, 0), "illegal_games": [],
          "duplicate_games": [], "unreadable": [], "seconds": 0.0}


def _parse_checked(data: bytes | kifu.KifuGame, name: str, size: int,
                   min_moves: int) -> games_lib.Game:
  """parse_game (or a kifu line's) plus the length checks; any unexpected error counts as
  unparsable."""
  try:
    g = kifu.to_game(data, size) if isinstance(data, kifu.KifuGame) else parse_game(data, size, name)
  except Skip:
    raise
  except Exception:  # pylint: disable=broad-exception-caught
    raise Skip("unparsable") from None
  if len(g.moves) < min_moves:
    raise Skip("too short")
  if len(g.moves) > 2 * size * size:
    raise Skip("too long")
  return g


def _record_illegal(counts: dict, candidates, illegal: dict):
  for i in sorted(illegal):
    index, action, reason = illegal[i]
    counts["skipped"]["illegal move"] += 1
    counts["illegal"][reason] = counts["illegal"].get(reason, 0) + 1
    counts["illegal_games"].append(IllegalMove(candidates[i].source, index + 1, action, reason)._asdict())


def _deduplicate(counts: dict, candidates, illegal: dict) -> list[games_lib.Game]:
  """The legal candidates in order, without repeats of an earlier kept game."""
  kept, seen = [], {}
  for i, g in enumerate(candidates):
    if i in illegal:
      continue
    key = (g.setup_black.tobytes(), g.setup_white.tobytes(), g.first_player, g.moves.tobytes())
    if key in seen:
      counts["skipped"]["duplicate"] += 1
      counts["duplicate_games"].append({"source": g.source, "same_as": seen[key]})
      continue
    seen[key] = g.source
    kept.append(g)
  return kept


def import_games(sources: Sequence[str], size: int = 19, min_moves: int = 20,
                 chunk_size: int = 512, progress: bool = True) -> tuple[games_lib.GameArchive, dict]:
  """Reads, checks and packs the games (SGF records, kifu lines) found in `sources`.

  Args:
    sources: folders, .sgf files and tar archives (SGF or kifu).
    size: the board size to keep.
    min_moves: games with fewer moves are skipped.
    chunk_size: games played at once by the legality check (fixed, so the
      check compiles once).
    progress: print a progress line to stderr every few seconds.

  Returns:
    (archive of the kept games in reading order, counts) where counts has
    'files', 'games' (read), 'kept', 'skipped' {reason: n}, 'illegal'
    {reason: n}, 'illegal_games' [{source, move (1 = first), action, reason}],
    'duplicate_games' [{source, same_as}], 'unreadable' [file errors],
    'kept_without_winner', 'kifu_index' {index_entries, index_without_game,
    bad_index_lines} and
    'seconds'.
  """
  go.GoConfig(size=size)  # validates the size
  start = time.time()
  reader = Reader(find_files(sources))
  bar = _Progress(reader) if progress else None
  counts, candidates, illegal, checked = _new_counts(), [], {}, 0
  for name, data in reader:
    counts["games"] += 1
    try:
      candidates.append(_parse_checked(data, name, size, min_moves))
    except Skip as s:
      counts["skipped"][s.reason] += 1
    if len(candidates) - checked >= chunk_size * _BUFFER_CHUNKS:
      illegal.update({checked + i: v for i, v in
                      find_illegal(candidates[checked:], size, chunk_size).items()})
      checked = len(candidates)
    if bar:
      bar.report(counts["games"], checked)
  illegal.update({checked + i: v for i, v in find_illegal(candidates[checked:], size, chunk_size).items()})
  _record_illegal(counts, candidates, illegal)
  kept = _deduplicate(counts, candidates, illegal)
  counts.update(files=reader.files_read, kept=len(kept), unreadable=reader.errors,
                kept_without_winner=sum(1 for g in kept if g.winner == 0),
                kifu_index=dataclasses.asdict(reader.kifu_stats),
                seconds=round(time.time() - start, 1))
  if bar:
    bar.report(counts["games"], len(candidates), force=True)
  return games_lib.from_games(size, kept), counts


def format_table(counts: dict) -> str:
  """The counts as a small text table."""
  lines = [f"{'files read':<24}{counts['files']:>8}", f"{'games read':<24}{counts['games']:>8}",
           f"{'kept':<24}{counts['kept']:>8}",
           f"{'  of them no winner':<24}{counts['kept_without_winner']:>8}", "skipped:"]
  for reason, n in counts["skipped"].items():
    lines.append(f"  {reason:<22}{n:>8}")
    if reason == "illegal move":
      lines += [f"    {why:<20}{k:>8}" for why, k in counts["illegal"].items()]
  if counts["kifu_index"]["index_entries"]:
    lines.append(f"{'kifu index entries':<24}{counts['kifu_index']['index_entries']:>8}")
    lines.append(f"{'  without a game':<24}{counts['kifu_index']['index_without_game']:>8}")
  if counts["kifu_index"]["bad_index_lines"]:
    lines.append(f"{'  unreadable lines':<24}{counts['kifu_index']['bad_index_lines']:>8}")
  if counts["unreadable"]:
    lines.append(f"{'unreadable files':<24}{len(counts['unreadable']):>8}")
  lines.append(f"{'seconds':<24}{counts['seconds']:>8.1f}")
  return "\n".join(lines)


def main(argv=None) -> int:
  """The command line; see the module docstring."""
  parser = argparse.ArgumentParser(prog="python -m agz_jax.data.import_sgf",
                                   description="Import SGF game records for supervised learning.")
  parser.add_argument("sources", nargs="+", metavar="SRC",
                      help="folders, .sgf files and .tar.gz/.tgz/.tar.bz2/.tar.xz archives")
  parser.add_argument("--out", required=True, help="folder for games.npz and import.json")
  parser.add_argument("--size", type=int, default=19, help="board size to keep (default 19)")
  parser.add_argument("--min-moves", type=int, default=20,
                      help="skip games with fewer moves, passes included (default 20)")
  parser.add_argument("--chunk-size", type=int, default=512,
                      help="games checked at once by the compiled rules (default 512)")
  args = parser.parse_args(argv)
  if args.chunk_size < 1:
    parser.error(f"--chunk-size must be 1 or more, got {args.chunk_size}")
  try:
    archive, counts = import_games(args.sources, args.size, args.min_moves, args.chunk_size)
  except (FileNotFoundError, ValueError) as e:
    sys.exit(f"import_sgf: {e}")
  path = games_lib.save(archive, args.out)
  with open(os.path.join(args.out, REPORT_FILE), "w", encoding="utf-8") as f:
    json.dump({"size": args.size, "min_moves": args.min_moves, **counts}, f, indent=1)
  print(format_table(counts))
  print(f"wrote {archive.num_games} games ({len(archive.moves)} moves) to {path} "
        f"({os.path.getsize(path) / 2**20:.1f} MiB)")
  return 0


if __name__ == "__main__":
  sys.exit(main())
