"""Root visits of a search under a clock: one tree on one CPU device against one tree per
core, measured in the same run (each in its own process: a process's device count is fixed).

From the empty board, each search's move played before the next one, the player of
`--player` (default: the shipped AlphaGo bundle; a network searches with PUCT, the search
that runs under a clock) at the budgets of `--budgets`; prints each setting's time taken and
root visits per budget and the ratio of the two settings' root visits.

  python bench/search_speed.py                              # 1 against 2 devices
  python bench/search_speed.py --devices 1 2 --budgets 2 2 1 0.5
  python bench/search_speed.py --player pretrained/human-19x19
  python bench/search_speed.py --player pretrained/zero-9x9 --size 9
"""

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, sys, time
from agz_jax import parallel
parallel.use_cpu_devices(int(sys.argv[1]))
from agz_jax import go, players
spec, budgets = sys.argv[2], [float(b) for b in sys.argv[3].split(",")]
player = players.load_player(spec, simulations=1, algorithm="puct")
if not player.timed_search:
  sys.exit(f"{spec} does not search under a clock: give an AlphaGo player or a network with a "
           "value output")
cfg = go.GoConfig(size=int(sys.argv[4]), komi=7.5, **getattr(player, "planes", {}))
state = go.init(cfg)
t = time.perf_counter(); player.prepare(cfg); compiled = time.perf_counter() - t
rows = []
for budget in budgets:
  t = time.perf_counter(); out = player.analyse(cfg, state, seconds=budget)
  rows.append([budget, time.perf_counter() - t, sum(c["visits"] for c in out["candidates"])])
  state = go.play(cfg, [out["action"]], state)
print(json.dumps({"compiled": compiled, "rows": rows, "trees": player.trees}))
"""


def measure(devices: int, spec: str, budgets: list[float], size: int) -> dict:
  env = dict(os.environ)
  env.pop("XLA_FLAGS", None)  # the child sets its own device count
  proc = subprocess.run([sys.executable, "-c", CHILD, str(devices), spec,
                         ",".join(str(b) for b in budgets), str(size)], capture_output=True,
                        text=True,
                        env=env, check=False)
  if proc.returncode:
    sys.exit(f"search_speed: the {devices}-device run failed:\n{proc.stderr[-2000:]}")
  return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--player", default=None,
                      help="an AlphaGo bundle or spec, or a network with a value output "
                           "(default: pretrained/alphago-19x19)")
  parser.add_argument("--size", type=int, default=19, help="the board (default 19)")
  parser.add_argument("--devices", type=int, nargs=2, default=(1, 2), metavar=("A", "B"))
  parser.add_argument("--budgets", type=float, nargs="+", default=(2.0, 2.0, 2.0, 1.0, 0.5))
  args = parser.parse_args()
  spec = args.player
  if spec is None:
    from agz_jax import players  # pylint: disable=import-outside-toplevel
    spec = players.pretrained_path("alphago-19x19")
  a, b = (measure(n, spec, list(args.budgets), args.size) for n in args.devices)
  print(f"| budget | {args.devices[0]} device(s), {a['trees']} tree(s): took / root visits | "
        f"{args.devices[1]} device(s), {b['trees']} tree(s): took / root visits | ratio |")
  print("|---|---|---|---|")
  print(f"| compiling | {a['compiled']:.1f} s | {b['compiled']:.1f} s | |")
  for (budget, ta, va), (_, tb, vb) in zip(a["rows"], b["rows"]):
    print(f"| {budget:g} s | {ta:.2f} s / {va} | {tb:.2f} s / {vb} | {vb / max(va, 1):.2f}x |")
  total_a = sum(r[2] for r in a["rows"])
  total_b = sum(r[2] for r in b["rows"])
  print(f"root visits, all budgets: {total_b / max(total_a, 1):.2f}x with "
        f"{args.devices[1]} devices against {args.devices[0]}")


if __name__ == "__main__":
  main()
