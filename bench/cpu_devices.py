"""Our self-play on one CPU device against the same on two, measured in the same run.

XLA on a CPU runs each convolution on one core, so a single JAX device leaves
the other core idle during the network's evaluations; `mesh.cpu_devices = 2`
splits the CPU into two devices, each playing its shard of the games. This
runs `agz_jax.selfplay.selfplay` (as `bench/selfplay_speed.py` does) at
`configs/cpu_9x9.py`'s sizes in one process with the CPU split in two: once on
the first device alone, once sharded over both, the two alternating round
after round after a warm-up round.

  python bench/cpu_devices.py                       # 9x9, B 64, 16 simulations, 2x32, T 16
  python bench/cpu_devices.py --repeats 2 --steps 4 # a quick check
"""

import argparse

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import go, parallel
from agz_jax.nets import AlphaZeroNet
from selfplay_speed import _chained, ours_loop

import timing


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--size", type=int, default=9, help="board size")
  parser.add_argument("--batch", type=int, default=64, help="games played at once (B)")
  parser.add_argument("--simulations", type=int, default=16, help="simulations per search")
  parser.add_argument("--blocks", type=int, default=2, help="residual blocks")
  parser.add_argument("--channels", type=int, default=32, help="filters per convolution")
  parser.add_argument("--steps", type=int, default=16, help="self-play steps per timed call (T)")
  parser.add_argument("--repeats", type=int, default=5, help="timed rounds (each setting once per round)")
  args = parser.parse_args()
  jax.config.update("jax_num_cpu_devices", 2)
  print(timing.environment())
  if jax.default_backend() != "cpu" or jax.device_count() < 2:
    raise SystemExit("cpu_devices: needs a CPU backend split into 2 devices")

  cfg = go.GoConfig(size=args.size)
  net = AlphaZeroNet(blocks=args.blocks, channels=args.channels)
  apply_fn = lambda v, x: net.apply(v, x, train=False)
  planes = jnp.zeros((args.batch, cfg.size, cfg.size, 2 * cfg.history + 1))
  variables = net.init(jax.random.PRNGKey(0), planes, train=False)
  b, t = args.batch, args.steps
  print(f"{cfg.size}x{cfg.size}, batch {b}, {args.simulations} simulations (gumbel), network "
        f"{args.blocks}x{args.channels}, {t} steps per timed call, median of {args.repeats} rounds",
        flush=True)

  one = jax.devices()[0]
  run_one, games_one = ours_loop(cfg, apply_fn, b, t, "gumbel", args.simulations)
  games_one, variables_one = jax.device_put((games_one, variables), one)
  mesh = parallel.make_mesh(2)
  run_two, games_two = ours_loop(cfg, apply_fn, b, t, "gumbel", args.simulations, mesh)
  games_two = jax.device_put(games_two, parallel.split_leading(mesh))
  variables_two = jax.device_put(variables, parallel.replicated(mesh))
  calls = {"one": _chained(run_one, variables_one, games_one),
           "two": _chained(run_two, variables_two, games_two)}
  times = timing.rounds({name: lambda r, call=call: call(jax.random.PRNGKey(r))
                         for name, call in calls.items()}, args.repeats)
  rate = {name: b * t / float(np.median(seconds)) for name, seconds in times.items()}
  median = float(np.median(np.asarray(times["one"]) / np.asarray(times["two"])))
  print(f"  agz_jax self-play, 1 device (one core for the network)  {rate['one']:10,.1f} positions/s")
  print(f"  agz_jax self-play, 2 devices (one per core)            {rate['two']:10,.1f} positions/s")
  print(f"  ratio 2 devices / 1: {rate['two'] / rate['one']:.2f}x (median times), "
        f"{median:.2f}x (median of the {args.repeats} rounds' ratios)")


if __name__ == "__main__":
  main()
