"""A position as a picture: the board with the network's move probabilities as a heatmap.

  python -m agz_jax.show --checkpoint workdir/cpu_9x9 --empty 9 --out empty.png
  python -m agz_jax.show --checkpoint workdir/cpu_9x9 --sgf game.sgf --move 40 --out move40.png
  python -m agz_jax.show --checkpoint workdir/cpu_9x9 --sgf game.sgf --search 256 --out s.png

As in the figures of the AlphaGo papers, every legal point gets a coloured disc
whose colour and opacity grow with the probability the policy network gives
it, and the five most likely moves carry that probability in percent. With
--search N the picture shows where N simulations of the search went (each
point's share of the root's visits) instead of the raw prior. The title names
the position and the player to move; the caption gives the network's value
for that player and the probability of a pass.
"""

import argparse
import dataclasses
import math
import os
import sys
from typing import NamedTuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.patheffects as patheffects  # pylint: disable=wrong-import-position
import matplotlib.pyplot as plt  # pylint: disable=wrong-import-position
import numpy as np  # pylint: disable=wrong-import-position
from matplotlib import colors, patches, ticker  # pylint: disable=wrong-import-position

from agz_jax import go, sgf  # pylint: disable=wrong-import-position


# Output size: FIGSIZE inches at DPI dots per inch, whatever the board size.
FIGSIZE = (7.0, 8.0)
DPI = 110
TOP_MOVES = 5
# The colour scale reaches at least this probability.
SCALE_MIN = 0.1

_WOOD = "#dcb35c"
_LINE = "#2b2112"
# Low probabilities are pale and see-through, high ones opaque deep red.
_HEAT = colors.LinearSegmentedColormap.from_list(
    "agz_heat", ["#fff3b0", "#ffb347", "#f0602a", "#c01a1a", "#6e0a1e"])


class Label(NamedTuple):
  """One labelled move: its action, GTP vertex, probability in [0, 1] and label text."""

  action: int
  vertex: str
  probability: float
  text: str


@dataclasses.dataclass
class Position:
  """What the picture shows besides the probabilities.

  Attributes:
    board: [N, N] int, 1 black, -1 white, 0 empty; row 0 at the top.
    last_move: the action of the move that led here (N*N a pass), or None.
    title: first line of the title, e.g. 'game.sgf, move 40: Black to play'.
  """

  board: np.ndarray
  last_move: int | None
  title: str


def percent(p: float) -> str:
  """A probability as a short percentage: '42%', '7.5%', '0.3%', '<0.1%', '0%'."""
  value = 100.0 * float(p)
  if value <= 0:
    return "0%"
  if value >= 9.95:
    return f"{value:.0f}%"
  if value >= 0.05:
    return f"{value:.1f}%"
  return "<0.1%"


def top_moves(probabilities, size: int, k: int = TOP_MOVES) -> list[Label]:
  """The k board points of highest probability, most likely first, with their labels.

  Passes and points of probability 0 (illegal, or never visited) are left out;
  ties go to the lower action index.

  Args:
    probabilities: [N*N + 1] prior or visit shares, pass last.
    size: board size N.
    k: how many to return at most.
  """
  p = np.asarray(probabilities, np.float64)
  if p.shape != (size * size + 1,):
    raise ValueError(f"top_moves: expected {size * size + 1} probabilities, got shape {p.shape}")
  points = p[:-1]
  order = np.argsort(-points, kind="stable")
  cfg = go.GoConfig(size=size)
  return [Label(int(a), go.action_to_gtp(cfg, a), float(points[a]), percent(points[a]))
          for a in order[:k] if points[a] > 0]


def _wood(ax, size: int) -> None:
  """A wooden background with a faint grain (fixed seed, so pictures are reproducible)."""
  rng = np.random.default_rng(7)
  h, w = 400, 400
  y = np.linspace(0, 1, h)[:, None]
  x = np.linspace(0, 1, w)[None, :]
  wobble = np.convolve(rng.normal(0, 1, h + 40), np.ones(41) / 41, mode="valid")[:h, None]
  grain = 0.5 + 0.5 * np.sin(2 * np.pi * (7 * x + 0.6 * wobble + 0.25 * np.sin(3 * y)))
  grain = 0.95 + 0.05 * grain ** 4
  base = np.array(colors.to_rgb(_WOOD))
  image = np.clip(base[None, None, :] * grain[..., None], 0, 1)
  ax.imshow(image, extent=(-1.0, size, -1.0, size), zorder=0, interpolation="bilinear")


def _board(ax, board: np.ndarray, last_move: int | None, cell: float) -> None:
  """Grid, star points, coordinates, stones and the last-move ring.

  Point (row, col) is drawn at x = col, y = size - 1 - row; `cell` is the grid step in points.
  """
  size = board.shape[0]
  for i in range(size):
    ax.plot([0, size - 1], [i, i], color=_LINE, lw=0.8, zorder=1, solid_capstyle="butt")
    ax.plot([i, i], [0, size - 1], color=_LINE, lw=0.8, zorder=1, solid_capstyle="butt")
  ax.add_patch(patches.Rectangle((0, 0), size - 1, size - 1, fill=False, ec=_LINE, lw=1.6,
                                 zorder=1))
  for r, c in (divmod(p, size) for p in go.star_points(size)):
    ax.add_patch(patches.Circle((c, size - 1 - r), 0.045 + 0.5 / (size + 8), color=_LINE,
                                zorder=1))
  coord_size = min(13, max(7, 0.38 * cell))
  for i in range(size):
    for y in (-0.68, size - 0.32):
      ax.text(i, y, go.COLUMNS[i], ha="center", va="center", fontsize=coord_size, color=_LINE)
    for x in (-0.72, size - 0.28):
      ax.text(x, i, str(i + 1), ha="center", va="center", fontsize=coord_size, color=_LINE)
  for r in range(size):
    for c in range(size):
      x, y = c, size - 1 - r
      if board[r, c] == 1:
        ax.add_patch(patches.Circle((x, y), 0.47, fc="#151515", ec="#000000", lw=0.8, zorder=3))
        # A soft highlight, so that black stones read as stones rather than holes.
        ax.add_patch(patches.Circle((x - 0.13, y + 0.13), 0.14, fc="#5a5a5a", ec="none",
                                    alpha=0.45, zorder=3))
      elif board[r, c] == -1:
        ax.add_patch(patches.Circle((x, y), 0.47, fc="#f4f4f0", ec="#4a4a4a", lw=0.8, zorder=3))
  if last_move is not None and last_move < size * size:
    r, c = divmod(last_move, size)
    ring = "#f4f4f0" if board[r, c] == 1 else "#151515"
    ax.add_patch(patches.Circle((c, size - 1 - r), 0.22, fill=False, ec=ring, lw=2.0, zorder=4))


def _heatmap(ax, p: np.ndarray, labels: list[Label], norm, cell: float) -> None:
  """A disc on every point with a probability, and the labels of the top moves."""
  size = math.isqrt(len(p) - 1)
  for a in np.flatnonzero(p[:-1] > 0):
    r, c = divmod(int(a), size)
    t = float(norm(p[a]))
    ax.add_patch(patches.Circle((c, size - 1 - r), 0.42, fc=_HEAT(t), ec="none",
                                alpha=0.3 + 0.65 * t, zorder=2))
  outline = [patheffects.withStroke(linewidth=2.2, foreground="#000000")]
  for rank, label in enumerate(labels):
    r, c = divmod(label.action, size)
    if rank == 0:  # the move the network likes best (for a search: the most visited)
      ax.add_patch(patches.Circle((c, size - 1 - r), 0.45, fill=False, ec="#1f5fd0", lw=2.2,
                                  zorder=4))
    ax.text(c, size - 1 - r, label.text, ha="center", va="center", color="white",
            fontsize=min(13, max(6, (0.32 if len(label.text) <= 3 else 0.25) * cell)),
            fontweight="bold", path_effects=outline, zorder=5)


def draw(position: Position, probabilities, *, subtitle: str, caption: str, scale_label: str,
         out: str) -> list[Label]:
  """Draws the board and the heatmap and writes a PNG of FIGSIZE * DPI pixels.

  Args:
    position: the board, last move and title.
    probabilities: [N*N + 1] prior or visit shares, pass last; 0 on illegal points.
    subtitle: second title line (what the colours mean).
    caption: text under the board (value, pass).
    scale_label: label of the colour bar.
    out: path of the PNG.

  Returns:
    The labelled moves (top_moves).
  """
  board = np.asarray(position.board)
  size = board.shape[0]
  p = np.asarray(probabilities, np.float64)
  labels = top_moves(p, size)
  fig = plt.figure(figsize=FIGSIZE, dpi=DPI)
  ax = fig.add_axes((0.06, 0.2, 0.88, 0.715))
  ax.set_xlim(-1.0, size)
  ax.set_ylim(-1.0, size)
  ax.set_aspect("equal")
  ax.axis("off")
  _wood(ax, size)
  cell = ax.get_window_extent().width / (size + 1) * 72 / DPI
  _board(ax, board, position.last_move, cell)
  # The colour scale runs from 0 to the largest probability, but at least to SCALE_MIN so
  # that a flat policy looks flat rather than uniformly hot; a square-root scale keeps the
  # small probabilities visible.
  vmax = max(float(p[:-1].max()), SCALE_MIN)
  _heatmap(ax, p, labels, colors.PowerNorm(0.5, vmin=0.0, vmax=vmax), cell)

  fig.text(0.5, 0.975, position.title, ha="center", va="top", fontsize=14, fontweight="bold")
  fig.text(0.5, 0.945, subtitle, ha="center", va="top", fontsize=10.5, color="#333333")
  bar_ax = fig.add_axes((0.2, 0.135, 0.6, 0.016))
  bar = fig.colorbar(plt.cm.ScalarMappable(norm=colors.PowerNorm(0.5, 0, 100 * vmax), cmap=_HEAT),
                     cax=bar_ax, orientation="horizontal")
  bar.set_ticks([t for t in ticker.MaxNLocator(nbins=4).tick_values(0, 100 * vmax)
                 if t <= 100 * vmax])
  bar.ax.xaxis.set_major_formatter(lambda x, _: f"{x:g}")
  bar.set_label(scale_label, fontsize=9)
  bar.ax.tick_params(labelsize=8)
  fig.text(0.5, 0.04, caption, ha="center", va="center", fontsize=10.5, linespacing=1.5)
  os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
  fig.savefig(out, dpi=DPI, facecolor="white")
  plt.close(fig)
  return labels


def _colour_name(colour: int) -> str:
  return "Black" if colour == 1 else "White"


def _load_record(path: str):
  """The SGF record at `path`, or exit with one line saying why it cannot be read."""
  if not os.path.isfile(path):
    sys.exit(f"show: cannot read SGF {path!r}: no such file")
  try:
    return sgf.read(path)
  except (OSError, ValueError) as e:
    sys.exit(f"show: cannot read SGF {path!r}: {_first_line(e)}")


def _first_line(e: Exception) -> str:
  return (str(e).strip().splitlines() or [type(e).__name__])[0]


def _position(args, record, number: int | None, planes: dict, komi: float, max_moves):
  """(cfg, state, last move, title) of the position the command line names."""
  if record is None:
    size = args.empty
    cfg = go.GoConfig(size=size, komi=komi, max_moves=max_moves, **planes)
    return cfg, go.init(cfg), None, f"Empty {size}x{size} board"
  cfg = record.config(**planes)
  try:
    state = sgf.replay(dataclasses.replace(record, moves=record.moves[:number]), cfg)[-1]
  except ValueError as e:
    sys.exit(f"show: {os.path.basename(args.sgf)}: {_first_line(e)}")
  last = record.moves[number - 1][1] if number else None
  return cfg, state, last, f"{os.path.basename(args.sgf)}, move {number}"


def _analyse(player, cfg: go.GoConfig, state: go.GoState, simulations: int):
  """(probabilities [A], value, subtitle, colour bar label, value name): the prior, or the
  share of visits of a search of `simulations` simulations."""
  if not simulations:
    prior, value = player.policy(cfg, state)
    return (prior, value, f"{player.name}: policy network prior over the legal moves",
            "prior probability (%)", "network value")
  result = player.analyse(cfg, state, simulations)
  visits = np.zeros(cfg.num_actions)
  for c in result["candidates"]:
    visits[c["action"]] = c["visits"]
  total = int(visits.sum())
  return (visits / max(total, 1), result["value"],
          f"{player.name}: share of {total} search visits ({simulations} simulations)",
          "share of visits (%)", "search value")


def picture(player, cfg: go.GoConfig, state: go.GoState, *, title: str,
            last_move: int | None = None, simulations: int | None = None,
            out: str) -> list[Label]:
  """Draws a position with a network player's prior, or its search's share of visits.

  Args:
    player: a players.SearchPlayer or PolicyPlayer.
    cfg, state: the position (cfg's planes must be the player's).
    title: names the position; ': Black to play' (or White) is added.
    last_move: the action that led here, ringed on the board (None: no ring).
    simulations: the search shown (0: the prior; default: the player's simulations).
    out: path of the PNG.

  Returns:
    The labelled moves (top_moves).
  """
  from agz_jax import players  # pylint: disable=import-outside-toplevel
  simulations = player.simulations if simulations is None else simulations
  probabilities, value, subtitle, scale, value_name = _analyse(player, cfg, state, simulations)
  to_play = int(state.to_play)
  last_text = "" if last_move is None else f"last move {go.action_to_gtp(cfg, last_move)} · "
  if player.has_value:
    judged = (f"{value_name} for {_colour_name(to_play)}: {value:+.3f}, win rate "
              f"{100 * players.win_rate(value):.1f}%")
  else:
    judged = "a policy network alone: no value"
  caption = f"{judged}\n{last_text}pass {percent(probabilities[-1])} · komi {cfg.komi:g}"
  position = Position(board=np.asarray(state.board).reshape(cfg.size, cfg.size),
                      last_move=last_move, title=f"{title}: {_colour_name(to_play)} to play")
  return draw(position, probabilities, subtitle=subtitle, caption=caption, scale_label=scale,
              out=out)


def main(argv=None):
  parser = argparse.ArgumentParser(
      description="Draw a position with the network's move probabilities (or search visits).")
  parser.add_argument("--checkpoint", required=True,
                      help="training workdir or checkpoint directory")
  where = parser.add_mutually_exclusive_group(required=True)
  where.add_argument("--sgf", help="an SGF game record")
  where.add_argument("--empty", type=int, metavar="SIZE", help="an empty board of this size")
  parser.add_argument("--move", type=int, default=None,
                      help="with --sgf: the position after this many moves (default: the end)")
  parser.add_argument("--search", type=int, default=0, metavar="N",
                      help="run N simulations and show the share of visits instead of the prior")
  parser.add_argument("--out", required=True, help="PNG file to write")
  args = parser.parse_args(argv)
  if args.move is not None and args.sgf is None:
    parser.error("--move needs --sgf")
  if args.move is not None and args.move < 0:
    sys.exit(f"show: --move must be 0 or more, got {args.move}")
  if args.search < 0:
    sys.exit(f"show: --search must be 0 or more, got {args.search}")

  record, number = None, None
  if args.sgf is not None:
    record = _load_record(args.sgf)
    number = len(record.moves) if args.move is None else args.move
    if number > len(record.moves):
      sys.exit(f"show: move {number} is beyond the end of {os.path.basename(args.sgf)} "
               f"({len(record.moves)} moves)")
  elif not 2 <= args.empty <= 19:
    sys.exit(f"show: --empty must be a board size from 2 to 19, got {args.empty}")

  # The network (orbax, flax) only now, so that mistakes above are reported at once.
  from agz_jax import players  # pylint: disable=import-outside-toplevel
  try:
    # Without --search: the policy alone (so is an SL policy network, with or without).
    player = players.load_player(args.checkpoint, simulations=args.search)
  except Exception as e:  # pylint: disable=broad-exception-caught
    sys.exit(f"show: cannot load checkpoint {args.checkpoint!r}: {_first_line(e)}")
  if isinstance(player, players.RandomPlayer):
    sys.exit("show: --checkpoint must be a network's checkpoint, not 'random'")
  game = player.config.game
  size = record.size if record is not None else args.empty
  if size != game.size:
    sys.exit(f"show: the network in {args.checkpoint!r} plays {game.size}x{game.size}, "
             f"not {size}x{size}")

  cfg, state, last, title = _position(args, record, number, player.planes, game.komi,
                                      game.max_moves)
  picture(player, cfg, state, title=title, last_move=last, out=args.out)
  print(args.out)


if __name__ == "__main__":
  main()
