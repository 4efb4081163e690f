"""A sequential probability ratio test on a match's results: stop when the answer is known.

Engine testers (cutechess-cli, fishtest) compare two settings this way: H0 says engine A is
`elo0` stronger than B, H1 that it is `elo1` stronger (elo0 < elo1), and after each game
Wald's log-likelihood ratio

    LLR = W ln(p1 / p0) + L ln((1 - p1) / (1 - p0)),    p = 1 / (1 + 10^(-elo / 400))

(W wins and L losses of A, a draw counting half of each) is compared with Wald's bounds
ln(beta / (1 - alpha)) below and ln((1 - beta) / alpha) above: crossing the upper bound
accepts H1, the lower one H0, with error rates at most alpha (H1 accepted when H0 holds)
and beta (the reverse). Games are counted one by one under the logistic model, as the match's
Elo figures are.

Pairs of games from one opening with colours swapped may be counted as pairs instead (the
pentanomial model of fishtest; `--sprt-pairs`): a pair scores A 0, 1/2, 1, 3/2 or 2 points, and
where the opening decides much of the result (each colour wins its game of the pair) a split
pair says more about A against B than two independent games would; counted as games, split
pairs only make Wald's test more cautious than its alpha and beta. The pairs' mean score per
game mu and its variance per pair var give the generalised test's normal approximation

    LLR = N (s1 - s0) (2 mu - s0 - s1) / (2 var),    s = expected score at elo0 and elo1,

over N pairs. That approximation is asymptotic: a variance read from a handful of pairs can be
near zero (a run of split pairs), and where colour decides most pairs one pseudo-pair of prior
let simulated tests accept H0 wrongly in 18% of runs at alpha = beta = 0.05. So eight
pseudo-pairs of two independent even games each (2, 0, 4, 0, 2) are added to the counts before
mu and var are read: the test starts from independent games' variance and moves to the
observed one as pairs come in. Simulated with 0 to 80% of pairs split, at [0, 50] and [0, 100]
(alpha = beta = 0.05 and 0.1), its error rates stayed within about a point of alpha and beta,
and it decided in 45-80% of the pairs that independent pairs need where most pairs split. Over
many pairs of independent games it agrees with Wald's form above. It pays at narrow bounds and
long matches (fishtest's): at [0, 100] with alpha = beta = 0.1, Wald's test over games decided
in 24-30 pairs whatever the share of split pairs (0-70%), erring in 0.1-9% of runs; the pairs'
test needed 29-38 pairs where H1 held and 17-30 where H0 did. So games are counted one by one
unless a match asks for pairs. (The simulations: `python bench/sprt_pairs.py`, 600 matches a
setting, and `--elo1 50 --alpha 0.05`; 2026-12-06.)
"""

import dataclasses
import math
from collections.abc import Sequence

from agz_jax.stats import ELO_PER_LOG_ODDS

H0, H1 = "H0", "H1"
PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)  # A's score per game in a pair of 0 .. 2 points
PAIR_PRIOR = (2.0, 0.0, 4.0, 0.0, 2.0)  # eight pseudo-pairs of two independent even games


def expected_score(elo: float) -> float:
  """The expected score of a player `elo` points stronger (the logistic model)."""
  return 1.0 / (1.0 + math.exp(-elo / ELO_PER_LOG_ODDS))


@dataclasses.dataclass(frozen=True)
class Sprt:
  """The test's settings.

  Attributes:
    elo0, elo1: A's Elo advantage under H0 and H1 (elo0 < elo1).
    alpha: the chance of accepting H1 when H0 holds, in (0, 0.5).
    beta: the chance of accepting H0 when H1 holds, in (0, 0.5).
  """

  elo0: float
  elo1: float
  alpha: float = 0.05
  beta: float = 0.05

  def __post_init__(self):
    if not (math.isfinite(self.elo0) and math.isfinite(self.elo1) and self.elo0 < self.elo1):
      raise ValueError(f"SPRT bounds must be ordered, ELO0 < ELO1: got {self.elo0:g} and "
                       f"{self.elo1:g}; give e.g. --sprt 0 50")
    for name in ("alpha", "beta"):
      value = getattr(self, name)
      if not 0 < value < 0.5:
        raise ValueError(f"SPRT {name} must be in (0, 0.5), got {value:g}; 0.05 is usual")

  @property
  def lower(self) -> float:
    """Accept H0 at or below this LLR: ln(beta / (1 - alpha))."""
    return math.log(self.beta / (1 - self.alpha))

  @property
  def upper(self) -> float:
    """Accept H1 at or above this LLR: ln((1 - beta) / alpha)."""
    return math.log((1 - self.beta) / self.alpha)

  def llr(self, wins: float, losses: float, draws: float = 0) -> float:
    """The log-likelihood ratio of H1 against H0 after these results of A."""
    p0, p1 = expected_score(self.elo0), expected_score(self.elo1)
    w, l = wins + draws / 2, losses + draws / 2
    return w * math.log(p1 / p0) + l * math.log((1 - p1) / (1 - p0))

  def pair_llr(self, pairs: Sequence[float]) -> float:
    """The log-likelihood ratio after pairs of games (the pentanomial model).

    Args:
      pairs: how many pairs scored A 0, 1/2, 1, 3/2 and 2 points (five counts).
    """
    if len(pairs) != len(PAIR_SCORES) or min(pairs) < 0:
      raise ValueError(f"pairs are five counts (A scored 0, 1/2, 1, 3/2, 2 points), got {pairs}")
    n = sum(pairs)
    if n == 0:
      return 0.0
    counts = [c + prior for c, prior in zip(pairs, PAIR_PRIOR)]
    total = sum(counts)
    mu = sum(c * x for c, x in zip(counts, PAIR_SCORES)) / total
    var = sum(c * (x - mu) ** 2 for c, x in zip(counts, PAIR_SCORES)) / total
    s0, s1 = expected_score(self.elo0), expected_score(self.elo1)
    return n * (s1 - s0) * (2 * mu - s0 - s1) / (2 * var)

  def decide(self, llr: float) -> str | None:
    """H0 or H1 once `llr` crosses a bound, else None (play on)."""
    if llr >= self.upper:
      return H1
    if llr <= self.lower:
      return H0
    return None

  def decision(self, wins: float, losses: float, draws: float = 0) -> str | None:
    """H0 or H1 once a bound is crossed by these results of A, else None (play on)."""
    return self.decide(self.llr(wins, losses, draws))

  def report(self, llr: float, counted: str = "") -> str:
    """One progress line: 'SPRT [0, 50] (...): LLR 1.23 (-2.94, 2.94)', what was counted if
    given ('9 pairs') and the decision, if any."""
    text = (f"SPRT [{self.elo0:g}, {self.elo1:g}] (alpha {self.alpha:g}, beta {self.beta:g}): "
            f"LLR {llr:.2f} ({self.lower:.2f}, {self.upper:.2f})")
    if counted:
      text += f", {counted}"
    decided = self.decide(llr)
    if decided is not None:
      elo = self.elo1 if decided == H1 else self.elo0
      text += f": {decided} accepted (A is {elo:+g} Elo)"
    return text

  def line(self, wins: float, losses: float, draws: float = 0) -> str:
    """The progress line after these results of A, games counted one by one."""
    return self.report(self.llr(wins, losses, draws))
