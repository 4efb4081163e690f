"""Boards as text, and host-side helpers that explain illegal moves."""

import functools
from typing import Iterable

import jax
import numpy as np

from agz_jax.go import rules, scoring
from agz_jax.go.config import GoConfig
from agz_jax.go.coords import action_to_gtp
from agz_jax.go.state import GoState

_STONE_CHARS = {"X": 1, "O": -1, ".": 0, "+": 0}
_REASONS = {rules.OCCUPIED: "occupied", rules.SUICIDE: "suicide", rules.SUPERKO: "superko"}


def parse_board(text: str) -> tuple[int, list[int], list[int]]:
  """Reads an ASCII board: a row per line, top first; X black, O white, . or + empty.

  Spaces and blank lines are ignored.

  Returns:
    (size, black points, white points).
  """
  rows = [line.replace(" ", "") for line in text.strip().splitlines() if line.strip()]
  size = len(rows)
  black, white = [], []
  for r, row in enumerate(rows):
    if len(row) != size:
      raise ValueError(f"parse_board: row {r} has {len(row)} points, expected {size} (a square board)")
    for c, ch in enumerate(row):
      if ch not in _STONE_CHARS:
        raise ValueError(f"parse_board: unexpected character {ch!r} in row {r}; use X, O and .")
      if _STONE_CHARS[ch] == 1:
        black.append(r * size + c)
      elif _STONE_CHARS[ch] == -1:
        white.append(r * size + c)
  return size, black, white


def to_ascii(cfg: GoConfig, state: GoState) -> str:
  """The board as text in parse_board's format, points separated by spaces."""
  board = np.asarray(state.board).reshape(cfg.size, cfg.size)
  chars = {1: "X", -1: "O", 0: "."}
  return "\n".join(" ".join(chars[int(v)] for v in row) for row in board)


@functools.partial(jax.jit, static_argnums=0)
def _play_code(cfg: GoConfig, state: GoState, point):
  return rules._play(cfg, state, point)[1]


_jit_step = jax.jit(rules.step, static_argnums=0)
_jit_score = jax.jit(scoring.score, static_argnums=0)


def host_score(cfg: GoConfig, state: GoState) -> float:
  """The Tromp-Taylor score of one game as a Python float, for host-side tools
  (compiled once per config; calling `score` outside jit would re-trace it)."""
  return float(_jit_score(cfg, state))


def illegal_reason(cfg: GoConfig, state: GoState, action: int) -> str | None:
  """Why `action` is illegal for the player to move, or None if it is legal.

  Reasons: 'off the board', 'game over', 'occupied', 'suicide', 'superko'.
  Agrees with `legal_actions`: pass is always legal (on a finished game it
  changes nothing).
  """
  action = int(action)
  if not 0 <= action <= cfg.pass_action:
    return "off the board"
  if action == cfg.pass_action:
    return None
  if bool(state.terminated):
    return "game over"
  return _REASONS.get(int(_play_code(cfg, state, action)))


def play(cfg: GoConfig, moves: Iterable[int], state: GoState | None = None) -> GoState:
  """Plays a list of actions from `state` (default: an empty board).

  Raises:
    ValueError naming the first illegal move, e.g.
    "move 12 (B D4) is illegal: superko"; any move, pass included, after the
    game has ended is refused with 'game over'.
  """
  if state is None:
    state = rules.init(cfg)
  for number, action in enumerate(moves, start=1):
    reason = "game over" if bool(state.terminated) else illegal_reason(cfg, state, action)
    if reason is not None:
      colour = "B" if int(state.to_play) == 1 else "W"
      try:
        vertex = action_to_gtp(cfg, action)
      except ValueError:
        vertex = str(action)
      raise ValueError(f"move {number} ({colour} {vertex}) is illegal: {reason}")
    state = _jit_step(cfg, state, action)
  return state
