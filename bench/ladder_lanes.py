"""AlphaGo's planes against the number of ladder-reading lanes, at several batch sizes.

The ladder reader (`agz_jax.alphago.ladders.read`) reads a batch's ladders on a
fixed number of lanes; `alphago.LadderSettings.lanes` sets it as a fraction of the
batch. This times `go.features(..., "alphago48")` on the same human positions
for several absolute lane counts and narrowing factors, every setting against
the current default in the same run (rounds interleaved, median of the rounds),
and checks that every setting gives the same planes.

  python bench/ladder_lanes.py                       # batches 32 and 256, 19x19
  python bench/ladder_lanes.py --batches 16,64 --lanes 4,8,16,32 --shrink 1,4
"""

import argparse
import dataclasses
import functools
import os
import sys

import jax
import numpy as np

from agz_jax import alphago, go

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import features_speed  # noqa: E402  pylint: disable=wrong-import-position
import timing  # noqa: E402  pylint: disable=wrong-import-position

def planes_fn(cfg: go.GoConfig, batch: int, lanes: int | None, shrink: int | None):
  """A jitted alphago48 of `batch` positions read on the device on `lanes` lanes (None: this
  backend's settings)."""
  ladder = alphago.ladder_settings()
  if lanes is not None:
    ladder = dataclasses.replace(ladder, reader="device", lanes=lanes / batch, shrink=shrink)
  fn = jax.jit(functools.partial(go.features, cfg, encoding="alphago48", ladder=ladder))
  states = features_speed.human_positions(cfg, ARGS.data, batch, ARGS.seed)
  return fn, states, np.asarray(fn(states))


def main():
  cfg = go.GoConfig(size=ARGS.size, max_moves=2 * ARGS.size * ARGS.size)
  print(timing.environment())
  print(f"{ARGS.size}x{ARGS.size}, human positions of {ARGS.data}, median of {ARGS.rounds} rounds")
  for batch in ARGS.batches:
    settings = [(None, None)] + [(lanes, shrink) for lanes in ARGS.lanes for shrink in ARGS.shrink]
    fns = {s: planes_fn(cfg, batch, *s) for s in settings}
    default_out = fns[(None, None)][2]
    times = timing.paired({s: lambda _, fn=fn, states=states: fn(states)
                           for s, (fn, states, _) in fns.items()}, ARGS.rounds)
    base = times[(None, None)]
    default = alphago.ladder_settings()
    print(f"batch {batch}: default {default.lanes_for(batch)} lanes, narrowing "
          f"{default.shrink}: "
          f"{batch / base:,.0f} positions/s")
    for s in settings[1:]:
      t = times[s]
      same = "same planes" if np.array_equal(fns[s][2], default_out) else "PLANES DIFFER"
      print(f"  {s[0]:4d} lanes, narrowing {s[1]}: {batch / t:9,.0f} positions/s  "
            f"{base / t:5.2f}x the default  ({same})", flush=True)


if __name__ == "__main__":
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--size", type=int, default=19)
  parser.add_argument("--batches", type=lambda s: [int(x) for x in s.split(",")],
                      default=[32, 256])
  parser.add_argument("--lanes", type=lambda s: [int(x) for x in s.split(",")],
                      default=[8, 16, 32, 64])
  parser.add_argument("--shrink", type=lambda s: [int(x) for x in s.split(",")], default=[4])
  parser.add_argument("--rounds", type=int, default=5)
  parser.add_argument("--data", default="data/kgs", help="an imported games folder")
  parser.add_argument("--seed", type=int, default=0)
  ARGS = parser.parse_args()
  main()
