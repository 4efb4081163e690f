"""One game between two GTP processes, every move checked and the end scored by our rules."""

import dataclasses
import math

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


def play_game(cfg: go.GoConfig, engines: dict, names: dict) -> Outcome:
  """Plays one game between two GTP processes, refereed by our rules.

  Args:
    cfg: size, komi and move limit of the game.
    engines: {go.BLACK: GtpProcess, go.WHITE: GtpProcess}.
    names: {go.BLACK: name, go.WHITE: name}, for messages.
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
