"""Random-play throughput of our Dots and Boxes against OpenSpiel's, measured in the same run.

Ours: jit + vmap over `--batch` games, one uniformly random legal line per game
per step, a finished game restarted at once, the line counts and box margins
folded into the carry (nothing is dead code). OpenSpiel's: its C++ game from
Python, one game at a time (how its API is used: legal_actions, a random
choice, apply_action), on one core. Both count lines drawn per second.

  pip install open_spiel
  python bench/dots_speed.py                        # 3x3 and 5x5 boxes, batch 1024
  python bench/dots_speed.py --sizes 2x2 --batch 4096
"""

import argparse
import random
import time

import jax
import jax.numpy as jnp

from agz_jax import dots_and_boxes as db

import timing


def ours(cfg: db.DotsConfig, batch: int, steps: int):
  init = jax.vmap(lambda _: db.init(cfg))(jnp.arange(batch))
  step = jax.vmap(lambda s, a: db.step(cfg, s, a))

  def body(i, carry):
    state, key, acc = carry
    key, sub = jax.random.split(key)
    state = step(state, db.random_lines(cfg, state, sub))
    # Each finished game's box margin enters the carry.
    acc = acc + jnp.sum(jnp.where(state.terminated, jnp.sum(state.boxes.astype(jnp.int32), -1), 0))
    state = jax.tree.map(lambda f, x: jnp.where(
        state.terminated.reshape((-1,) + (1,) * (x.ndim - 1)), f, x), init, state)
    return state, key, acc

  @jax.jit
  def run(key):
    return jax.lax.fori_loop(0, steps, body, (init, key, jnp.int32(0)))

  return run


def time_ours(cfg, batch, steps, repeats=3) -> float:
  run = ours(cfg, batch, steps)
  seconds = timing.paired({"ours": lambda r: run(jax.random.PRNGKey(r))}, repeats)["ours"]
  return batch * steps / seconds


def time_openspiel(rows, cols, seconds=3.0) -> float:
  import pyspiel  # pylint: disable=import-outside-toplevel
  game = pyspiel.load_game("dots_and_boxes", {"num_rows": rows, "num_cols": cols})
  rng = random.Random(0)
  moves, start = 0, time.perf_counter()
  while time.perf_counter() - start < seconds:
    state = game.new_initial_state()
    while not state.is_terminal():
      state.apply_action(rng.choice(state.legal_actions()))
      moves += 1
  return moves / (time.perf_counter() - start)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--sizes", default="3x3,5x5", help="box grids, e.g. 2x2,3x3,5x5")
  parser.add_argument("--batch", type=int, default=1024)
  parser.add_argument("--games", type=int, default=20, help="games per lane of our timed run")
  args = parser.parse_args()
  print(timing.environment())
  print(f"ours at batch {args.batch}")
  for size in args.sizes.split(","):
    rows, cols = (int(x) for x in size.split("x"))
    cfg = db.DotsConfig(rows, cols)
    mine = time_ours(cfg, args.batch, args.games * cfg.num_lines)
    try:
      theirs = time_openspiel(rows, cols)
    except ImportError:
      print(f"{size}: ours {mine:,.0f} lines/s; OpenSpiel not installed (pip install open_spiel)")
      continue
    print(f"{size}: ours {mine:,.0f} lines/s ({mine / cfg.num_lines:,.0f} games/s), OpenSpiel "
          f"{theirs:,.0f} lines/s ({theirs / cfg.num_lines:,.0f} games/s): ours / OpenSpiel = "
          f"{mine / theirs:.1f}x")


if __name__ == "__main__":
  main()
