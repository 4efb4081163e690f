"""One game between two GTP processes, every move checked and the end scored by our rules."""

import dataclasses
import math
import os

import numpy as np

from agz_jax import go, sgf
from agz_jax.match.process import EngineFailure, GtpRefused

_LETTER = {go.BLACK: "b", go.WHITE: "w"}



@dataclasses.dataclass
class Outcome:
  """How a game ended.

  Attributes:
    winner: go.BLACK, go.WHITE, or 0 for a draw.
    result: SGF RE value ('B+3.5', 'W+R', 'B+F', 'W+T', '0').
    reason: 'score', 'resign', 'illegal', 'forfeit' (a refused command) or
      'error' (crash, timeout, an answer that is not a vertex).
    detail: one readable line.
    moves: (colour, action) pairs played.
    final_score: each colour's engine's answer to final_score, or None.
  """

  winner: int
  result: str
  reason: str
  detail: str
  moves: list
  final_score: dict


def _loss(colour: int, reason: str, detail: str, moves: list, flag: str = "F") -> Outcome:
  winner = -colour
  return Outcome(winner, sgf.format_result(winner, flag), reason, detail, moves,
                 {"black": None, "white": None})


def _failure(colour: int, error: Exception, moves: list) -> Outcome:
  if isinstance(error, GtpRefused):
    return _loss(colour, "forfeit", str(error), moves)
  timed_out = isinstance(error, EngineFailure) and error.timed_out
  return _loss(colour, "error", str(error), moves, "T" if timed_out else "F")


def play_game(cfg: go.GoConfig, engines: dict, names: dict, opening=()) -> Outcome:
  """Plays one game between two GTP processes, refereed by our rules.

  Args:
    cfg: size, komi and move limit of the game.
    engines: {go.BLACK: GtpProcess, go.WHITE: GtpProcess}.
    names: {go.BLACK: name, go.WHITE: name}, for messages.
    opening: actions played first, black first (load_openings' lines), given to both
      engines as `play` commands; they are part of the game's record.
  """
  moves = []
  for colour in (go.BLACK, go.WHITE):
    for command in (f"boardsize {cfg.size}", f"komi {cfg.komi:g}", "clear_board"):
      try:
        engines[colour].send(command)
      except GtpRefused as e:
        return _loss(colour, "forfeit", f"{names[colour]} refused {command!r}: {e}", moves)
      except EngineFailure as e:
        return _failure(colour, e, moves)
  state = go.init(cfg)
  for action in opening:
    colour, letter = int(state.to_play), _LETTER[int(state.to_play)]
    state = go.play(cfg, [action], state)  # load_openings checked every move
    moves.append((colour, action))
    vertex = go.action_to_gtp(cfg, action)
    for side in (go.BLACK, go.WHITE):
      try:
        engines[side].send(f"play {letter} {vertex}")
      except GtpRefused as e:
        return _loss(side, "forfeit", f"{names[side]} refused the opening's legal move "
                     f"{letter.upper()} {vertex}: {e}", moves)
      except EngineFailure as e:
        return _failure(side, e, moves)
  while not bool(state.terminated):
    colour = int(state.to_play)
    letter = _LETTER[colour]
    try:
      answer = engines[colour].send(f"genmove {letter}")
    except GtpRefused as e:
      return _loss(colour, "forfeit", f"{names[colour]} refused 'genmove {letter}': {e}", moves)
    except EngineFailure as e:
      return _failure(colour, e, moves)
    vertex = answer.split()[0] if answer.split() else ""
    if vertex.lower() == "resign":
      return _loss(colour, "resign", f"{names[colour]} resigned", moves, "R")
    try:
      action = go.gtp_to_action(cfg, vertex)
    except ValueError:
      return _loss(colour, "error", f"{names[colour]} answered genmove with {answer!r}", moves)
    why = go.illegal_reason(cfg, state, action)
    if why is not None:
      return _loss(colour, "illegal", f"{names[colour]} played {vertex.upper()}: {why}", moves)
    state = go.play(cfg, [action], state)
    moves.append((colour, action))
    vertex = go.action_to_gtp(cfg, action)
    try:
      engines[-colour].send(f"play {letter} {vertex}")
    except GtpRefused as e:
      return _loss(-colour, "forfeit",
                   f"{names[-colour]} refused the legal move {letter.upper()} {vertex}: {e}", moves)
    except EngineFailure as e:
      return _failure(-colour, e, moves)
  score = float(go.host_score(cfg, state))
  winner = int(math.copysign(1, score)) if score else 0
  result = sgf.format_result(winner, score)
  ended = "two passes" if int(state.passes) >= 2 else f"move limit {cfg.max_moves}"
  final_score = {}
  for colour, key in ((go.BLACK, "black"), (go.WHITE, "white")):
    try:
      final_score[key] = engines[colour].send("final_score")
    except (GtpRefused, EngineFailure):
      final_score[key] = None
  return Outcome(winner, result, "score", f"{ended}; Tromp-Taylor {result}", moves, final_score)


def load_openings(path: str, cfg: go.GoConfig, moves: int,
                  limit: int | None = None) -> list[tuple[int, ...]]:
  """The first `moves` moves of each game in an SGF file or a folder of them, as openings.

  Games of another board size, with setup stones, or whose first moves do not alternate
  from black are left out; so are repeated openings. Every move is checked with our rules.
  `limit`: stop once that many are found (the first `limit` of the whole list: a match
  reads only the openings its games use, not every file of a large folder).

  Raises:
    ValueError: no such path, or no game there gives an opening of `moves` moves.
  """
  if moves < 1:
    raise ValueError(f"--opening-moves must be positive, got {moves}")
  if os.path.isdir(path):
    files = sorted(os.path.join(root, name) for root, _, names in os.walk(path)
                   for name in names if name.lower().endswith(".sgf"))
  elif os.path.isfile(path):
    files = [path]
  else:
    raise ValueError(f"--openings {path}: no such file or folder; give an SGF file or a "
                     f"folder of them")
  openings, seen = [], set()
  for file in files:
    try:
      record = sgf.read(file)
    except ValueError:
      continue
    line = record.moves[:moves]
    if (record.size != cfg.size or record.black_setup or record.white_setup
        or len(line) < moves or any(c != (go.BLACK if i % 2 == 0 else go.WHITE)
                                    for i, (c, _) in enumerate(line))):
      continue
    actions = tuple(a for _, a in line)
    state = go.init(cfg)
    try:
      for action in actions:
        state = go.play(cfg, [action], state)
    except ValueError:
      continue
    if actions not in seen and not bool(state.terminated):
      seen.add(actions)
      openings.append(actions)
      if limit is not None and len(openings) >= limit:
        break
  if not openings:
    raise ValueError(f"--openings {path}: no game of {cfg.size}x{cfg.size} without setup "
                     f"stones has {moves} moves to open with; give fewer --opening-moves or "
                     f"other games")
  return openings


def random_openings(cfg: go.GoConfig, count: int, moves: int, seed: int) -> list[tuple[int, ...]]:
  """`count` different openings of `moves` moves, black first, each drawn at random from the
  points on the third line and in: for boards with no human games to open from (9x9), so that
  engines that search alike each time still play different games.

  The same arguments give the same openings, and a larger `count` the same ones first (a
  resumed match that grew keeps its pairs). Each pair of games plays one with colours
  swapped, so whatever edge an opening gives one colour, each engine has it once.

  Raises:
    ValueError: `moves` not positive, or more moves or openings than the points allow.
  """
  if moves < 1:
    raise ValueError(f"--random-openings must be positive, got {moves}")
  inner = [r * cfg.size + c for r in range(2, cfg.size - 2) for c in range(2, cfg.size - 2)]
  if moves > len(inner) or math.perm(len(inner), moves) < count:
    raise ValueError(f"--random-openings {moves}: a {cfg.size}x{cfg.size} board has {len(inner)} "
                     f"points on the third line and in, too few for {count} different openings; "
                     f"give more moves or fewer games")
  rng = np.random.default_rng(seed)
  openings, seen = [], set()
  while len(openings) < count:
    actions = tuple(int(a) for a in rng.choice(inner, size=moves, replace=False))
    if actions in seen:
      continue
    seen.add(actions)
    state = go.init(cfg)
    try:
      for action in actions:
        state = go.play(cfg, [action], state)
    except ValueError:  # a suicide among many stones
      continue
    if np.count_nonzero(np.asarray(state.board)) == moves:  # nothing captured
      openings.append(actions)
  return openings
