"""Training positions per second: the dual network (task sl_dual) beside the SL policy.

Both supervised tasks' jitted steps (sample and replay games, planes, forward,
backward, update) on the same imported games, at their configs' sizes
(`configs/sl_dual_19x19.py`: 6 x 64 resnet, 64 games x 1 position a step;
`configs/sl_policy_cpu.py` on the 17 planes: 6 x 48 policy CNN, 16 games x 8
positions), each on one CPU device and split over two (`mesh.cpu_devices`),
the settings alternating round after round after a compile call each.

  python bench/human_dual_speed.py --data data/human
  python bench/human_dual_speed.py --data data/human --rounds 2 --steps 5   # a quick check
"""

import argparse
import os
import sys

import jax

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from configs import sl_dual_19x19, sl_policy_cpu  # noqa: E402  pylint: disable=wrong-import-position
import timing  # noqa: E402  pylint: disable=wrong-import-position


def _task(name: str, devices: int, data_dir: str):
  from agz_jax import training  # pylint: disable=import-outside-toplevel
  c = sl_dual_19x19.get_config() if name == "sl_dual" else sl_policy_cpu.get_config()
  if name == "sl_policy":
    c.model.encoding = "agz17"
  c.data.dir = data_dir
  c.mesh.cpu_devices = devices
  c.mesh.num_devices = devices
  c.eval.num_positions = 256
  if name == "sl_dual":
    c.eval.num_value_positions = c.eval.chunk = 256
  task = training.make_task(c)
  state = task.init(0)
  task.begin("", 0)
  return task, state


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--data", default="data/human", help="imported games (import_sgf --out)")
  parser.add_argument("--rounds", type=int, default=5, help="timed rounds; the median counts")
  parser.add_argument("--steps", type=int, default=20, help="steps per timed round")
  args = parser.parse_args()
  jax.config.update("jax_num_cpu_devices", 2)
  print(timing.environment())
  print(f"{args.data}; median of {args.rounds} rounds of {args.steps} steps", flush=True)
  settings = {(name, d): _task(name, d, args.data) for name in ("sl_dual", "sl_policy")
              for d in (1, 2)}

  def steps(key):
    def call(r):  # the untimed round 0 compiles: one step
      task, state = settings[key]
      for i in range(args.steps if r else 1):
        state, _ = task.step(state, i)
      settings[key] = (task, state)
      return state
    return call

  times = timing.paired({key: steps(key) for key in settings}, args.rounds)
  rate = {key: settings[key][0].items_per_unit * args.steps / t for key, t in times.items()}
  for (name, d), r in rate.items():
    task = settings[(name, d)][0]
    model = task.config.model
    size = (f"{model.blocks}x{model.channels} resnet" if name == "sl_dual"
            else f"{model.layers}x{model.filters} policy CNN")
    print(f"  {name:9s} {size:17s} {d} device(s): {r:8,.0f} positions/s "
          f"({task.items_per_unit} a step)")
  for name in ("sl_dual", "sl_policy"):
    print(f"  {name}: 2 devices / 1: {rate[(name, 2)] / rate[(name, 1)]:.2f}x")
  print(f"  sl_dual / sl_policy (2 devices): {rate[('sl_dual', 2)] / rate[('sl_policy', 2)]:.2f}x")


if __name__ == "__main__":
  main()
