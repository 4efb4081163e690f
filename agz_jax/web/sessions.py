"""The game a web page plays: a person against an engine, one move at a time.

Both sessions answer the same calls (the server's API): `new`, `play` (the
person's move, then the engine's answer), `undo`, `view` (everything the page
draws, as JSON-ready data). A request the game cannot take raises `Refused`
with one line for the person; the game is then unchanged.
"""

import numpy as np

from agz_jax import dots_and_boxes as db
from agz_jax import go
from agz_jax.game import Game
from agz_jax.interactive import HumanGame
from agz_jax.players.move_policy import win_rate


class Refused(ValueError):
  """A request the game cannot take (an illegal move, a move out of turn): one line why."""


def _heatmap(out: dict | None, num_actions: int) -> dict | None:
  """The page's overlay of a search: each action's share of the visits and its prior."""
  if out is None:
    return None
  visits, prior = np.zeros(num_actions), np.zeros(num_actions)
  for c in out["candidates"]:
    visits[c["action"]], prior[c["action"]] = c["visits"], c["prior"]
  total = max(1.0, visits.sum())
  return {"visits": (visits / total).round(4).tolist(), "prior": prior.round(4).tolist(),
          "action": int(out["action"]), "win_rate": round(win_rate(out["value"]), 4)}


class GoSession:
  """Go against a GTP engine's player (interactive.HumanGame: its search, pass and resign
  rules), with undo and the SGF of the game."""

  game_name = "go"

  def __init__(self, player, *, komi: float, seconds: float = 1.0):
    self.player, self.komi = player, komi
    self.new("black", seconds)

  def new(self, human: str, seconds: float) -> None:
    colours = {"black": go.BLACK, "white": go.WHITE}
    if human not in colours:
      raise Refused(f"colour must be black or white, got {human!r}")
    self.seconds = _seconds(seconds)
    self.human = colours[human]
    self.game = HumanGame(self.player, human=self.human, komi=self.komi,
                          seconds_per_move=self.seconds)
    self.analysis = None
    self._reply()

  def play(self, move: str) -> None:
    if self.game.result is not None:
      raise Refused(f"the game is over ({self.game.result}): start a new one")
    if self.game.to_play != self.human:
      raise Refused("it is not your turn")
    refusal = self.game.human_move(str(move))
    if refusal is not None:
      raise Refused(refusal)
    self._reply()

  def _reply(self) -> None:
    if self.game.result is None and self.game.to_play != self.human:
      self.game.reply()
      self.analysis = self.game.last_search

  def undo(self) -> None:
    """Takes back moves to the person's previous turn."""
    if not self.game.undo():
      raise Refused("nothing to undo: you have not moved yet")
    self.analysis = None

  def sgf(self) -> str:
    return self.game.sgf().strip() + "\n"

  def view(self) -> dict:
    cfg, state = self.game.cfg, self.game.state
    moves = [{"colour": "black" if c == go.BLACK else "white",
              "move": go.action_to_gtp(cfg, a)} for c, a in self.game.moves]
    return {"game": "go", "size": cfg.size, "komi": cfg.komi,
            "star_points": go.star_points(cfg.size),
            "board": [int(x) for x in np.asarray(state.board)],
            "to_play": "black" if self.game.to_play == go.BLACK else "white",
            "human": "black" if self.human == go.BLACK else "white",
            "moves": moves, "result": self.game.result, "seconds": self.seconds,
            "engine": self.player.name,
            "analysis": _heatmap(self.analysis, cfg.num_actions)}


class DotsSession:
  """Dots and Boxes against a SearchPlayer of its network: after the person's line the engine draws its
  lines (several while it keeps completing boxes) until it is the person's turn again."""

  game_name = "dots_and_boxes"

  def __init__(self, player, *, seconds: float = 1.0):
    self.player = player
    self.cfg: db.DotsConfig = player.game.cfg
    self.game = Game(db, self.cfg)
    self.new("first", seconds)

  def new(self, human: str, seconds: float) -> None:
    sides = {"first": db.FIRST, "second": db.SECOND}
    if human not in sides:
      raise Refused(f"side must be first or second, got {human!r}")
    self.seconds = _seconds(seconds)
    self.human = sides[human]
    self.history = [self.game.init()]
    self.moves = []  # (player, line)
    self.analysis = None
    self._reply()

  @property
  def state(self):
    return self.history[-1]

  def play(self, move) -> None:
    state = self.state
    if bool(state.terminated):
      raise Refused("the game is over: start a new one")
    if int(state.to_play) != self.human:
      raise Refused("it is not your turn")
    try:
      line = db.text_to_action(self.cfg, str(move))
    except ValueError as e:
      raise Refused(str(e)) from None
    if bool(state.lines[line]):
      raise Refused(f"{db.action_to_text(self.cfg, line)} is already drawn")
    self._step(line)
    self._reply()

  def _step(self, line: int) -> None:
    self.moves.append((int(self.state.to_play), line))
    self.history.append(self.game.step(self.state, line))

  def _reply(self) -> None:
    while not bool(self.state.terminated) and int(self.state.to_play) != self.human:
      self.analysis = self.player.analyse(self.cfg, self.state, seconds=self.seconds)
      self._step(int(self.analysis["action"]))

  def undo(self) -> None:
    """Takes back lines to the person's previous turn (the engine's lines after it too)."""
    if not any(p == self.human for p, _ in self.moves):
      raise Refused("nothing to undo: you have not moved yet")
    while self.moves:
      player, _ = self.moves.pop()
      self.history.pop()
      if player == self.human and (not self.moves or self.moves[-1][0] != self.human):
        break
    self.analysis = None

  def view(self) -> dict:
    state = self.state
    boxes = np.asarray(state.boxes)
    side = lambda p: "first" if p == db.FIRST else "second"
    result = None
    if bool(state.terminated):
      r = float(self.game.result(state))
      result = "draw" if r == 0 else f"{side(int(np.sign(r)))} wins"
    return {"game": "dots_and_boxes", "rows": self.cfg.rows, "cols": self.cfg.cols,
            "lines": [bool(x) for x in np.asarray(state.lines)],
            "boxes": [int(x) for x in boxes],
            "score": {"first": int((boxes == db.FIRST).sum()),
                      "second": int((boxes == db.SECOND).sum())},
            "to_play": side(int(state.to_play)), "human": side(self.human),
            "moves": [{"player": side(p), "line": line, "name": db.action_to_text(self.cfg, line)}
                      for p, line in self.moves],
            "result": result, "seconds": self.seconds, "engine": self.player.name,
            "analysis": _heatmap(self.analysis, self.cfg.num_lines)}


def _seconds(value) -> float:
  try:
    seconds = float(value)
  except (TypeError, ValueError):
    raise Refused(f"seconds must be a number, got {value!r}") from None
  if not 0.05 <= seconds <= 60:
    raise Refused(f"seconds must be from 0.05 to 60, got {seconds:g}")
  return seconds
