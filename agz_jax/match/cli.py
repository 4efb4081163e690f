"""The command line of the match runner (python -m agz_jax.match)."""

import argparse
import sys

import jax

from agz_jax.match.report import player_names, summary
from agz_jax.match.runner import run_match


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
  args = parser.parse_args(argv)
  # The referee's rule checks are tiny: keep them off any accelerator the engines may use.
  jax.config.update("jax_platforms", "cpu")
  commands = [args.black, args.white]
  try:
    names = player_names(commands, args.names)
    results = run_match(commands, names, games=args.games, size=args.size, komi=args.komi,
                        out=args.out, parallel=args.parallel, max_moves=args.max_moves,
                        timeout=args.timeout, startup_timeout=args.startup_timeout, seed=args.seed,
                        log=lambda line: print(line, flush=True))
  except (ValueError, RuntimeError) as e:
    sys.exit(f"match: {e}")
  except KeyboardInterrupt:
    sys.exit(f"match: interrupted; finished games are in {args.out} (the same command goes on)")
  print(summary(names, results))

