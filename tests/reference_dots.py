"""A slow, obviously-correct Dots and Boxes in plain Python: the yardstick of the JAX rules
when OpenSpiel is not installed (and checked against OpenSpiel where it is).

Lines are ("h", r, c) and ("v", r, c) tuples; a box is complete when the four tuples around it
are in the set of drawn lines. Line numbers follow OpenSpiel's dots_and_boxes.
"""


class Reference:
  """One game: `rows` x `cols` boxes, players 1 and 2 (player 1 moves first)."""

  def __init__(self, rows: int, cols: int):
    self.rows, self.cols = rows, cols
    self.lines = [("h", r, c) for r in range(rows + 1) for c in range(cols)]
    self.lines += [("v", r, c) for r in range(rows) for c in range(cols + 1)]
    self.drawn = set()
    self.owner = {}  # (r, c) -> 1 or 2
    self.player = 1

  def legal(self) -> list[int]:
    return [i for i, line in enumerate(self.lines) if line not in self.drawn]

  def over(self) -> bool:
    return len(self.drawn) == len(self.lines)

  def _complete(self, r: int, c: int) -> bool:
    return {("h", r, c), ("h", r + 1, c), ("v", r, c), ("v", r, c + 1)} <= self.drawn

  def play(self, index: int) -> None:
    line = self.lines[index]
    assert line not in self.drawn and not self.over()
    self.drawn.add(line)
    kind, r, c = line
    # The boxes this line borders: above and below a horizontal line, left and right of a
    # vertical one.
    touching = [(r - 1, c), (r, c)] if kind == "h" else [(r, c - 1), (r, c)]
    new = [b for b in touching
           if 0 <= b[0] < self.rows and 0 <= b[1] < self.cols and b not in self.owner
           and self._complete(*b)]
    for b in new:
      self.owner[b] = self.player
    if not new:
      self.player = 3 - self.player

  def boxes(self, player: int) -> int:
    return sum(1 for p in self.owner.values() if p == player)

  def winner(self) -> int:
    """1, 2, or 0 for a draw (of a finished game)."""
    a, b = self.boxes(1), self.boxes(2)
    return 0 if a == b else (1 if a > b else 2)
