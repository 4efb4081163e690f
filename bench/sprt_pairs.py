"""Wald's SPRT over games against the pairs' (pentanomial) test, on simulated matches.

  python bench/sprt_pairs.py [--elo1 100] [--alpha 0.1] [--trials 600]

Each simulated match plays pairs of games from one opening with colours swapped: a share of
pairs is split by the opening (each colour wins its game), the others are two independent
games whose win chance gives A the true Elo overall. For H1 true (A at elo1) and H0 true
(A at 0), each test's error rate and mean pairs to a decision (at most 400 pairs).
"""

import argparse
import random

from agz_jax.match.sprt import Sprt, expected_score


def simulate(test, elo, split, paired, trials, seed=0):
  rng = random.Random(seed)
  p = (expected_score(elo) - 0.5 * split) / (1 - split)  # a game's win chance in other pairs
  accepted_h1, lengths = 0, []
  for _ in range(trials):
    pairs, wins = [0] * 5, 0
    for n in range(1, 401):
      points = 1 if rng.random() < split else (rng.random() < p) + (rng.random() < p)
      pairs[2 * points] += 1
      wins += points
      decided = test.decide(test.pair_llr(pairs) if paired else test.llr(wins, 2 * n - wins))
      if decided:
        accepted_h1 += decided == "H1"
        break
    lengths.append(n)
  return accepted_h1 / trials, sum(lengths) / trials


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--elo1", type=float, default=100.0)
  parser.add_argument("--alpha", type=float, default=0.1)
  parser.add_argument("--trials", type=int, default=600)
  args = parser.parse_args()
  test = Sprt(0, args.elo1, alpha=args.alpha, beta=args.alpha)
  for paired in (False, True):
    for split in (0.0, 0.3, 0.5, 0.7):
      h1, n1 = simulate(test, args.elo1, split, paired, args.trials)
      h0, n0 = simulate(test, 0.0, split, paired, args.trials)
      print(f"{'pairs' if paired else 'games'} split {split:.1f}: H1 true, H0 accepted "
            f"{1 - h1:.3f} ({n1:.1f} pairs); H0 true, H1 accepted {h0:.3f} ({n0:.1f} pairs)",
            flush=True)


if __name__ == "__main__":
  main()
