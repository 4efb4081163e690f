"""The GTP engine: the game's state and the commands that read and change it.

Moves are chosen by the player and the engine-side rules of
players.move_policy (pass, resign, time); scoring is Tromp-Taylor.
"""

import os
import re

import jax.numpy as jnp

import agz_jax
from agz_jax import go, players, sgf
from agz_jax.gtp import analysis, protocol
from agz_jax.gtp.protocol import COMMANDS, GtpError

# Bounds of numeric arguments: far beyond any real game, small enough for any arithmetic.
MAX_KOMI = 1000.0
MAX_SECONDS = 1e9
MAX_STONES = 10**6


class Engine:
  """GTP state and commands around a player.

  Args:
    player: a players.Player (random, policy, search or AlphaGo).
    komi: initial komi.
    simulations: searches per move (None: the player's default).
    seconds_per_move: when set, the player spends this long on each move (or less, where a
      controller's time_left says so).
    resign_threshold: resign when the searched win rate falls below this.
    resign_min_moves: never resign before this many moves.
    endgame: the engine's endgame rules (players.EngineSettings.endgame).
    log: called with a line on each genmove's search (players.search_line), or None.
  """

  def __init__(self, player: players.Player, *, komi: float = players.KOMI, simulations: int | None = None,
               seconds_per_move: float | None = None,
               resign_threshold: float = players.RESIGN_THRESHOLD,
               resign_min_moves: int | None = None, endgame: bool = True, log=None):
    self.player = player
    self.log = log
    self.size = player.sizes[0] if player.sizes else 19
    self.komi = komi
    self.settings = players.EngineSettings(
        simulations=simulations, seconds_per_move=seconds_per_move,
        resign_threshold=resign_threshold, resign_min_moves=resign_min_moves, endgame=endgame)
    self.time_left = {}
    self._analysis_request = (1.0, None)
    self.last_search = None  # the last genmove's search (player.analyse's dict); None if none
    self._new_game()

  def handle(self, line: str):
    """Runs one command line; returns (id, ok, text) or None for an empty line."""
    return protocol.handle(self, line)

  def lz_analyze(self, reader, out) -> None:
    """The analysis stream that follows an accepted lz-analyze (see analysis)."""
    analysis.stream(self, reader, out, *self._analysis_request)

  def snapshot(self):
    """Everything a command can change, for `restore` after a refusal."""
    return (self.size, self.komi, self.cfg, list(self.history), list(self.moves), self.setup,
            dict(self.time_left), self._analysis_request)

  def restore(self, saved) -> None:
    """Puts back a `snapshot`: a refused command changes nothing."""
    (self.size, self.komi, self.cfg, history, moves, self.setup, time_left,
     self._analysis_request) = saved
    self.history, self.moves, self.time_left = list(history), list(moves), dict(time_left)

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
      state = self._skip_turn(state)
      inserted = [(state, (-colour, self.cfg.pass_action, True))]
    reason = go.illegal_reason(self.cfg, state, action)
    if reason is not None:
      raise GtpError(f"illegal move: {reason}")
    for s, move in inserted + [(go.play(self.cfg, [action], state), (colour, action, False))]:
      self.history.append(s)
      self.moves.append(move)

  def _skip_turn(self, state: go.GoState) -> go.GoState:
    """The pass inserted when one colour moves twice in a row (GTP allows it). It is
    recorded as a pass but is no move of the game: it never ends the game and
    breaks any run of passes."""
    after = go.play(self.cfg, [self.cfg.pass_action], state)
    return after.replace(passes=jnp.zeros_like(after.passes),
                         terminated=after.move_count >= self.cfg.max_moves)

  def _continued(self, state: go.GoState) -> go.GoState:
    """`state`, or where two passes (or the move limit) ended it, the same position as a
    game that goes on, as GNU Go does when a controller plays on (e.g. to settle dead
    stones). Superko then knows only the positions from here on."""
    if not int(state.terminated):
      return state
    board = [int(x) for x in state.board]
    return go.init(self.cfg, black=[p for p, v in enumerate(board) if v == go.BLACK],
                   white=[p for p, v in enumerate(board) if v == go.WHITE],
                   to_play=int(state.to_play))

  def _continue_after_end(self):
    self.history[-1] = self._continued(self.state)

  def _vertex(self, text: str) -> int:
    try:
      return go.gtp_to_action(self.cfg, text)
    except ValueError:
      raise GtpError(f"syntax error: bad vertex {text!r}") from None

  def _generate(self, colour: int) -> tuple[str, int | None]:
    """The move to play for `colour` (a vertex, 'pass' or 'resign') and its action."""
    self.last_search = None
    state = self._continued(self.state)
    if colour != int(state.to_play):
      state = self._skip_turn(state)
    last = self.moves[-1] if self.moves else None
    opponent_passed = (last is not None and last[0] == -colour and not last[2]
                       and last[1] == self.cfg.pass_action)
    action = players.choose_move(self.settings, self.player, self.cfg, state,
                                 opponent_passed=opponent_passed, log=self.log,
                                 time_left=self.time_left.get(colour),
                                 on_search=lambda out: setattr(self, "last_search", out))
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
    self._analysis_request = analysis.parse_args(args)
    return ""  # serve streams the analysis after the '='

  def cmd_boardsize(self, args):
    protocol.require(args, 1, "boardsize SIZE")
    if not re.fullmatch(r"[+-]?[0-9]+", args[0]):
      raise GtpError("syntax error: board size must be an integer")
    size = int(args[0]) if len(args[0]) <= 6 else 10**6  # too large either way
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
    self.komi = protocol.number(args[0], "komi", -MAX_KOMI, MAX_KOMI)
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

  def undo(self) -> bool:
    """Takes back the last move (with the pass the engine inserted before it, if any); False
    when there is none."""
    if not self.moves:
      return False
    self.last_search = None
    self.moves.pop()
    self.history.pop()
    if self.moves and self.moves[-1][2]:  # the pass we added before that move
      self.moves.pop()
      self.history.pop()
    return True

  def sgf(self) -> str:
    """The game so far as an SGF record (its setup stones and moves)."""
    record = sgf.GameRecord(size=self.size, komi=self.komi, black_setup=self.setup[0],
                            white_setup=self.setup[1], moves=[m[:2] for m in self.moves],
                            players={"black": "agz_jax", "white": "agz_jax"})
    return sgf.write(record).decode()

  def cmd_undo(self, args):
    if not self.undo():
      raise GtpError("cannot undo")
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
    main_time = protocol.number(args[0], "main time", 0, MAX_SECONDS)
    protocol.number(args[1], "byo-yomi time", 0, MAX_SECONDS)
    protocol.integer(args[2], "byo-yomi stones", 0, MAX_STONES)
    self.time_left = {go.BLACK: main_time, go.WHITE: main_time} if main_time > 0 else {}
    return ""

  def cmd_time_left(self, args):
    protocol.require(args, 3, "time_left COLOUR TIME STONES")
    colour = protocol.colour(args[0])
    self.time_left[colour] = protocol.number(args[1], "time left", 0, MAX_SECONDS)
    protocol.integer(args[2], "stones left", 0, MAX_STONES)
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
      stop = max(0, protocol.integer(args[1], "move number", 0, 10**6) - 1)
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
    data = self.sgf()
    if args:
      try:
        with open(args[0], "w", encoding="utf-8") as f:
          f.write(data)
      except OSError as e:
        raise GtpError(f"cannot write file: {e}") from None
      return ""
    return data.strip()

