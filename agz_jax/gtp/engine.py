"""The GTP engine: the game's state and the commands that read and change it.

Moves are chosen by the player and the engine-side rules of
players.move_policy (pass, resign, time); scoring is Tromp-Taylor.
"""

import math
import os

import agz_jax
from agz_jax import go, players, sgf
from agz_jax.gtp import analysis, protocol
from agz_jax.gtp.protocol import COMMANDS, GtpError


class Engine:
  """GTP state and commands around a player.

  Args:
    player: a players.RandomPlayer, SearchPlayer or PolicyPlayer (or anything with
      name, sizes, planes and analyse).
    komi: initial komi.
    simulations: searches per move (None: the player's default).
    seconds_per_move: when set, the number of simulations follows the time.
    resign_threshold: resign when the searched win rate falls below this.
    resign_min_moves: never resign before this many moves.
  """

  def __init__(self, player, *, komi: float = players.KOMI, simulations: int | None = None,
               seconds_per_move: float | None = None,
               resign_threshold: float = players.RESIGN_THRESHOLD,
               resign_min_moves: int | None = None):
    self.player = player
    self.size = player.sizes[0] if player.sizes else 19
    self.komi = komi
    self.rules = players.MovePolicy(simulations=simulations, seconds_per_move=seconds_per_move,
                                    resign_threshold=resign_threshold,
                                    resign_min_moves=resign_min_moves)
    self.clock = players.SearchClock()
    self.time_left = {}
    self._new_game()

  def handle(self, line: str):
    """Runs one command line; returns (id, ok, text) or None for an empty line."""
    return protocol.handle(self, line)

  def lz_analyze(self, reader, out, args: list[str]) -> None:
    """The analysis stream that follows an accepted lz-analyze (see analysis)."""
    analysis.stream(self, reader, out, *analysis.parse_args(args))

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

  def _vertex(self, text: str) -> int:
    try:
      return go.gtp_to_action(self.cfg, text)
    except ValueError:
      raise GtpError(f"syntax error: bad vertex {text!r}") from None

  def _generate(self, colour: int) -> tuple[str, int | None]:
    """The move to play for `colour` (a vertex, 'pass' or 'resign') and its action."""
    state = self.state
    if int(state.terminated):
      return "pass", self.cfg.pass_action
    if colour != int(state.to_play):
      state = go.play(self.cfg, [self.cfg.pass_action], state)
    opponent_passed = bool(self.moves) and self.moves[-1][1] == self.cfg.pass_action
    action = players.choose_move(self.rules, self.player, self.cfg, state,
                                 opponent_passed=opponent_passed, clock=self.clock,
                                 time_left=self.time_left.get(colour))
    if action is None:
      return "resign", None
    return go.action_to_gtp(self.cfg, action), action

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

  def cmd_quit(self, args):
    return ""  # serve stops after the answer

  def cmd_lz_analyze(self, args):
    return ""  # serve streams the analysis after the '='

  def cmd_boardsize(self, args):
    protocol.require(args, 1, "boardsize SIZE")
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
    protocol.require(args, 1, "komi KOMI")
    self.komi = _finite(args[0], "komi")
    moves, setup = self.moves, self.setup
    self._new_game(*setup, to_play=int(self.history[0].to_play))
    for colour, action, inserted in moves:
      if not inserted:
        self._play(colour, action)
    return ""

  def cmd_play(self, args):
    protocol.require(args, 2, "play COLOUR VERTEX")
    colour, action = protocol.colour(args[0]), self._vertex(args[1])
    self._play(colour, action)
    return ""

  def cmd_genmove(self, args):
    protocol.require(args, 1, "genmove COLOUR")
    colour = protocol.colour(args[0])
    vertex, action = self._generate(colour)
    if action is not None:
      self._play(colour, action)
    return vertex

  def cmd_reg_genmove(self, args):
    protocol.require(args, 1, "reg_genmove COLOUR")
    return self._generate(protocol.colour(args[0]))[0]

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
    letters = go.COLUMNS[:n]
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
    protocol.require(args, 3, "time_settings MAIN_TIME BYO_YOMI_TIME BYO_YOMI_STONES")
    main_time = _finite(args[0], "times", "numbers")
    self.time_left = {go.BLACK: main_time, go.WHITE: main_time} if main_time > 0 else {}
    return ""

  def cmd_time_left(self, args):
    protocol.require(args, 3, "time_left COLOUR TIME STONES")
    colour = protocol.colour(args[0])
    self.time_left[colour] = _finite(args[1], "time")
    return ""

  def cmd_loadsgf(self, args):
    protocol.require(args, 1, "loadsgf FILE [MOVE_NUMBER]")
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

  def cmd_printsgf(self, args):
    record = sgf.GameRecord(size=self.size, komi=self.komi, black_setup=self.setup[0],
                            white_setup=self.setup[1], moves=[m[:2] for m in self.moves],
                            players={"black": "agz_jax", "white": "agz_jax"})
    data = sgf.write(record).decode()
    if args:
      with open(args[0], "w", encoding="utf-8") as f:
        f.write(data)
      return ""
    return data.strip()


def _finite(text: str, what: str, kind: str = "a number") -> float:
  """A finite number argument; `what` and `kind` name it in the errors."""
  try:
    value = float(text)
  except ValueError:
    raise GtpError(f"syntax error: {what} must be {kind}") from None
  if not math.isfinite(value):
    raise GtpError(f"syntax error: {what} must be finite")
  return value
