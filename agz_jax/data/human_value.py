"""AlphaGo's value data from human games: a few positions per game, their planes computed once.

  python -m agz_jax.data.human_value --data data/human --out data/value_human \\
      [--positions-per-game 1] [--encoding alphago49] [--val-from 2017-05-01,tom-=2011-08-01] \\
      [--komi 5.5,7.5] [--max-games N] [--batch 256] [--seed 0]

The even games of the import (no handicap, no setup stones, a komi in --komi, a winner decided
on the board: not on time, by forfeit or a disconnection) give
`--positions-per-game` positions each, drawn uniformly over the game's moves: one per game is
the 2016 paper's remedy for a value network that learns whole games by heart. The held-out
games (`--val-from`, as the supervised tasks split them) give one position each. The value
target z is the game's winner from the view of the player to move. `--max-games N` draws from
N training games only (a random N of them): with N * per-game positions equal to another
folder's, the two differ only in how many games their positions come from, which is where the
paper's over-fitting shows.

The 48 or 49 planes cost far more than the value network on a CPU, so they are computed here
once and packed into the folder format of `python -m agz_jax.data.value_data`: `info.json`
and `games_NNNNN.npz` batches (`planes` bits packed, `z`, `move` the move number), the
training positions first and the held-out ones last (`info["test_positions"]`). The value
task reads it with `value.source = "human_cache"` and `value.data_dir` set to the folder, and
holds out exactly those positions. A batch's file appears only once it is complete; the same
command again goes on from the first missing batch (the positions are drawn from --seed, so a
resumed run computes the same ones).
"""

import argparse
import functools
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import go
from agz_jax.data import games as games_lib
from agz_jax.data import positions, value_data
from agz_jax.metrics import format_eta

# What a folder's positions were drawn with: a second run into the folder must agree.
_SETTINGS = ("data", "encoding", "size", "positions_per_game", "val_from", "komi", "seed", "batch",
             "max_games")


def choose_positions(archive: games_lib.GameArchive, *, val_from: str, komi_range,
                     positions_per_game: int, seed: int,
                     max_games: int = 0) -> tuple[np.ndarray, np.ndarray, int]:
  """(game [N], move number [N], how many of them are held out, at the end).

  Training games give `positions_per_game` positions each (their order shuffled, so that every
  batch mixes games; `max_games` > 0: only the first that many of the shuffled games), held-out
  games one each; move numbers uniform over the game's moves.
  """
  train_idx, val_idx = games_lib.split_by_date(archive, val_from)
  usable = games_lib.value_games(archive, komi_range) & (archive.lengths() > 0)
  rng = np.random.default_rng(seed)
  rows = []
  for idx, per_game, most in ((train_idx, positions_per_game, max_games), (val_idx, 1, 0)):
    idx = np.asarray(idx, np.int64)
    idx = rng.permutation(idx[usable[idx]])
    if most:
      idx = idx[:most]
    game = np.repeat(idx, per_game)
    move = (rng.random(len(game)) * archive.lengths()[game]).astype(np.int64)
    rows.append((game, move))
  (train_game, train_move), (val_game, val_move) = rows
  return (np.concatenate([train_game, val_game]), np.concatenate([train_move, val_move]),
          len(val_game))


@functools.cache
def planes_of(cfg: go.GoConfig, encoding: str):
  """(table, games [B], move numbers [B]) -> (planes [B, N, N, F] bool, z [B]), jitted (once
  per board and encoding)."""

  def fn(table, game, move):
    states = positions.replay_positions(cfg, table, game, move[:, None])
    planes = go.features(cfg, states, encoding)
    z = (table.winner[game] * states.to_play).astype(jnp.float32)
    return planes > 0.5, z

  return jax.jit(fn)


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--data", required=True,
                      help="imported human games (python -m agz_jax.data.import_sgf --out)")
  parser.add_argument("--out", required=True, help="output folder")
  parser.add_argument("--positions-per-game", type=int, default=1)
  parser.add_argument("--encoding", default="alphago49")
  parser.add_argument("--val-from", default="2017-05-01,tom-=2011-08-01",
                      help="held-out games: from this date on (per source prefix: "
                           "'DATE,PREFIX=DATE')")
  parser.add_argument("--komi", default="5.5,7.5", help="LOW,HIGH: the even games' komi")
  parser.add_argument("--max-games", type=int, default=0,
                      help="draw from this many training games (a random choice; default: all)")
  parser.add_argument("--batch", type=int, default=256, help="positions computed at once")
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args(argv)
  try:
    komi = tuple(float(x) for x in args.komi.split(","))
    if len(komi) != 2 or komi[0] > komi[1]:
      raise ValueError(f"--komi must be LOW,HIGH, got {args.komi!r}")
    if args.positions_per_game < 1 or args.batch < 1 or args.max_games < 0:
      raise ValueError("--positions-per-game and --batch must be positive, --max-games 0 (all) "
                       "or more")
    archive = games_lib.load(args.data)
    longest = int(archive.lengths().max())
    cfg = go.GoConfig(size=int(archive.size), history=8,
                      max_moves=max(longest + 1, 2 * int(archive.size) ** 2))
    go.check_encoding(cfg, args.encoding)
    settings = {"data": os.path.abspath(args.data), "encoding": args.encoding,
                "size": int(archive.size), "positions_per_game": args.positions_per_game,
                "val_from": args.val_from, "komi": list(komi), "seed": args.seed,
                "batch": args.batch,
                # null: every training game (the folders written before the setting say none)
                "max_games": args.max_games or None}
    game, move, held_out = choose_positions(archive, val_from=args.val_from, komi_range=komi,
                                            positions_per_game=args.positions_per_game,
                                            seed=args.seed, max_games=args.max_games)
    if len(game) - held_out < 1 or held_out < 1:
      raise ValueError(f"{len(game) - held_out} training and {held_out} held-out positions "
                       f"from {args.data}: check --val-from and --komi")
    done = value_data.start_or_resume(args.out, {**settings, "test_positions": held_out,
                                                 "planned_positions": len(game)}, _SETTINGS)
  except (ValueError, FileNotFoundError) as e:
    print(f"human_value: {e}", file=sys.stderr)
    return 2
  # The games the positions come from, on the device once; rows of this table.
  used, rows = np.unique(game, return_inverse=True)
  table = jax.tree.map(jnp.asarray, positions.make_table(archive, used))
  compute = planes_of(cfg, args.encoding)
  batches = -(-len(game) // args.batch)
  if done:
    print(f"{args.out}: {done} of {batches} batches already computed, going on", flush=True)
  started, timed = None, 0  # the rate from the end of the first batch, which compiles
  for index in range(done, batches):
    part = slice(index * args.batch, (index + 1) * args.batch)
    row, number = rows[part], move[part]
    short = args.batch - len(row)  # the last batch padded: one compiled shape
    planes, z = jax.device_get(compute(table, jnp.asarray(np.pad(row, (0, short)), jnp.int32),
                                       jnp.asarray(np.pad(number, (0, short)), jnp.int32)))
    keep = len(row)
    value_data.write_batch(args.out, index, planes[:keep], z[:keep], number)
    line = (f"batch {index + 1}/{batches}: {min((index + 1) * args.batch, len(game)):,} of "
            f"{len(game):,} positions")
    if started is None:
      started, line = time.monotonic(), line + " (compiled)"
    else:
      timed += args.batch
      rate = timed / (time.monotonic() - started)
      line += (f", {rate:,.0f} positions/s, "
               f"ETA {format_eta((batches - index - 1) * args.batch / rate)}")
    print(line, flush=True)
  info, _, z, _ = value_data.read(args.out)
  print(f"{info['positions']:,} positions in {args.out} ({held_out:,} held out, last; "
        f"mean z {z.mean():+.3f})")
  return 0


if __name__ == "__main__":
  sys.exit(main())
