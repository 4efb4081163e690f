"""What every player offers the tools that play it (the GTP engine, matches, the web page).

A player proposes moves; players.move_policy's rules decide what is played. Every player
has the attributes and methods of `Player`; what differs between players is declared in
them (`simulations`, `timed_search`), never probed.
"""

from typing import Protocol, TypedDict, runtime_checkable


class Candidate(TypedDict):
  """A move the player considered."""
  action: int
  visits: int        # the search's visits to it (0 where nothing searched)
  value: float       # its value for the player to move, [-1, 1]
  prior: float       # its prior probability
  pv: list[int]      # the principal variation from it, the move first


class _Proposal(TypedDict):
  action: int                   # the move it would play
  value: float                  # the position's value for the player to move, [-1, 1]
  candidates: list[Candidate]   # most visited (or most likely) first


class Analysis(_Proposal, total=False):
  """What a player proposes in a position (action, value, candidates) and, where its search
  scaled the network's value by the move number (search.value_scale), `value_scale`: the scale
  put on the value here (absent: 1)."""
  value_scale: float


@runtime_checkable
class Player(Protocol):
  """A player of a game.

  Attributes:
    name: as engines report it (GTP `version`, match records).
    sizes: the board sizes it plays (None: any).
    planes: the GoConfig fields (history length) of the positions it is given.
    simulations: its own simulations per search; 0 for a player that does not search (its
      `analyse` ignores `simulations` and `seconds`).
    timed_search: whether `analyse(seconds=)` searches until its time is up; a player that
      searches without it spends `seconds` as the simulations that its own clock says fit.
  """

  name: str
  sizes: tuple[int, ...] | None
  planes: dict
  simulations: int
  timed_search: bool

  def prepare(self, cfg) -> None:
    """Compiles what `cfg`'s games need, so that no move's clock pays for it."""

  def analyse(self, cfg, state, simulations: int | None = None, *,
              seconds: float | None = None) -> Analysis:
    """Proposes a move in `state`.

    Args:
      cfg: the game's config.
      state: the position, unfinished.
      simulations: this search's simulations (None: the player's own); with `seconds`, only
        the count a player searches while its clock learns a simulation's time.
      seconds: spend about this long (None: search `simulations`).
    """
