"""A player's clock for a search planned for a known number of simulations (Gumbel's): how
long one simulation took, and the simulations that fit in a time."""

import math


class SearchClock:
  """How long one simulation took on the last searches, and the simulations that fit a budget.

  A search at a simulation count the clock has not seen twice may be compiling (a search is
  compiled for each count), so its time is not learned: compiling would make the clock choose
  ever smaller counts, each compiled again.

  Attributes:
    seconds_per_simulation: None before the first timed search of a compiled count.
  """

  WARM_AFTER = 2  # searches at a count before its time is learned

  def __init__(self):
    self.seconds_per_simulation = None
    self._searches = {}  # simulation count -> searches at it so far

  def fitting(self, seconds: float, floor: int = 8, most: int = 4096) -> int:
    """The largest power of two of simulations, from `floor` to `most`, that fits `seconds`
    at the learned time per simulation (which must be known)."""
    fit = math.floor(math.log2(max(seconds / self.seconds_per_simulation, 1)))
    return int(min(most, max(floor, 2 ** fit)))

  def record(self, simulations: int, seconds: float) -> None:
    """A search of `simulations` took `seconds`: learned once the count is warm (WARM_AFTER
    searches at it before)."""
    if simulations and simulations > 0:
      seen = self._searches.get(simulations, 0)
      self._searches[simulations] = seen + 1
      if seen >= self.WARM_AFTER:
        self.seconds_per_simulation = seconds / simulations
