"""A GTP (version 2) engine, for Sabaki, GoGui, Lizzie and match runners.

  python -m agz_jax.gtp --checkpoint workdir/cpu_9x9 [--simulations 64] [--seconds-per-move 2]
  python -m agz_jax.gtp --checkpoint workdir/cpu_9x9 --policy-only   # the network's best move, no search
  python -m agz_jax.gtp --random                                      # a random player (any size)
  python -m agz_jax.gtp --checkpoint workdir/sl_policy_cpu --sample-moves 30 --seed 7
      # an SL policy checkpoint always plays its policy; the first 30 moves drawn from it

Commands: protocol_version, name, version, known_command, list_commands, quit,
boardsize, clear_board, komi, play, genmove, undo, showboard, final_score,
time_settings, time_left, loadsgf, printsgf, reg_genmove and lz-analyze (the
interval analysis stream of Leela Zero that Lizzie and Sabaki read). Every
malformed or illegal command gets a `? message` reply and the engine goes on.
Scoring is Tromp-Taylor area scoring (play GNU Go with --chinese-rules
--capture-all-dead). Each genmove runs a fresh search: mctx builds a new tree
per call, so the subtree of the move played is not carried over.
"""

import argparse
import math
import os
import select
import sys
import time

import agz_jax
from agz_jax import go, sgf
from agz_jax.go.coords import COLUMNS
from agz_jax.player import NetworkPlayer, RandomPlayer, sensible, win_rate

COMMANDS = (
    "protocol_version", "name", "version", "known_command", "list_commands", "quit", "boardsize",
    "clear_board", "komi", "play", "genmove", "undo", "showboard", "final_score", "time_settings",
    "time_left", "loadsgf", "printsgf", "reg_genmove", "lz-analyze")

_COLOUR_NAMES = {"b": go.BLACK, "black": go.BLACK, "w": go.WHITE, "white": go.WHITE}


class GtpError(Exception):
  """A command failed; its message is the GTP error text."""


class LineReader:
  """Lines from a file descriptor, and whether another one is waiting (for lz-analyze)."""

  def __init__(self, stream):
    self._stream = stream
    try:
      self._fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
      self._fd = None
    self._buffer = b""
    self._eof = False

  def _fill(self, timeout):
    if self._eof:
      return
    if self._fd is None:
      line = self._stream.readline()
      self._eof = not line
      self._buffer += line.encode() if isinstance(line, str) else line
      return
    ready, _, _ = select.select([self._fd], [], [], timeout)
    if ready:
      chunk = os.read(self._fd, 65536)
      self._eof = not chunk
      self._buffer += chunk

  def readline(self) -> str | None:
    while b"\n" not in self._buffer and not self._eof:
      self._fill(None)
    if not self._buffer:
      return None
    line, sep, rest = self._buffer.partition(b"\n")
    self._buffer = rest
    return (line + sep).decode("utf-8", errors="replace")

  def waiting(self, timeout: float = 0.0) -> bool:
    if b"\n" not in self._buffer and not self._eof:
      self._fill(timeout)
    return b"\n" in self._buffer or self._eof


class Engine:
  """GTP state and commands around a player.

  Args:
    player: a NetworkPlayer or RandomPlayer.
    komi: initial komi.
    simulations: searches per move (None: the player's default).
    seconds_per_move: when set, the number of simulations follows the time.
    resign_threshold: resign when the searched win rate falls below this.
    resign_min_moves: never resign before this many moves.
  """

  def __init__(self, player, *, komi: float = 7.5, simulations: int | None = None,
               seconds_per_move: float | None = None, resign_threshold: float = 0.05,
               resign_min_moves: int | None = None):
    self.player = player
    self.size = player.sizes[0] if player.sizes else 19
    self.komi = komi
    self.simulations = simulations
    self.seconds_per_move = seconds_per_move
    self.resign_threshold = resign_threshold
    self.resign_min_moves = resign_min_moves
    self.time_left = {}
    self._seconds_per_simulation = None
    self._new_game()

  # -- game state ----------------------------------------------------------------------------
  def _new_game(self, black=(), white=(), to_play=go.BLACK):
    self.cfg = go.GoConfig(size=self.size, komi=self.komi, max_moves=4 * self.size * self.size,
                           **self.player.planes)
    self.history = [go.init(self.cfg, black=black, white=white, to_play=to_play)]
    # (colour, action, inserted): `inserted` marks a pass we added because one
    # colour played twice in a row.
    self.moves = []
    self.setup = (list(black), list(white))

  @property
  def state(self) -> go.GoState:
    return self.history[-1]

  def _play(self, colour: int, action: int):
    """Plays a move, first a pass for the other side if `colour` is not to move."""
    if int(self.state.terminated):
      self._continue_after_end()
    state, inserted = self.state, []
    if colour != int(state.to_play):
      state = go.play(self.cfg, [self.cfg.pass_action], state)
      inserted = [(state, (-colour, self.cfg.pass_action, True))]
    reason = go.illegal_reason(self.cfg, state, action)
    if reason is not None:
      raise GtpError(f"illegal move: {reason}")
    for s, move in inserted + [(go.play(self.cfg, [action], state), (colour, action, False))]:
      self.history.append(s)
      self.moves.append(move)

  def _continue_after_end(self):
    """Two passes ended our game but the controller plays on (e.g. to clean up dead
    stones): continue from the same position. Superko then only knows the
    positions from here on."""
    board = [int(x) for x in self.state.board]
    fresh = go.init(self.cfg, black=[p for p, v in enumerate(board) if v == go.BLACK],
                    white=[p for p, v in enumerate(board) if v == go.WHITE],
                    to_play=int(self.state.to_play))
    self.history[-1] = fresh

  # -- parsing ---------------------------------------------------------------------------------
  def _colour(self, text: str) -> int:
    colour = _COLOUR_NAMES.get(text.lower())
    if colour is None:
      raise GtpError(f"syntax error: colour must be b, w, black or white, got {text!r}")
    return colour

  def _vertex(self, text: str) -> int:
    try:
      return go.gtp_to_action(self.cfg, text)
    except ValueError:
      raise GtpError(f"syntax error: bad vertex {text!r}") from None

  @staticmethod
  def _args(args, count, usage):
    if len(args) < count:
      raise GtpError(f"syntax error: usage: {usage}")

  # -- commands --------------------------------------------------------------------------------
  def cmd_protocol_version(self, args):
    return "2"

  def cmd_name(self, args):
    return "agz_jax"

  def cmd_version(self, args):
    return f"{agz_jax.__version__} ({self.player.name})"

  def cmd_known_command(self, args):
    return "true" if args and args[0] in COMMANDS else "false"

  def cmd_list_commands(self, args):
    return "\n".join(COMMANDS)

  def cmd_boardsize(self, args):
    self._args(args, 1, "boardsize SIZE")
    try:
      size = int(args[0])
    except ValueError:
      raise GtpError("syntax error: board size must be an integer") from None
    if not 2 <= size <= 19 or (self.player.sizes and size not in self.player.sizes):
      raise GtpError("unacceptable size")
    self.size = size
    self._new_game()
    return ""

  def cmd_clear_board(self, args):
    self._new_game()
    return ""

  def cmd_komi(self, args):
    self._args(args, 1, "komi KOMI")
    try:
      komi = float(args[0])
    except ValueError:
      raise GtpError("syntax error: komi must be a number") from None
    if not math.isfinite(komi):
      raise GtpError("syntax error: komi must be finite")
    self.komi = komi
    moves, setup = self.moves, self.setup
    self._new_game(*setup, to_play=int(self.history[0].to_play))
    for colour, action, inserted in moves:
      if not inserted:
        self._play(colour, action)
    return ""

  def cmd_play(self, args):
    self._args(args, 2, "play COLOUR VERTEX")
    colour, action = self._colour(args[0]), self._vertex(args[1])
    self._play(colour, action)
    return ""

  def _generate(self, colour: int) -> tuple[str, int | None]:
    """The move to play for `colour` (a vertex, 'pass' or 'resign') and its action."""
    state = self.state
    if int(state.terminated):
      return "pass", self.cfg.pass_action
    if colour != int(state.to_play):
      state = go.play(self.cfg, [self.cfg.pass_action], state)
    # The opponent passed and passing now wins by the score: end the game.
    if (self.moves and self.moves[-1][1] == self.cfg.pass_action
        and colour * go.host_score(self.cfg, state) > 0):
      return "pass", self.cfg.pass_action
    t = time.perf_counter()
    sims = self._simulations_for_move()
    out = self.player.analyse(self.cfg, state, sims)
    if sims and sims > 0:
      self._seconds_per_simulation = (time.perf_counter() - t) / sims
    min_moves = self.resign_min_moves if self.resign_min_moves is not None else self.cfg.num_points // 2
    if win_rate(out["value"]) < self.resign_threshold and int(state.move_count) >= min_moves:
      return "resign", None
    action = self._not_a_losing_pass(colour, state, out)
    return go.action_to_gtp(self.cfg, action), action

  def _not_a_losing_pass(self, colour: int, state, out: dict) -> int:
    """The chosen action, unless it is a pass while the Tromp-Taylor score is against us:
    the opponent could end the game by passing too, with its dead stones still counted.
    Then the most visited (or most likely) candidate that fills none of our own eyes."""
    action = out["action"]
    if action != self.cfg.pass_action or colour * go.host_score(self.cfg, state) >= 0:
      return action
    allowed = sensible(self.cfg, state)
    for candidate in out["candidates"]:
      if candidate["action"] != self.cfg.pass_action and allowed[candidate["action"]]:
        return candidate["action"]
    return action

  def _simulations_for_move(self) -> int | None:
    budget = self.seconds_per_move
    left = self.time_left.get(int(self.state.to_play))
    if left is not None:
      per_move = left / max(10, self.cfg.num_points // 3 - int(self.state.move_count) // 2)
      budget = per_move if budget is None else min(budget, per_move)
    if budget is None or self._seconds_per_simulation is None:
      return self.simulations
    sims = budget / self._seconds_per_simulation
    return int(2 ** max(3, min(12, math.floor(math.log2(max(sims, 1))))))

  def cmd_genmove(self, args):
    self._args(args, 1, "genmove COLOUR")
    colour = self._colour(args[0])
    vertex, action = self._generate(colour)
    if action is not None:
      self._play(colour, action)
    return vertex

  def cmd_reg_genmove(self, args):
    self._args(args, 1, "reg_genmove COLOUR")
    return self._generate(self._colour(args[0]))[0]

  def cmd_undo(self, args):
    if not self.moves:
      raise GtpError("cannot undo")
    self.moves.pop()
    self.history.pop()
    if self.moves and self.moves[-1][2]:  # the pass we added before that move
      self.moves.pop()
      self.history.pop()
    return ""

  def cmd_showboard(self, args):
    n = self.cfg.size
    letters = COLUMNS[:n]
    rows = go.to_ascii(self.cfg, self.state).splitlines()
    lines = ["   " + " ".join(letters)]
    for r, row in enumerate(rows):
      lines.append(f"{n - r:2d} {row} {n - r:2d}")
    lines.append("   " + " ".join(letters))
    colour = "black" if int(self.state.to_play) == go.BLACK else "white"
    lines.append(f"{colour} to play, move {len(self.moves)}, komi {self.komi:g}")
    return "\n" + "\n".join(lines)

  def cmd_final_score(self, args):
    return sgf.result_string(self.cfg, self.state)

  def cmd_time_settings(self, args):
    self._args(args, 3, "time_settings MAIN_TIME BYO_YOMI_TIME BYO_YOMI_STONES")
    try:
      main_time = float(args[0])
    except ValueError:
      raise GtpError("syntax error: times must be numbers") from None
    if not math.isfinite(main_time):
      raise GtpError("syntax error: times must be finite")
    self.time_left = {go.BLACK: main_time, go.WHITE: main_time} if main_time > 0 else {}
    return ""

  def cmd_time_left(self, args):
    self._args(args, 3, "time_left COLOUR TIME STONES")
    colour = self._colour(args[0])
    try:
      seconds = float(args[1])
    except ValueError:
      raise GtpError("syntax error: time must be a number") from None
    if not math.isfinite(seconds):
      raise GtpError("syntax error: time must be finite")
    self.time_left[colour] = seconds
    return ""

  def cmd_loadsgf(self, args):
    self._args(args, 1, "loadsgf FILE [MOVE_NUMBER]")
    try:
      record = sgf.read(args[0]) if os.path.isfile(args[0]) else None
    except (OSError, ValueError) as e:
      raise GtpError(f"cannot load file: {e}") from None
    if record is None:
      raise GtpError(f"cannot load file: {args[0]!r} does not exist")
    if self.player.sizes and record.size not in self.player.sizes:
      raise GtpError(f"cannot load file: board size {record.size} not supported")
    stop = len(record.moves)
    if len(args) > 1:
      try:
        stop = max(0, int(args[1]) - 1)
      except ValueError:
        raise GtpError("syntax error: move number must be an integer") from None
    self.size, self.komi = record.size, record.komi
    first = record.moves[0][0] if record.moves else record.first_to_play
    self._new_game(record.black_setup, record.white_setup, to_play=first)
    for number, (colour, action) in enumerate(record.moves[:stop], start=1):
      try:
        self._play(colour, action)
      except GtpError as e:
        raise GtpError(f"cannot load file: move {number} {e}") from None
    return ""

  def _record(self) -> sgf.GameRecord:
    return sgf.GameRecord(size=self.size, komi=self.komi, black_setup=self.setup[0],
                          white_setup=self.setup[1], moves=[m[:2] for m in self.moves],
                          players={"black": "agz_jax", "white": "agz_jax"})

  def cmd_printsgf(self, args):
    data = sgf.write(self._record()).decode()
    if args:
      with open(args[0], "w", encoding="utf-8") as f:
        f.write(data)
      return ""
    return data.strip()

  def analysis_lines(self, reader: LineReader, out, interval: float, colour: int | None):
    """Writes lz-analyze info lines every `interval` seconds until input arrives."""
    state = self.state
    if int(state.terminated):
      return
    if colour is not None and colour != int(state.to_play):
      state = go.play(self.cfg, [self.cfg.pass_action], state)
    if int(state.terminated):
      return
    sims = self.simulations or 64
    while True:
      result = self.player.analyse(self.cfg, state, sims)
      items = []
      for order, c in enumerate(result["candidates"]):
        pv = " ".join(go.action_to_gtp(self.cfg, a) for a in c["pv"])
        items.append(f"info move {go.action_to_gtp(self.cfg, c['action'])} visits {max(1, c['visits'])} "
                     f"winrate {round(10000 * win_rate(c['value']))} "
                     f"prior {round(10000 * c['prior'])} order {order} pv {pv}")
      out.write(" ".join(items) + "\n")
      out.flush()
      if reader.waiting(interval):
        return
      sims = min(2 * sims, 4096)

  def handle(self, line: str):
    """Runs one command line; returns (id, ok, text) or None for an empty line."""
    line = "".join(ch for ch in line.split("#", 1)[0] if ch == "\t" or 32 <= ord(ch) != 127)
    parts = line.replace("\t", " ").split()
    if not parts:
      return None
    ident = ""
    if parts[0].isascii() and parts[0].isdigit():
      ident = parts.pop(0)
      if not parts:
        return ident, False, "syntax error: no command"
    name, args = parts[0], parts[1:]
    if name not in COMMANDS:
      return ident, False, "unknown command"
    method = getattr(self, "cmd_" + name.replace("-", "_"), None)
    try:
      if method is None:
        return ident, True, ""
      return ident, True, method(args)
    except GtpError as e:
      return ident, False, str(e)
    except Exception as e:  # pylint: disable=broad-exception-caught
      return ident, False, f"internal error: {type(e).__name__}: {e}"


def serve(engine: Engine, stream_in=None, out=None) -> None:
  """The GTP loop: one response per command until quit or end of input."""
  reader = LineReader(stream_in or sys.stdin)
  out = out or sys.stdout
  while True:
    line = reader.readline()
    if line is None:
      return
    response = engine.handle(line)
    if response is None:
      continue
    ident, ok, text = response
    name = line.split("#", 1)[0].split()
    name = name[1] if name and name[0].isdigit() and len(name) > 1 else (name[0] if name else "")
    if ok and name == "lz-analyze":
      out.write(f"={ident}\n")
      out.flush()
      args = line.split()[1:] if not line.split()[0].isdigit() else line.split()[2:]
      colour, interval = None, 1.0
      for a in args:
        if a.lower() in _COLOUR_NAMES:
          colour = _COLOUR_NAMES[a.lower()]
        elif a.isascii() and a.isdigit():
          interval = min(int(a), 360000) / 100
      engine.analysis_lines(reader, out, max(interval, 0.01), colour)
      out.write("\n")
      out.flush()
      continue
    out.write(f"{'=' if ok else '?'}{ident} {text}\n\n" if text else f"{'=' if ok else '?'}{ident}\n\n")
    out.flush()
    if ok and name == "quit":
      return


def main(argv=None):
  parser = argparse.ArgumentParser(description="agz_jax as a GTP engine.")
  who = parser.add_mutually_exclusive_group(required=True)
  who.add_argument("--checkpoint", help="training workdir or checkpoint directory")
  who.add_argument("--random", action="store_true", help="a random player instead of a network")
  parser.add_argument("--simulations", type=int, default=None, help="searches per move (default 64)")
  parser.add_argument("--seconds-per-move", type=float, default=None)
  parser.add_argument("--policy-only", action="store_true", help="the network's move, no search")
  parser.add_argument("--resign-threshold", type=float, default=0.05, help="win rate; 0 never resigns")
  parser.add_argument("--komi", type=float, default=7.5)
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--algorithm", choices=("gumbel", "puct"), default=None,
                      help="search algorithm (default: the training run's)")
  parser.add_argument("--no-tree-reuse", action="store_true",
                      help="PUCT search: start every search afresh instead of from the subtree "
                           "of the position reached")
  parser.add_argument("--sample-moves", type=int, default=0,
                      help="without search: draw the first N moves of a game from the policy")
  args = parser.parse_args(argv)
  if args.random:
    player = RandomPlayer(args.seed)
  else:
    try:
      player = NetworkPlayer(args.checkpoint, simulations=64 if args.simulations is None
                             else args.simulations, algorithm=args.algorithm, seed=args.seed,
                             sample_moves=args.sample_moves,
                             reuse_tree=not args.no_tree_reuse)
    except FileNotFoundError as e:
      sys.exit(f"gtp: {e}")
  sims = 0 if args.policy_only else args.simulations
  engine = Engine(player, komi=args.komi, simulations=sims, seconds_per_move=args.seconds_per_move,
                  resign_threshold=args.resign_threshold)
  serve(engine)


if __name__ == "__main__":
  main()
