"""SGF game records: read and write with sgfmill, replay through the environment.

Coordinates: sgfmill numbers rows from the bottom; our points number rows from
the top (index = row * size + col); go.sgf_move_to_action and
go.action_to_sgf_move convert.
"""

import dataclasses
import os

from sgfmill import sgf, sgf_moves

from agz_jax import go, paths

_COLOURS = {"b": go.BLACK, "w": go.WHITE}
_LETTERS = {go.BLACK: "b", go.WHITE: "w"}


@dataclasses.dataclass
class GameRecord:
  """One game: setup, moves and what is known about it.

  Attributes:
    size: board size.
    komi: komi.
    black_setup, white_setup: setup stones (SGF AB / AW; handicap stones), as points.
    moves: (colour, action) pairs in order; action size*size is a pass.
    first_to_play: colour to move first when there are no moves (SGF PL).
    result: SGF RE value such as 'B+R' or 'W+3.5', or None.
    handicap: SGF HA, 0 if absent.
    players: {'black': name, 'white': name, 'black_rank': ..., 'white_rank': ...}.
    date: SGF DT or None.
    comments: per move, a comment or None (written as C[] on the move's node).
  """

  size: int
  komi: float
  black_setup: list = dataclasses.field(default_factory=list)
  white_setup: list = dataclasses.field(default_factory=list)
  moves: list = dataclasses.field(default_factory=list)
  first_to_play: int = go.BLACK
  result: str | None = None
  handicap: int = 0
  players: dict = dataclasses.field(default_factory=dict)
  date: str | None = None
  comments: list = dataclasses.field(default_factory=list)

  def config(self, **overrides) -> go.GoConfig:
    """A GoConfig for replaying this game (the move limit leaves room for every move)."""
    limit = max(2 * self.size * self.size, 2 * len(self.moves) + 2)
    return go.GoConfig(size=self.size, komi=self.komi, max_moves=limit, **overrides)


def read(source) -> GameRecord:
  """Parses an SGF game from bytes, a string or a file path (local or a URL such as gs://).

  Raises:
    ValueError: "bad SGF: <why>" when the text cannot be read as a Go game.
  """
  if isinstance(source, (str, os.PathLike)) and (paths.is_remote(source)
                                                 or os.path.exists(source)):
    source = paths.path(source).read_bytes()
  encoding = None
  if isinstance(source, str):  # already decoded text: whatever CA[] says, it is UTF-8 now
    source, encoding = source.encode("utf-8"), "utf-8"
  try:
    game = sgf.Sgf_game.from_bytes(source, override_encoding=encoding)
    size = game.get_size()
    board, plays = sgf_moves.get_setup_and_moves(game)
  except ValueError as e:
    raise ValueError(f"bad SGF: {e}") from None
  if not 2 <= size <= 19:
    raise ValueError(f"bad SGF: board size {size} is not supported (2 to 19)")
  root = game.get_root()
  black_setup, white_setup = [], []
  for colour, move in board.list_occupied_points():
    (black_setup if colour == "b" else white_setup).append(go.sgf_move_to_action(size, move))

  def prop(name):
    try:
      return root.get(name) if root.has_property(name) else None
    except ValueError:
      raise ValueError(f"bad SGF: bad {name} property") from None

  try:
    komi = float(game.get_komi())
  except ValueError:
    komi = 0.0
  first = prop("PL")
  moves, comments = [], []
  for node, (colour, move) in zip(_move_nodes(game), plays):
    moves.append((_COLOURS[colour], go.sgf_move_to_action(size, move)))
    comments.append(node.get("C") if node.has_property("C") else None)
  players = {k: v for k, v in (("black", prop("PB")), ("white", prop("PW")),
                                ("black_rank", prop("BR")), ("white_rank", prop("WR"))) if v}
  try:
    handicap = int(prop("HA") or 0)
  except ValueError:
    handicap = 0
  return GameRecord(
      size=size, komi=komi, black_setup=sorted(black_setup), white_setup=sorted(white_setup),
      moves=moves, first_to_play=_COLOURS.get(str(first).lower(), go.BLACK) if first else
      (moves[0][0] if moves else go.BLACK),
      result=prop("RE"), handicap=handicap, players=players, date=prop("DT"), comments=comments)


def _move_nodes(game):
  return [node for node in game.get_main_sequence() if node.get_move()[0] is not None]


def replay(record: GameRecord, cfg: go.GoConfig | None = None) -> list:
  """Replays a record through the environment, checking every move.

  A move by the colour not to play (two moves in a row by one side, as in some
  handicap records) is preceded by a pass of the other side.

  Returns:
    The states after the setup and after each move ([initial, after move 1, ...]).

  Raises:
    ValueError: "move 12 (B D4) is illegal: superko" for the first bad move.
  """
  cfg = cfg or record.config()
  to_play = record.moves[0][0] if record.moves else record.first_to_play
  state = go.init(cfg, black=record.black_setup, white=record.white_setup, to_play=to_play)
  states = [state]
  for number, (colour, action) in enumerate(record.moves, start=1):
    if colour != int(state.to_play):
      state = go.play(cfg, [cfg.pass_action], state)
    try:
      state = go.play(cfg, [action], state)
    except ValueError as e:
      reason = str(e).split(": ", 1)[-1]
      vertex = go.action_to_gtp(cfg, action) if 0 <= action <= cfg.pass_action else str(action)
      raise ValueError(f"move {number} ({_LETTERS[colour].upper()} {vertex}) is illegal: "
                       f"{reason}") from None
    states.append(state)
  return states


def write(record: GameRecord) -> bytes:
  """The record as SGF bytes (FF[4], GM[1])."""
  game = sgf.Sgf_game(size=record.size)
  root = game.get_root()
  root.set("KM", record.komi)
  if record.handicap:
    root.set("HA", record.handicap)
  if record.black_setup or record.white_setup:
    root.set_setup_stones([go.action_to_sgf_move(record.size, p) for p in record.black_setup],
                          [go.action_to_sgf_move(record.size, p) for p in record.white_setup])
  if not record.moves and record.first_to_play == go.WHITE:
    root.set("PL", "w")
  for key, prop in (("black", "PB"), ("white", "PW"), ("black_rank", "BR"), ("white_rank", "WR")):
    if record.players.get(key):
      root.set(prop, record.players[key])
  if record.result:
    root.set("RE", record.result)
  if record.date:
    root.set("DT", record.date)
  comments = record.comments + [None] * (len(record.moves) - len(record.comments))
  for (colour, action), comment in zip(record.moves, comments):
    node = game.extend_main_sequence()
    node.set_move(_LETTERS[colour], go.action_to_sgf_move(record.size, action))
    if comment:
      node.set("C", comment)
  return game.serialise()


def format_result(winner: int, margin) -> str:
  """SGF RE value: the winner (go.BLACK, go.WHITE; 0 a draw) and the margin, a number of
  points or 'R' (resignation), 'T' (time), 'F' (forfeit): 'B+3.5', 'W+R', '0'."""
  if not winner:
    return "0"
  margin = f"{abs(margin):g}" if isinstance(margin, (int, float)) else margin
  return f"{'B' if winner == go.BLACK else 'W'}+{margin}"


def result_string(cfg: go.GoConfig, state: go.GoState) -> str:
  """SGF RE value of a finished game: 'B+3.5', 'W+R' style (forfeit: '+F'), '0' for a draw."""
  if int(state.forfeit):
    return format_result(-int(state.forfeit), "F")
  score = go.host_score(cfg, state)
  return format_result((score > 0) - (score < 0), score)


class SelfPlayWriter:
  """Writes a sample of self-play games as SGF, each move commented with the
  search's win rate for the player who made it.

  Follows the first S game slots from the per-iteration trace of training;
  every `every`-th game that ends in them goes to DIRECTORY/<iteration>_<n>.sgf
  (a local folder or a URL, each file written whole). Only process 0 writes.
  A slot's game in progress when training resumed from a checkpoint is
  incomplete and skipped.
  """

  def __init__(self, directory: str, cfg: go.GoConfig, *, every: int, fresh: bool):
    import jax  # pylint: disable=import-outside-toplevel
    self.directory = directory
    self.cfg = cfg
    self.every = max(1, every)
    self.active = jax.process_index() == 0
    self.fresh = fresh
    self.games = {}   # slot -> list of (colour, action, comment) or None while incomplete
    self.finished = 0

  def add(self, iteration: int, trace: dict) -> None:
    """Takes one iteration's trace: dict of [T, S] arrays (see training.agz.iteration)."""
    if not self.active or trace["action"].shape[1] == 0:
      return
    steps, slots = trace["action"].shape
    for s in range(slots):
      if s not in self.games:
        self.games[s] = [] if self.fresh else None
      for t in range(steps):
        colour = int(trace["to_play"][t, s])
        if self.games[s] is not None and not trace["resigned"][t, s]:
          value = float(trace["root_value"][t, s])
          comment = f"win rate {'B' if colour == go.BLACK else 'W'} {50 * (value + 1):.1f}%"
          self.games[s].append((colour, int(trace["action"][t, s]), comment))
        if trace["ended"][t, s]:
          if self.games[s] is not None:
            self._finish(iteration, self.games[s], float(trace["result"][t, s]),
                         bool(trace["resigned"][t, s]), colour)
          self.games[s] = []

  def _finish(self, iteration, moves, result, resigned, last_colour):
    self.finished += 1
    if self.finished % self.every:
      return
    if resigned:
      text = format_result(-last_colour, "R")
    else:
      state = go.play(self.cfg, [a for _, a, _ in moves])
      text = result_string(self.cfg, state)
    record = GameRecord(size=self.cfg.size, komi=self.cfg.komi, moves=[m[:2] for m in moves],
                        comments=[m[2] for m in moves], result=text,
                        players={"black": "agz_jax self-play", "white": "agz_jax self-play"})
    paths.makedirs(self.directory)
    (paths.path(self.directory) / f"{iteration:06d}_{self.finished:05d}.sgf").write_bytes(
        write(record))
