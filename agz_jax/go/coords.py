"""Actions as GTP vertices ('D4', 'pass') and as SGF moves, and back."""

from agz_jax.go.config import GoConfig

# GTP column letters: A..T without I.
COLUMNS = "ABCDEFGHJKLMNOPQRST"


def action_to_gtp(cfg: GoConfig, action: int) -> str:
  """GTP vertex of an action; GTP rows count from the bottom (row 0 is `size`)."""
  action = int(action)
  if action == cfg.pass_action:
    return "pass"
  if not 0 <= action < cfg.pass_action:
    raise ValueError(f"action {action} is off the {cfg.size}x{cfg.size} board")
  row, col = divmod(action, cfg.size)
  return f"{COLUMNS[col]}{cfg.size - row}"


def gtp_to_action(cfg: GoConfig, vertex: str) -> int:
  """Action of a GTP vertex such as 'D4' or 'pass' (case-insensitive, ASCII only)."""
  text = str(vertex).strip(" \t").upper()
  if text == "PASS":
    return cfg.pass_action
  col = COLUMNS.find(text[:1]) if text else -1
  number = text[1:]
  if (col < 0 or col >= cfg.size or not 1 <= len(number) <= 2 or not number.isascii()
      or not number.isdigit() or not 1 <= int(number) <= cfg.size):
    raise ValueError(f"bad vertex {str(vertex)[:24]!r}: expected a column "
                     f"A-{COLUMNS[cfg.size - 1]} (no I) and a row 1-{cfg.size}, or 'pass'")
  return (cfg.size - int(number)) * cfg.size + col


def star_points(size: int) -> list[int]:
  """The points a Go board marks with a dot (hoshi), as point indices: the 4-4 points from
  13x13 up, the 3-3 points from 7x7, the centre of an odd board (a 5x5 or 3x3 board's only
  one), and the middle of each side from 15x15 up. 19x19 has 9; 13x13, 9x9 and 7x7 have 5."""
  mid = size // 2
  if size < 7:
    return [mid * size + mid] if size % 2 else []
  edge = 3 if size >= 13 else 2
  lines = [edge, size - 1 - edge]
  stars = {(r, c) for r in lines for c in lines}
  if size % 2:
    stars.add((mid, mid))
    if size >= 15:
      stars |= {(mid, e) for e in lines} | {(e, mid) for e in lines}
  return sorted(r * size + c for r, c in stars)


def sgf_move_to_action(size: int, move) -> int:
  """Action of an SGF move as sgfmill reads it: (row counted from the bottom, col), or None
  for a pass. Our points count rows from the top (action = row * size + col)."""
  if move is None:
    return size * size
  row, col = move
  return (size - 1 - row) * size + col


def action_to_sgf_move(size: int, action: int):
  """The SGF move (sgfmill's (row from the bottom, col), None for a pass) of an action."""
  if action == size * size:
    return None
  row, col = divmod(int(action), size)
  return size - 1 - row, col
