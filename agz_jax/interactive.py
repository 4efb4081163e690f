"""A game between a person and a player, move by move, in a notebook or a terminal.

  from agz_jax import interactive, players
  interactive.play(players.load_player("workdir/cpu_9x9", simulations=32))  # asks with input()

The person types a GTP vertex ('D4', any case), 'pass' or 'resign'. A text
that is no point of the board, or a move our rules refuse (occupied, suicide,
superko), is answered with one line saying why, and the person is asked
again. The player's moves are chosen by the GTP engine (gtp.Engine: its
search, pass and resign rules), so a game here is the game Sabaki would get.
"""

from typing import Callable, Iterable

from agz_jax import go, players, sgf
from agz_jax.gtp import Engine

_NAMES = {go.BLACK: "black", go.WHITE: "white"}


class HumanGame:
  """A game in progress between a person and a player, held by a GTP engine.

  Args:
    player: a players.SearchPlayer, PolicyPlayer or RandomPlayer.
    human: the person's colour, go.BLACK or go.WHITE.
    komi: the game's komi.
    size: the board size (None: the network's; 19 for a random player).
    simulations: the player's searches per move (None: its own).
    seconds_per_move: when set, the player searches for this long instead.

  Attributes:
    engine: the gtp.Engine that holds the game and chooses the player's moves.
    human: the person's colour.
    result: None while the game goes on, then its SGF result ('B+3.5', 'W+R').
  """

  def __init__(self, player, *, human: int = go.BLACK, komi: float = players.KOMI,
               size: int | None = None, simulations: int | None = None,
               seconds_per_move: float | None = None):
    if human not in _NAMES:
      raise ValueError(f"human must be go.BLACK or go.WHITE, got {human!r}")
    self.engine = Engine(player, komi=komi, simulations=simulations,
                         seconds_per_move=seconds_per_move)
    if size is not None and size != self.engine.size:
      _, ok, _ = self.engine.handle(f"boardsize {int(size)}")
      if not ok:
        raise ValueError(f"{player.name} does not play {size}x{size}")
    self.human = human
    self.result = None

  @property
  def cfg(self) -> go.GoConfig:
    return self.engine.cfg

  @property
  def state(self) -> go.GoState:
    return self.engine.state

  @property
  def to_play(self) -> int:
    return int(self.state.to_play)

  @property
  def last_move(self) -> int | None:
    """The action of the last move (cfg.pass_action for a pass), None before the first."""
    return self.engine.moves[-1][1] if self.engine.moves else None

  @property
  def moves(self) -> list[tuple[int, int]]:
    """(colour, action) of the moves played, the passes the engine inserted left out."""
    return [(colour, action) for colour, action, inserted in self.engine.moves if not inserted]

  @property
  def last_search(self) -> dict | None:
    """What the player's analyse gave for its last move (its search), None before it moved."""
    return self.engine.last_search

  def board(self) -> str:
    """The board as text with its coordinates, the colour to play and the move number."""
    return self.engine.cmd_showboard([]).strip("\n")

  def human_move(self, text: str) -> str | None:
    """Plays the person's move, or says why it is not played.

    Args:
      text: a GTP vertex, 'pass' or 'resign' (any case).

    Returns:
      None once played (or resigned); else one line for the person, e.g.
      "E5 is illegal: occupied".
    """
    if self.result is not None or self.to_play != self.human:
      raise ValueError("human_move: it is not the person's turn")
    word = text.strip()
    if word.lower() == "resign":
      self.result = sgf.format_result(-self.human, "R")
      return None
    try:
      action = go.gtp_to_action(self.cfg, word)
    except ValueError as e:
      return f"{e} (or 'resign')"
    reason = go.illegal_reason(self.cfg, self.state, action)
    if reason is not None:
      return f"{go.action_to_gtp(self.cfg, action)} is illegal: {reason}"
    self.engine.cmd_play([_NAMES[self.human], word])
    self._check_end()
    return None

  def reply(self) -> str:
    """Plays the player's move; returns it: a vertex, 'pass' or 'resign'."""
    if self.result is not None or self.to_play == self.human:
      raise ValueError("reply: it is not the player's turn")
    vertex = self.engine.cmd_genmove([_NAMES[-self.human]])
    if vertex == "resign":
      self.result = sgf.format_result(self.human, "R")
    else:
      self._check_end()
    return vertex

  def undo(self) -> bool:
    """Takes back moves to the person's previous turn (the player's answer and the person's
    move); False when the person has not moved yet. A finished game goes on again."""
    engine = self.engine
    if not any(colour == self.human and not inserted for colour, _, inserted in engine.moves):
      return False
    while engine.moves:
      colour, _, inserted = engine.moves[-1]
      engine.undo()
      if colour == self.human and not inserted:
        break
    self.result = None
    return True

  def sgf(self) -> str:
    """The game so far as an SGF record."""
    return self.engine.sgf()

  def _check_end(self) -> None:
    """Two passes or the move limit: the game is scored (Tromp-Taylor)."""
    if int(self.state.terminated):
      self.result = sgf.result_string(self.cfg, self.state)


def play(player, *, human: int = go.BLACK, moves: Iterable[str] | None = None,
         ask: Callable[[str], str] = input, show: Callable[[HumanGame], None] | None = None,
         say: Callable[[str], None] = print, komi: float = players.KOMI,
         size: int | None = None, simulations: int | None = None) -> HumanGame:
  """Plays a whole game against `player`, showing the board after every move.

  Args:
    player: a players.SearchPlayer, PolicyPlayer or RandomPlayer.
    human: the person's colour, go.BLACK (who starts) or go.WHITE.
    moves: the person's moves in order, instead of asking (a script, for tests
      and demonstrations); when they run out, the person resigns.
    ask: called with a prompt, returns what the person typed (input()).
    show: called with the game at the start and after every move (default:
      say(game.board())).
    say: writes a line: the moves, refusals and the result.
    komi: the game's komi.
    size: the board size (None: the network's; 19 for a random player).
    simulations: the player's searches per move (None: its own).

  Returns:
    The finished game (its `result`, and its moves in `engine.moves`).
  """
  game = HumanGame(player, human=human, komi=komi, size=size, simulations=simulations)
  show = show or (lambda g: say(g.board()))
  script = None if moves is None else iter(moves)
  show(game)
  while game.result is None:
    colour = _NAMES[game.to_play]
    if game.to_play == human:
      prompt = f"your move ({colour}: a vertex such as D4, 'pass' or 'resign'): "
      if script is None:
        text = ask(prompt)
      else:
        text = next(script, "resign")
        say(prompt + text)
      refusal = game.human_move(text)
      if refusal is not None:
        say(f"{refusal}; try again")
        continue
    else:
      say(f"{player.name} ({colour}) plays {game.reply()}")
    show(game)
  say(f"game over: {game.result}")
  return game
