"""What every game-record format shares: why a game is skipped, its date, its winner."""

import re

from agz_jax import go

SKIP_REASONS = ("unparsable", "not in index", "wrong size", "bad setup", "non-alternating moves",
                "too short", "too long", "illegal move", "duplicate")
_DATE = re.compile(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})")
_WINNER = re.compile(r"\s*([BW])\+", re.IGNORECASE)


class Skip(Exception):
  """A game that is not imported; `reason` is one of SKIP_REASONS."""

  def __init__(self, reason: str):
    super().__init__(reason)
    self.reason = reason


def normalise_date(text: str) -> str:
  """The first full date in a record's date as YYYY-MM-DD, or '' if there is none.

  '2001-02-10,2001-02-11' gives '2001-02-10'; '2001-6-5' gives '2001-06-05';
  '2003.09.25 20:21' gives '2003-09-25'.
  """
  m = _DATE.search(text)
  if not m:
    return ""
  year, month, day = (int(x) for x in m.groups())
  if not (1 <= month <= 12 and 1 <= day <= 31):
    return ""
  return f"{year:04d}-{month:02d}-{day:02d}"


def winner_of(result: str) -> int:
  """1 if a result says black won ('B+...'), -1 for white, else 0 (draw, void, unknown)."""
  m = _WINNER.match(result)
  if not m:
    return 0
  return go.BLACK if m.group(1).upper() == "B" else go.WHITE
