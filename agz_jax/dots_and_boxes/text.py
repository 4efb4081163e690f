"""Dots and Boxes as text: a drawing of the board, and line names ("h(0,1)", "v(2,0)")."""

import re

import numpy as np

from agz_jax.dots_and_boxes.config import DotsConfig, line_index, line_name

OWNER_MARK = {1: "A", -1: "B", 0: " "}  # the first player is A


def to_ascii(cfg: DotsConfig, state) -> str:
  """The board with its lines, each box's owner (A: the first player, B: the second) and the
  score; one game (host arrays are fine)."""
  lines = np.asarray(state.lines, bool)
  boxes = np.asarray(state.boxes).reshape(cfg.rows, cfg.cols)
  out = []
  for r in range(cfg.rows + 1):
    out.append("+" + "+".join("---" if lines[line_index(cfg, "h", r, c)] else "   "
                              for c in range(cfg.cols)) + "+")
    if r == cfg.rows:
      break
    row = ""
    for c in range(cfg.cols + 1):
      row += "|" if lines[line_index(cfg, "v", r, c)] else " "
      if c < cfg.cols:
        row += f" {OWNER_MARK[int(boxes[r, c])]} "
    out.append(row)
  a, b = int((boxes == 1).sum()), int((boxes == -1).sum())
  to_play = "A" if int(state.to_play) == 1 else "B"
  status = "game over" if bool(state.terminated) else f"{to_play} to move"
  out.append(f"A {a}  B {b}  ({status})")
  return "\n".join(out)


def action_to_text(cfg: DotsConfig, action: int) -> str:
  kind, r, c = line_name(cfg, int(action))
  return f"{kind}({r},{c})"


def text_to_action(cfg: DotsConfig, text: str) -> int:
  """The line named by "h(r,c)", "v(r,c)" (spaces allowed) or its index.

  Raises:
    ValueError: not a line of this board, with what a line looks like.
  """
  t = text.strip().lower()
  if re.fullmatch(r"\d+", t):
    line = int(t)
    line_name(cfg, line)  # raises when off the board
    return line
  m = re.fullmatch(r"([hv])\s*\(?\s*(\d+)\s*[, ]\s*(\d+)\s*\)?", t)
  if m is None:
    raise ValueError(f"{text!r} is not a line: write h(r,c) or v(r,c), or a line's index")
  return line_index(cfg, m.group(1), int(m.group(2)), int(m.group(3)))
