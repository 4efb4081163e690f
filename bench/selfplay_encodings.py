"""Where a self-play step's time goes on each input encoding, measured in the same run.

A run's recipe (its config file: network, search, self-play settings) played with one
encoding, then another, and nothing else changed: each encoding's self-play loop
(agz_jax.selfplay.selfplay, `--steps` steps of `--batch` games, one jitted lax.scan per
timed call), and apart from it the two parts every simulation pays for: the input planes alone
(game.features) and the network's forward pass alone on those planes, each timed on one
batch of positions and counted once per evaluation a step makes. The encodings
alternate, round after round (bench/timing.py). Printed: positions/s of self-play for
each, the planes' and the network's seconds per step and their share of the step, and the
ratio of each encoding's self-play speed to the first's.

  python bench/selfplay_encodings.py                        # zero_9x9_cpu, agz17 against
                                                            # katago_noladders
  python bench/selfplay_encodings.py --encodings agz17 katago_noladders katago
  python bench/selfplay_encodings.py --config configs/cpu_9x9.py --batch 16 --steps 2

The game and the network are the config's; the batch is one device's share of the run's
games by default (`selfplay.num_games` over `mesh.cpu_devices`), since every device plays
its share alone.
"""

import argparse
import sys

import jax
import jax.numpy as jnp
import numpy as np

import timing
from agz_jax import config_files, game as game_lib, nets, search
from agz_jax.selfplay import SelfPlayConfig, new_games, selfplay


def encoding_calls(config, encoding: str, batch: int, steps: int, seed: int = 0) -> dict:
  """{'selfplay', 'planes', 'network'}: calls(round) of one encoding (the planes and the network
  on one batch of positions), and 'calls', how many such evaluations a step makes."""
  config = config.copy_and_resolve_references()
  config.model.encoding = encoding
  game = game_lib.make(config.game)
  model = nets.make(config.model)
  planes_shape = game.planes_shape(encoding)
  variables = model.init(jax.random.PRNGKey(seed), jnp.zeros((1,) + planes_shape), train=False)
  settings = SelfPlayConfig.from_config(config)
  evaluator = search.flax_network(game, model, encoding)
  play = jax.jit(lambda v, g, k: selfplay(game, evaluator, v, g, k, steps, settings))
  games = new_games(game, jax.random.PRNGKey(seed), batch,
                    no_resign_fraction=config.selfplay.no_resign_fraction)
  # Positions from games under way: the first call's games, a few moves in.
  games, _ = play(variables, games, jax.random.PRNGKey(seed + 1))
  # A step evaluates the batch's positions once per simulation and once at the roots, a batch
  # at a time: the parts are timed on one such call and counted (simulations + 1) times.
  calls = settings.search.num_simulations + 1
  states = games.states
  features = jax.jit(lambda s: game.features(s, encoding))
  planes = features(states)
  forward = jax.jit(lambda v, x: model.apply(v, x, train=False))
  keys = lambda r: jax.random.fold_in(jax.random.PRNGKey(seed + 2), r)
  return {"selfplay": lambda r: play(variables, games, keys(r)),
          "planes": lambda r: features(states),
          "network": lambda r: forward(variables, planes),
          "calls": calls, "planes_shape": planes_shape}


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--config", default="configs/zero_9x9_cpu.py", help="the run's config file")
  parser.add_argument("--encodings", nargs="+", default=["agz17", "katago_noladders"],
                      help="input encodings, the first the others' peer")
  parser.add_argument("--batch", type=int, default=None,
                      help="games played at once (default: one device's share of the run's)")
  parser.add_argument("--steps", type=int, default=4, help="self-play steps per timed call")
  parser.add_argument("--repeats", type=int, default=5, help="timed rounds")
  args = parser.parse_args(argv)
  try:
    config = config_files.load(args.config).get_config()
    game = game_lib.make(config.game)
    for encoding in args.encodings:
      game.planes_shape(encoding)  # an encoding the game cannot take is refused here
  except (ValueError, FileNotFoundError) as e:
    print(f"selfplay_encodings: {e}", file=sys.stderr)
    return 2
  devices = max(int(config.mesh.get("cpu_devices", 1)), 1)
  batch = args.batch or max(config.selfplay.num_games // devices, 1)
  print(timing.environment())
  print(f"{args.config}: {config.game.size}x{config.game.size}, {config.model.blocks} x "
        f"{config.model.channels} {config.model.kind}, {config.search.algorithm} at "
        f"{config.search.num_simulations} simulations, {batch} games, {args.steps} steps a call")
  built = {e: encoding_calls(config, e, batch, args.steps) for e in args.encodings}
  calls = {f"{e} {part}": c[part] for e, c in built.items()
           for part in ("selfplay", "planes", "network")}
  times = timing.paired(calls, args.repeats)
  first = args.encodings[0]
  first_rate = batch * args.steps / times[f"{first} selfplay"]
  print(f"| encoding | planes | self-play positions/s | planes s/step | network s/step | "
        f"planes share | network share | speed against {first} |")
  print("|---|---|---|---|---|---|---|---|")
  for e, c in built.items():
    step = times[f"{e} selfplay"] / args.steps
    rate = batch / step
    planes, network = times[f"{e} planes"] * c["calls"], times[f"{e} network"] * c["calls"]
    print(f"| {e} | {c['planes_shape'][-1]} | {rate:,.0f} | {planes:.3f} | {network:.3f} | "
          f"{planes / step:.0%} | {network / step:.0%} | {rate / first_rate:.2f}x |")
  print(f"(planes and network: one call on the {batch} games' positions, times the "
        f"{built[first]['calls']} evaluations a step makes; the search's own work is the rest)")
  return 0


if __name__ == "__main__":
  sys.exit(main())
