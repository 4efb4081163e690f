"""What `--stop-when-decided` saves: a timed search replays a game's positions of one colour,
each searched as the engine would (its budget, tree reuse), and the time each search took is
set against the budget.

A search stops early only once its most visited move can no longer be overtaken in the time
left (players.timed_search.decided), so the move is the one the whole budget would have
chosen at that point; what changes is the time, and the smaller tree the next move keeps.
Printed: the searches, the share that stopped early, the mean time against the budget, and
the same per 100 moves of the game.

  python bench/decided_stop.py GAME.sgf                      # human-19x19, 2 s, black's moves
  python bench/decided_stop.py GAME.sgf --colour white --moves 200 --seconds 1
"""

import argparse
import time

import numpy as np

from agz_jax import go, players, sgf


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("game", help="an SGF file of the board size the network plays")
  parser.add_argument("--player", default=None,
                      help="a network or AlphaGo bundle (default: pretrained/human-19x19)")
  parser.add_argument("--seconds", type=float, default=2.0, help="budget a move")
  parser.add_argument("--colour", choices=("black", "white"), default="black",
                      help="whose positions are searched (the engine's side)")
  parser.add_argument("--moves", type=int, default=None, help="the game's first N moves only")
  args = parser.parse_args()
  record = sgf.read(args.game)
  spec = args.player or players.pretrained_path("human-19x19")
  player = players.load_player(spec, stop_when_decided=True)
  cfg = record.config(**player.planes)
  colour = go.BLACK if args.colour == "black" else go.WHITE
  state = go.init(cfg, black=record.black_setup, white=record.white_setup)
  moves = record.moves[:args.moves] if args.moves else record.moves
  player.analyse(cfg, state, seconds=args.seconds)  # compiled before any search is timed
  took, numbers = [], []
  for number, (mover, action) in enumerate(moves):
    if int(state.to_play) == colour and not bool(state.terminated):
      began = time.perf_counter()
      player.analyse(cfg, state, seconds=args.seconds)
      took.append(time.perf_counter() - began)
      numbers.append(number)
      print(f"move {number + 1}: {took[-1]:.2f} s", flush=True)
    if mover != int(state.to_play):
      raise SystemExit(f"{args.game}: move {number + 1} is not the player to move's")
    state = go.play(cfg, [action], state)
  took, numbers = np.asarray(took), np.asarray(numbers)
  early = took < 0.95 * args.seconds
  print(f"\n{len(took)} searches of {args.seconds:g} s ({args.colour}'s positions of "
        f"{args.game}, {player.name}, stop when decided)")
  print("| moves | searches | stopped early | mean seconds | against the budget |")
  print("|---|---|---|---|---|")
  for low in range(0, int(numbers.max()) + 1, 100):
    part = (numbers >= low) & (numbers < low + 100)
    if part.any():
      print(f"| {low}-{low + 99} | {part.sum()} | {early[part].mean():.0%} | "
            f"{took[part].mean():.2f} | {took[part].mean() / args.seconds:.2f}x |")
  print(f"| all | {len(took)} | {early.mean():.0%} | {took.mean():.2f} | "
        f"{took.mean() / args.seconds:.2f}x |")


if __name__ == "__main__":
  main()
