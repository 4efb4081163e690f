"""The command line of the match runner (python -m agz_jax.match)."""

import argparse
import sys

import jax

from agz_jax import go
from agz_jax.match.referee import load_openings, random_openings
from agz_jax.match.report import player_names, summary
from agz_jax.match.runner import run_match, sprt_llr
from agz_jax.match.sprt import Sprt


def main(argv=None):
  parser = argparse.ArgumentParser(
      description="Play a match between two GTP engines, scored by our rules.")
  parser.add_argument("--black", required=True, help="engine A's command (black in even games)")
  parser.add_argument("--white", required=True, help="engine B's command (black in odd games)")
  parser.add_argument("--games", type=int, required=True)
  parser.add_argument("--size", type=int, required=True)
  parser.add_argument("--komi", type=float, required=True)
  parser.add_argument("--out", required=True, help="output directory")
  parser.add_argument("--parallel", type=int, default=None,
                      help="games at once (default: CPU cores)")
  parser.add_argument("--max-moves", type=int, default=None, help="default 2 * size * size")
  parser.add_argument("--names", nargs=2, metavar=("A", "B"), default=None)
  parser.add_argument("--timeout", type=float, default=60.0, help="seconds per GTP command")
  parser.add_argument("--startup-timeout", type=float, default=300.0,
                      help="seconds for each engine's first command of each kind (JAX compiles)")
  parser.add_argument("--seed", type=int, default=0, help="first value of {seed} in the commands")
  parser.add_argument("--sprt", nargs=2, type=float, metavar=("ELO0", "ELO1"), default=None,
                      help="stop when a sequential probability ratio test decides between H0 "
                           "(A is ELO0 stronger than B) and H1 (ELO1); --games is then the most")
  parser.add_argument("--alpha", type=float, default=0.05,
                      help="SPRT: the chance of accepting H1 when H0 holds")
  parser.add_argument("--beta", type=float, default=0.05,
                      help="SPRT: the chance of accepting H0 when H1 holds")
  parser.add_argument("--openings", default=None,
                      help="an SGF file or folder: each pair of games (colours swapped) starts "
                           "from the first --opening-moves moves of one of its games")
  parser.add_argument("--opening-moves", type=int, default=8)
  parser.add_argument("--random-openings", type=int, default=None, metavar="MOVES",
                      help="instead of --openings: each pair of games (colours swapped) starts "
                           "from MOVES moves drawn at random, by --opening-seed, on the third "
                           "line and in (boards with no human games to open from; engines that "
                           "search alike would otherwise play the same games again)")
  parser.add_argument("--opening-seed", type=int, default=None,
                      help="with --random-openings: the seed that draws the openings (default: "
                           "--seed); the rest of a split match keeps its first part's")
  parser.add_argument("--sprt-pairs", action="store_true",
                      help="with --openings: the SPRT counts whole pairs of games (the "
                           "pentanomial model) instead of games")
  parser.add_argument("--first-game", type=int, default=0,
                      help="play only games N to --games - 1, with those games' colours and "
                           "openings: the rest of a match whose first games were played "
                           "elsewhere (give it its own --out and --seed, and with "
                           "--random-openings the first part's --opening-seed)")
  args = parser.parse_args(argv)
  # The referee's rule checks are tiny: keep them off any accelerator the engines may use.
  jax.config.update("jax_platforms", "cpu")
  commands = [args.black, args.white]
  try:
    names = player_names(commands, args.names)
    test = None if args.sprt is None else Sprt(*args.sprt, alpha=args.alpha, beta=args.beta)
    openings = None
    if args.openings is not None and args.random_openings is not None:
      raise ValueError("give --openings or --random-openings, not both")
    cfg = go.GoConfig(size=args.size, komi=args.komi, max_moves=args.max_moves)
    if args.opening_seed is not None and args.random_openings is None:
      raise ValueError("--opening-seed draws --random-openings: give both or neither")
    if args.random_openings is not None:
      opening_seed = args.seed if args.opening_seed is None else args.opening_seed
      openings = random_openings(cfg, (args.games + 1) // 2, args.random_openings, opening_seed)
      print(f"{len(openings)} openings of {args.random_openings} random moves (seed "
            f"{opening_seed})", flush=True)
    if args.openings is not None:
      # A pair of games per opening: the match's games use the first (games + 1) // 2.
      openings = load_openings(args.openings, cfg, args.opening_moves,
                               limit=(args.games + 1) // 2)
      print(f"{len(openings)} openings of {args.opening_moves} moves from {args.openings}",
            flush=True)
    results = run_match(commands, names, games=args.games, size=args.size, komi=args.komi,
                        out=args.out, parallel=args.parallel, max_moves=args.max_moves,
                        timeout=args.timeout, startup_timeout=args.startup_timeout, seed=args.seed,
                        sprt=test, openings=openings, sprt_pairs=args.sprt_pairs,
                        first_game=args.first_game, log=lambda line: print(line, flush=True))
  except (ValueError, RuntimeError) as e:
    sys.exit(f"match: {e}")
  except KeyboardInterrupt:
    sys.exit(f"match: interrupted; finished games are in {args.out} (the same command goes on)")
  print(summary(names, results))
  if test is not None:
    print(test.report(*sprt_llr(test, results, names[0], paired=args.sprt_pairs)))

