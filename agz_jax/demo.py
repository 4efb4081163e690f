"""Random self-play on a batch of boards: a first look at the environment's speed.

  python -m agz_jax.demo                      # 256 games of 9x9
  python -m agz_jax.demo --size 19 --batch 64

Every game is played to its end by a random player that never fills its own
eyes (go.sensible_moves) and passes only when no other move is left; the run prints
progress, throughput, and the final board of the first game with its score.
"""

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import go
from agz_jax.players import random_move


def play_games(cfg: go.GoConfig, key: jax.Array, batch: int, chunk: int):
  """Returns (init, advance): advance(states, key) plays `chunk` moves on every board."""
  states = jax.vmap(lambda _: go.init(cfg))(jnp.arange(batch))

  @jax.jit
  def advance(states, key):
    def body(states, key):
      keys = jax.random.split(key, batch)
      actions = jax.vmap(lambda s, k: random_move(cfg, s, k))(states, keys)
      return jax.vmap(lambda s, a: go.step(cfg, s, a))(states, actions), None
    states, _ = jax.lax.scan(body, states, jax.random.split(key, chunk))
    return states

  return states, advance


def main(argv=None):
  parser = argparse.ArgumentParser(description="Random self-play on a batch of Go boards.")
  parser.add_argument("--size", type=int, default=9, help="board size, 2 to 19")
  parser.add_argument("--batch", type=int, default=256, help="games played at once")
  parser.add_argument("--komi", type=float, default=7.5)
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args(argv)
  try:
    cfg = go.GoConfig(size=args.size, komi=args.komi)
  except ValueError as e:
    parser.error(str(e))
  if args.batch < 1:
    parser.error("--batch must be at least 1")

  print(f"{args.batch} random games of {cfg.size}x{cfg.size} Go on {jax.default_backend()} "
        f"({jax.device_count()} device(s))", flush=True)
  chunk = cfg.size * cfg.size // 4
  states, advance = play_games(cfg, jax.random.PRNGKey(args.seed), args.batch, chunk)
  key = jax.random.PRNGKey(args.seed)
  start = time.perf_counter()
  compiled_at = None
  moves = 0
  while not bool(jnp.all(states.terminated)):
    key, sub = jax.random.split(key)
    before = int(jnp.sum(states.move_count))
    states = jax.block_until_ready(advance(states, sub))
    moves += int(jnp.sum(states.move_count)) - before
    if compiled_at is None:
      compiled_at = time.perf_counter()
      print(f"  compiled and played the first {chunk} moves in {compiled_at - start:.1f}s", flush=True)
      moves, start = 0, compiled_at
    else:
      rate = moves / (time.perf_counter() - start)
      done = int(jnp.sum(states.terminated))
      print(f"  {done}/{args.batch} games over, {rate:,.0f} moves/s", flush=True)

  scores = np.asarray(jax.vmap(lambda s: go.score(cfg, s))(states))
  results = np.asarray(jax.vmap(lambda s: go.result(cfg, s))(states))
  lengths = np.asarray(states.move_count)
  print(f"mean game length {lengths.mean():.1f} moves; black won {np.mean(results > 0):.1%}, "
        f"white {np.mean(results < 0):.1%}, drawn {np.mean(results == 0):.1%}")
  first = jax.tree.map(lambda x: x[0], states)
  print(f"\nfinal position of game 0 ({int(first.move_count)} moves):")
  print(go.to_ascii(cfg, first))
  print(f"Tromp-Taylor score {scores[0]:+.1f} (black area - white area - komi {cfg.komi})")


if __name__ == "__main__":
  main()
