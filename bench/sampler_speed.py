"""Positions per second of the SL position sampler: 17 input planes against 48.

`agz_jax.data.positions.sample`, the minibatch source of SL training (pick
games, replay them through the JAX rules, compute the input planes, apply a
random symmetry), jitted once with AlphaGo Zero's 17 planes and once with
AlphaGo's 48, timed in the same run on the same games, the two alternating
round after round after a compile call each. Games come from an import
(`--data`, as `python -m agz_jax.data.import_sgf` writes it) when there is one,
else from random legal play (no passes), whose positions hold more ladder
candidates than human games' (`bench/features_speed.py` counts them); the 48
planes' cost depends on how many there are.

  python bench/sampler_speed.py                      # 19x19, 16 games x 8 positions
  python bench/sampler_speed.py --data none --rounds 3
"""

import argparse
import functools
import os

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import data, go
from agz_jax.data import games as games_lib
from agz_jax.data import positions

import timing


def random_games(size: int, num_games: int, moves: int, seed: int) -> games_lib.GameArchive:
  """`num_games` games of `moves` random legal moves each (no passes)."""
  cfg = go.GoConfig(size=size, max_moves=2 * size * size)
  states = jax.vmap(lambda _: go.init(cfg))(jnp.arange(num_games))
  legal = jax.jit(jax.vmap(lambda s: go.legal_actions(cfg, s)))
  step = jax.jit(jax.vmap(lambda s, a: go.step(cfg, s, a)))
  key = jax.random.PRNGKey(seed)
  played = []
  for _ in range(moves):
    key, k = jax.random.split(key)
    mask = legal(states).at[:, -1].set(False)
    actions = jax.random.categorical(k, jnp.where(mask, 0.0, -1e9))
    states = step(states, actions)
    played.append(np.asarray(actions))
  played = np.stack(played, axis=1).astype(np.int16)
  empty = np.zeros(0, np.int16)
  return games_lib.from_games(size, [games_lib.Game(setup_black=empty, setup_white=empty,
                                                    moves=m, first_player=go.BLACK, komi=7.5)
                                     for m in played])


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--size", type=int, default=19)
  parser.add_argument("--games-per-batch", type=int, default=16, help="games replayed per minibatch")
  parser.add_argument("--positions-per-game", type=int, default=8)
  parser.add_argument("--rounds", type=int, default=5, help="timed rounds; the median of each counts")
  parser.add_argument("--data", default="data/kgs", help="an imported games folder, or 'none'")
  parser.add_argument("--random-games", type=int, default=64,
                      help="without imported games: how many random games to sample from")
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args()

  if args.data != "none" and os.path.isfile(os.path.join(args.data, data.GAMES_FILE)):
    archive = data.load(args.data)
    source = f"{archive.num_games:,} imported games in {args.data}"
  else:
    moves = args.size * args.size // 2
    archive = random_games(args.size, args.random_games, moves, args.seed)
    source = f"{args.random_games} games of {moves} random legal moves"
  table = jax.tree.map(jnp.asarray, positions.make_table(archive, np.arange(archive.num_games)))
  longest = int(np.asarray(table.length).max())
  batch = args.games_per_batch * args.positions_per_game
  print(timing.environment())
  print(f"{args.size}x{args.size}, {source}; minibatch {args.games_per_batch} games x "
        f"{args.positions_per_game} positions = {batch}; median of {args.rounds} rounds", flush=True)

  samplers = {}
  for features in ("agz17", "alphago48"):
    cfg = go.GoConfig(size=args.size, max_moves=max(longest + 1, 2 * args.size * args.size))
    fn = jax.jit(functools.partial(positions.sample, cfg, encoding=features,
                                   num_games=args.games_per_batch,
                                   positions_per_game=args.positions_per_game))
    samplers[features] = fn
  # Round r's key PRNGKey(r): the same positions for both in a round (round 0 compiles).
  best = timing.paired({name: lambda r, fn=fn: fn(table, jax.random.PRNGKey(r))
                        for name, fn in samplers.items()}, args.rounds)
  rate = {name: batch / t for name, t in best.items()}
  for name in samplers:
    print(f"  sampler with {name:9s} {rate[name]:10,.0f} positions/s "
          f"({best[name] * 1e3:,.1f} ms per minibatch)")
  print(f"  ratio 17 / 48 planes: {rate['agz17'] / rate['alphago48']:.2f}x")


if __name__ == "__main__":
  main()
