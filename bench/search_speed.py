"""Root visits of a search under a clock: one tree on one CPU device against one tree per
core, or against one tree whose leaves are evaluated several at a time (search.leaf_batch),
measured in the same run (each setting in its own process: a process's device count is fixed).

From the empty board, each search's move played before the next one, the player of
`--player` (default: the shipped AlphaGo bundle; a network searches with PUCT, the search
that runs under a clock) at the budgets of `--budgets`; prints each setting's time taken and
root visits per budget and the ratio of its root visits to the first setting's.

A setting is DEVICESxLEAVES: 1x1 one tree, one leaf at a time (mctx's search); 2x1 a tree
on each of 2 CPU devices; 1x8 one tree, 8 leaves a step under a virtual loss.

  python bench/search_speed.py                              # 1x1 against 2x1
  python bench/search_speed.py --settings 1x1 2x1 1x4 1x8 --budgets 2 2 1 0.5
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
player = players.load_player(spec, simulations=1, algorithm="puct", leaves=int(sys.argv[5]))
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


def measure(setting: str, spec: str, budgets: list[float], size: int) -> dict:
  devices, leaves = _setting(setting)
  env = dict(os.environ)
  env.pop("XLA_FLAGS", None)  # the child sets its own device count
  proc = subprocess.run([sys.executable, "-c", CHILD, str(devices), spec,
                         ",".join(str(b) for b in budgets), str(size), str(leaves)],
                        capture_output=True, text=True, env=env, check=False)
  if proc.returncode:
    sys.exit(f"search_speed: the {setting} run failed:\n{proc.stderr[-2000:]}")
  return json.loads(proc.stdout.strip().splitlines()[-1])


def _setting(text: str) -> tuple[int, int]:
  devices, _, leaves = text.partition("x")
  try:
    out = int(devices), int(leaves or 1)
  except ValueError:
    out = (0, 0)
  if min(out) < 1:
    sys.exit(f"search_speed: setting {text!r} is not DEVICESxLEAVES with both at least 1 "
             f"(e.g. 1x1, 2x1, 1x8)")
  return out


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--player", default=None,
                      help="an AlphaGo bundle or spec, or a network with a value output "
                           "(default: pretrained/alphago-19x19)")
  parser.add_argument("--size", type=int, default=19, help="the board (default 19)")
  parser.add_argument("--settings", nargs="+", default=("1x1", "2x1"), metavar="DEVICESxLEAVES",
                      help="the first is the peer of the ratios (default: 1x1 2x1)")
  parser.add_argument("--budgets", type=float, nargs="+", default=(2.0, 2.0, 2.0, 1.0, 0.5))
  args = parser.parse_args()
  for setting in args.settings:
    _setting(setting)
  spec = args.player
  if spec is None:
    from agz_jax import players  # pylint: disable=import-outside-toplevel
    spec = players.pretrained_path("alphago-19x19")
  runs = []
  for setting in args.settings:
    runs.append(measure(setting, spec, list(args.budgets), args.size))
    print(f"{setting}: done", file=sys.stderr, flush=True)
  names = [f"{s} ({r['trees']} tree{'s' if r['trees'] > 1 else ''})"
           for s, r in zip(args.settings, runs)]
  print("| budget | " + " | ".join(f"{n}: took / root visits" for n in names) + " |")
  print("|---|" + "---|" * len(runs))
  print("| compiling | " + " | ".join(f"{r['compiled']:.1f} s" for r in runs) + " |")
  for i, budget in enumerate(args.budgets):
    peer = max(runs[0]["rows"][i][2], 1)
    print(f"| {budget:g} s | " + " | ".join(
        f"{r['rows'][i][1]:.2f} s / {r['rows'][i][2]}"
        + (f" ({r['rows'][i][2] / peer:.2f}x)" if k else "") for k, r in enumerate(runs)) + " |")
  total = [sum(row[2] for row in r["rows"]) for r in runs]
  print("root visits, all budgets, against " + args.settings[0] + ": " + ", ".join(
      f"{s} {t / max(total[0], 1):.2f}x" for s, t in zip(args.settings[1:], total[1:])))


if __name__ == "__main__":
  main()
