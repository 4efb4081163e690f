"""What a perfect Dots and Boxes player scores against the scripted ones: the ceiling of a
trained network's figures against them (dots_and_boxes.solver).

Solves the board (timed), then plays the perfect player against each scripted opponent,
half the games moving first; prints wins, draws and losses with their 95% intervals, by side.

  python bench/dots_perfect.py                       # 3 x 3 boxes, 1,000 games an opponent
  python bench/dots_perfect.py --rows 2 --cols 3 --games 4000
"""

import argparse
import functools
import time

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import dots_and_boxes as dab, stats
from agz_jax.dots_and_boxes import solver


def play(cfg, first, second, games: int, seed: int) -> np.ndarray:
  """[games] the first player's box margin, each side a scripted player."""
  step = jax.jit(jax.vmap(functools.partial(dab.step, cfg)))
  movers = [jax.jit(functools.partial(p, cfg)) for p in (first, second)]
  states = jax.vmap(lambda _: dab.init(cfg))(jnp.arange(games))
  key = jax.random.PRNGKey(seed)
  for _ in range(cfg.num_lines):
    key, a, b = jax.random.split(key, 3)
    lines = jnp.where(states.to_play == dab.FIRST, movers[0](states, a), movers[1](states, b))
    states = step(states, lines)
  return np.asarray(jax.vmap(functools.partial(dab.score, cfg))(states))


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--rows", type=int, default=3)
  parser.add_argument("--cols", type=int, default=3)
  parser.add_argument("--games", type=int, default=1000, help="games an opponent (even)")
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args()
  cfg = dab.DotsConfig(rows=args.rows, cols=args.cols)
  started = time.perf_counter()
  values = solver.solve(cfg)
  print(f"{cfg.rows} x {cfg.cols} boxes ({cfg.num_lines} lines) solved in "
        f"{time.perf_counter() - started:.1f} s: the first player makes {int(values[0]):+d} "
        f"boxes with best play on both sides")
  print("| opponent | perfect player | games | wins | draws | losses | win rate (95%) |")
  print("|---|---|---|---|---|---|---|")
  half = args.games // 2
  for name, opponent in dab.OPPONENTS.items():
    if name == "perfect":
      continue
    margins = {"first": play(cfg, solver.perfect_lines, opponent, half, args.seed),
               "second": -play(cfg, opponent, solver.perfect_lines, half, args.seed + 1)}
    margins["both"] = np.concatenate([margins["first"], margins["second"]])
    for side, m in margins.items():
      wins, draws = int((m > 0).sum()), int((m == 0).sum())
      low, high = stats.wilson_interval(wins + draws / 2, len(m))
      print(f"| {name} | {side} | {len(m)} | {wins} | {draws} | {len(m) - wins - draws} | "
            f"{(wins + draws / 2) / len(m):.1%} ({low:.1%}-{high:.1%}) |")


if __name__ == "__main__":
  main()
