"""The command line of the GTP engine (python -m agz_jax.gtp)."""

import argparse
import sys

from agz_jax.gtp.engine import Engine
from agz_jax.gtp.protocol import serve
from agz_jax import parallel, paths, players, search
from agz_jax.players import load_player


def main(argv=None):
  parser = argparse.ArgumentParser(description="agz_jax as a GTP engine.")
  who = parser.add_mutually_exclusive_group(required=True)
  who.add_argument("--checkpoint", help="training workdir or checkpoint directory (local or gs://)")
  who.add_argument("--random", action="store_true", help="a random player instead of a network")
  who.add_argument("--player", help="any player: a checkpoint, 'random', an AlphaGo bundle folder "
                                    "or alphago:prior=DIR,rollout=DIR,value=DIR,lambda=0.5")
  who.add_argument("--pretrained", help="a network shipped in the repository's pretrained/ folder "
                                        "(e.g. alphago-19x19)")
  parser.add_argument("--simulations", type=int, default=None,
                      help=f"searches per move (default {players.SIMULATIONS}); a search of "
                           "several trees (PUCT and AlphaGo, one per device) runs them on each")
  parser.add_argument("--seconds-per-move", type=float, default=None)
  parser.add_argument("--policy-only", action="store_true", help="the network's move, no search")
  parser.add_argument("--resign-threshold", type=float, default=players.RESIGN_THRESHOLD,
                      help="win rate; 0 never resigns")
  parser.add_argument("--no-endgame-rules", action="store_true",
                      help="play without the engine's endgame rules (neutral points filled "
                           "before a pass, no own eye filled, resignation only where the count "
                           "agrees), as the engine did before them")
  parser.add_argument("--komi", type=float, default=players.KOMI)
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--algorithm", choices=("gumbel", "puct"), default=None,
                      help="search algorithm (default: the training run's)")
  parser.add_argument("--no-tree-reuse", action="store_true",
                      help="PUCT search: start every search afresh instead of from the subtree "
                           "of the position reached")
  parser.add_argument("--q-transform", choices=("siblings", "bounded"), default=None,
                      help="PUCT search: a child's Q stretched between its siblings' (siblings) "
                           "or on the values' own scale, so that the prior weighs more where the "
                           "value is unsure (bounded); default: the network's")
  parser.add_argument("--first-play", choices=search.FIRST_PLAY, default=None,
                      help="PUCT search: what an unvisited move counts as: a loss, its parent's "
                           "value, or the parent's value less a reduction that grows with the "
                           "prior of the moves already visited; default: the network's")
  parser.add_argument("--fpu-reduction", type=float, default=None,
                      help="PUCT search with --first-play reduction: the reduction's scale")
  parser.add_argument("--c-puct", type=float, default=None,
                      help="PUCT and AlphaGo search: the exploration constant (pb_c_init, or "
                           "an AlphaGo bundle's c_puct); default: the network's or the bundle's")
  parser.add_argument("--prior-temperature", type=float, default=None,
                      help="PUCT search: the prior is softmax(logits / T): above 1 the search "
                           "looks wider than the policy, below 1 narrower; default: the "
                           "network's (1)")
  parser.add_argument("--value-scale", type=_scales, default=None, metavar="A,B,...",
                      help="PUCT search: the value head's value times A in the game's first "
                           "--value-scale-moves moves, B in the next, ... (the last after its "
                           "range): a calibration fitted by bench/value_accuracy.py; 'none' "
                           "unscaled; default: the network's")
  parser.add_argument("--value-scale-moves", type=int, default=None,
                      help="PUCT search: the moves each --value-scale entry covers (default: "
                           "the network's, 50)")
  parser.add_argument("--leaves", type=int, default=None,
                      help="PUCT and AlphaGo search: leaves of each tree evaluated together, "
                           "chosen under a virtual loss (default 1, or an AlphaGo bundle's; on "
                           "a GPU or TPU 8-16 keeps the device busy)")
  parser.add_argument("--rollout", default=None, metavar="DIR",
                      help="PUCT search of a Go network: value its leaves by rollouts of this "
                           "fast rollout policy too, as AlphaGo's search does (e.g. "
                           "pretrained/alphago-19x19/rollout_policy)")
  parser.add_argument("--lambda", dest="mixing", type=float, default=None,
                      help="with --rollout: the rollouts' weight in a leaf's value, the value "
                           "head's 1 - lambda (default 1: rollouts alone)")
  parser.add_argument("--lambda-from-move", type=int, default=None,
                      help="with --rollout: rollouts value the leaves from this move of the game "
                           "on, the value head alone before it (default 0: every leaf)")
  parser.add_argument("--rollouts-per-leaf", type=int, default=None,
                      help="with --rollout: rollouts from each leaf, averaged (default 1)")
  parser.add_argument("--stop-when-decided", action="store_true",
                      help="PUCT and AlphaGo search with --seconds-per-move: end a move's search "
                           "once its most visited move leads the next by more visits than the "
                           "time left could add (the same move, sooner)")
  parser.add_argument("--considered-actions", type=int, default=players.CONSIDERED_ACTIONS,
                      help="Gumbel search: actions kept at the root by sequential halving")
  parser.add_argument("--sample-moves", type=int, default=0,
                      help="without search: draw the first N moves of a game from the policy")
  parser.add_argument("--quiet", action="store_true",
                      help="no line on stderr about each move's search")
  parallel.add_engine_flags(parser)
  args = parser.parse_args(argv)
  try:
    parallel.use_engine_flags(args)
    spec = ("random" if args.random else args.player or args.checkpoint
            or players.pretrained_path(args.pretrained))
    player = load_player(spec,
                         simulations=(players.SIMULATIONS if args.simulations is None
                                      else args.simulations),
                         algorithm=args.algorithm, seed=args.seed, sample_moves=args.sample_moves,
                         reuse_tree=not args.no_tree_reuse, policy_only=args.policy_only,
                         considered_actions=args.considered_actions,
                         q_transform=args.q_transform,
                         search_settings=_search_settings(args), leaves=args.leaves,
                         rollouts=_rollouts(args),
                         stop_when_decided=args.stop_when_decided)
  except (FileNotFoundError, ValueError, paths.UnsupportedPath) as e:
    sys.exit(f"gtp: {e}")
  sims = 0 if args.policy_only else args.simulations
  engine = Engine(player, komi=args.komi, simulations=sims, seconds_per_move=args.seconds_per_move,
                  resign_threshold=args.resign_threshold, endgame=not args.no_endgame_rules,
                  log=None if args.quiet else lambda line: print(line, file=sys.stderr, flush=True))
  serve(engine)


def _rollouts(args) -> players.Rollouts | None:
  """The leaves' rollouts the command line asks for (--rollout and its settings)."""
  given = {"mixing": args.mixing, "from_move": args.lambda_from_move,
           "per_leaf": args.rollouts_per_leaf}
  given = {k: v for k, v in given.items() if v is not None}
  if args.rollout is None:
    if given:
      raise ValueError("--lambda, --lambda-from-move and --rollouts-per-leaf set the rollouts of "
                       "--rollout DIR: add it (a fast rollout policy)")
    return None
  return players.Rollouts(args.rollout, **given)


def _scales(text: str) -> tuple[float, ...]:
  """--value-scale's comma-separated numbers ('none': ())."""
  if text.strip().lower() == "none":
    return ()
  try:
    return tuple(float(part) for part in text.split(","))
  except ValueError:
    raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers "
                                     "(e.g. 1,1,1,0.8,0.5)") from None


def _search_settings(args) -> dict:
  """The search settings the command line gives (SearchConfig fields)."""
  given = {"first_play": args.first_play, "fpu_reduction": args.fpu_reduction,
           "pb_c_init": args.c_puct, "prior_temperature": args.prior_temperature,
           "value_scale": args.value_scale, "value_scale_moves": args.value_scale_moves}
  return {k: v for k, v in given.items() if v is not None}
