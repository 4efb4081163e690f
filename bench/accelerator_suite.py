"""Every accelerator figure of BENCHMARKS.md in one command, within a total time budget.

Five parts, each in a process of its own with a share of the budget (a part
that finishes early leaves its time to the next; one that runs past its share
is stopped, and what it measured until then is kept):

  env       steps/s of agz_jax.go against pgx's Go at large batches, 9x9 and 19x19
            (bench/env_speed.py)
  selfplay  self-play positions/s against pgx + mctx at configs/gpu_9x9.py's sizes,
            and the share of the device's bf16 peak the network reaches during
            self-play: FLOPs per evaluation counted from the layer shapes (XLA's
            cost analysis beside them), evaluations per second measured
            (bench/selfplay_speed.py)
  sl        the SL policy network at full size (configs/sl_policy_19x19.py, 13 x 192,
            bf16) trained from the imported human games (--data) for the part's
            time, and its held-out top-1 and top-5
  agz       a configs/gpu_9x9.py training run for the part's time, then its final
            network against a random player and against its iteration-0 network
            (on-device matches, both colours, the run's evaluation settings); the
            final network is kept in OUT/ship/agz-9x9 (and .tar.gz), to be measured
            against pretrained/zero-9x9 on the machine it goes home to
  alphago   AlphaGo's 48 planes against the 17 at large batches on 19x19 (human
            positions where --data is an import), with the ladder reader's lanes
            swept, and rollouts of the shipped rollout policy against random
            playouts (bench/features_speed.py, bench/rollout_speed.py)

Prerequisites are checked first (an accelerator visible, pgx installed, the
games present); what is missing skips what needs it, with the reason. Results
go to OUT/accelerator_suite.json and OUT/accelerator_suite.md (a table for
BENCHMARKS.md), rewritten after every part. `--smoke` runs every part at tiny
sizes on the CPU, with a few random games written as SGF when there is no
--data, so that the script is known to work before an accelerator is at hand.

  pip install -e '.[bench]'
  python -m agz_jax.data.import_sgf PATH/TO/KGS-ARCHIVES --out data/kgs
  python bench/accelerator_suite.py --out workdir/accelerator        # 12 minutes
  python bench/accelerator_suite.py --parts sl --budget 600 --data data/kgs
  python bench/accelerator_suite.py --smoke --out workdir/suite_smoke  # minutes on a CPU
"""

import argparse
import datetime
import importlib
import json
import os
import platform
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # suite/ and the other benchmarks
# pylint: disable-next=wrong-import-position
from suite.common import REPO, SIZES, Record, child_environment, data_kind  # noqa: E402

PARTS = ("env", "selfplay", "sl", "agz", "alphago")
# Shares of the budget (the default budget in seconds): training gets the most.
WEIGHTS = {"env": 90, "selfplay": 100, "sl": 200, "agz": 230, "alphago": 100}
BUDGET_S, SMOKE_BUDGET_S = 720.0, 1800.0
PROBE_SECONDS = 60
RESULTS, TABLE = "accelerator_suite.json", "accelerator_suite.md"


# -- the parent: prerequisites, budget, one process per part, the results -----------------------

def _child(part: str, args, budget_s: float) -> list[str]:
  cmd = [sys.executable, os.path.abspath(__file__), "--part", part, "--out", args.out,
         "--part-budget", f"{budget_s:.1f}"]
  if args.smoke:
    cmd.append("--smoke")
  if args.data:
    cmd += ["--data", args.data]
  return cmd


def _run_child(part: str, args, budget_s: float) -> dict:
  """Runs one part in its own process; its record, or the reason it has none."""
  path = os.path.join(args.out, "parts", f"{part}.json")
  if os.path.exists(path):
    os.remove(path)
  start = time.perf_counter()
  proc = subprocess.Popen(_child(part, args, budget_s), cwd=REPO, env=child_environment(args.smoke))
  # A grace beyond the share: the part's own limits stop it in time; this only catches a hang.
  try:
    code = proc.wait(timeout=budget_s + 20)
    failure = None if code == 0 else f"exited with status {code}"
  except subprocess.TimeoutExpired:
    proc.kill()
    proc.wait()
    failure = f"stopped: still running {budget_s + 20:.0f} s after it started (its share)"
  record = {}
  if os.path.exists(path):
    with open(path, encoding="utf-8") as f:
      record = json.load(f)
  record["seconds"] = round(time.perf_counter() - start, 1)
  if failure and record.get("status") != "failed":
    record.update(status="failed", error=failure + (
        "; the figures are those measured until then" if record.get("figures") else ""))
  elif not record.get("status"):
    record.update(status="failed", error="wrote no record")
  return record


def _write(out: str, results: dict) -> None:
  with open(os.path.join(out, RESULTS + ".tmp"), "w", encoding="utf-8") as f:
    json.dump(results, f, indent=1)
  os.replace(os.path.join(out, RESULTS + ".tmp"), os.path.join(out, RESULTS))
  with open(os.path.join(out, TABLE), "w", encoding="utf-8") as f:
    f.write(markdown(results))


def markdown(results: dict) -> str:
  """The results as a markdown table: one row per figure, or the part's skip or failure."""
  s = results["suite"]
  lines = [f"Measured {s['started'][:10]} by `bench/accelerator_suite.py"
           + (" --smoke" if s["smoke"] else "") + f"` on {s.get('device', 'unknown device')} "
           f"(jax {s.get('jax', '?')}, pgx {s.get('pgx') or 'not installed'}), "
           f"budget {s['budget_s']:.0f} s, {s.get('seconds', 0):.0f} s in all.", "",
           "| part | measurement | result |", "|---|---|---|"]
  for part in PARTS:
    record = results["parts"].get(part)
    if record is None:
      continue
    if record["status"] == "skipped":
      lines.append(f"| {part} | skipped | {record['reason']} |")
      continue
    for name, value in record.get("table", []):
      lines.append(f"| {part} | {name} | {value} |")
    for reason in record.get("skipped", []):
      lines.append(f"| {part} | not measured | {reason} |")
    if record["status"] == "failed":
      lines.append(f"| {part} | failed | {record['error']} |")
  return "\n".join(lines) + "\n"


def _prerequisites(args, probe: dict) -> dict:
  """{part: reason it cannot run} from what the probe and the file system show."""
  missing = {}
  if not args.smoke and probe.get("backend") not in ("gpu", "tpu"):
    reason = (f"no accelerator visible (jax backend {probe.get('backend')!r}); --smoke runs "
              f"every part at tiny sizes on the CPU" if probe.get("backend") else
              f"the device probe failed: {probe.get('error')}")
    missing.update({part: reason for part in PARTS})
  if "sl" not in missing and not (args.smoke and not args.data):
    if data_kind(args.data) is None:
      missing["sl"] = (f"no human games at {args.data!r} (neither an import with games.npz nor "
                       f"SGF files / tar archives): python -m agz_jax.data.import_sgf "
                       f"PATH/TO/KGS-ARCHIVES --out data/kgs, then --data data/kgs")
  return missing


def run_suite(args) -> int:
  os.makedirs(os.path.join(args.out, "parts"), exist_ok=True)
  start = time.perf_counter()
  parts = list(dict.fromkeys(args.parts))  # in the order given: a short budget keeps the first
  results = {"suite": {"started": datetime.datetime.now(datetime.timezone.utc).isoformat(
      timespec="seconds"), "smoke": args.smoke, "budget_s": args.budget, "parts": parts,
      "data": args.data, "cpu": platform.processor() or platform.machine(),
      "cores": os.cpu_count()}, "parts": {}}
  print(f"[suite] parts {', '.join(parts)}; budget {args.budget:.0f} s"
        + ("; --smoke: tiny sizes on the CPU" if args.smoke else ""), flush=True)
  probe = _run_child("probe", args, PROBE_SECONDS)
  results["suite"].update({k: probe.get("figures", {}).get(k) for k in
                           ("backend", "device", "device_count", "jax", "pgx")})
  if probe["status"] != "done":
    probe["backend"] = None
  else:
    probe["backend"] = probe["figures"]["backend"]
  missing = _prerequisites(args, probe)
  print(f"[suite] {results['suite']['device']}, backend {results['suite']['backend']}, "
        f"pgx {results['suite']['pgx'] or 'not installed'}", flush=True)
  for part, reason in missing.items():
    if part in parts:
      print(f"[suite] {part}: skipped: {reason}", flush=True)
  _write(args.out, results)
  for i, part in enumerate(parts):
    if part in missing:
      results["parts"][part] = {"status": "skipped", "reason": missing[part]}
      continue
    left = args.budget - (time.perf_counter() - start)
    waiting = [p for p in parts[i:] if p not in missing]
    share = left * WEIGHTS[part] / sum(WEIGHTS[p] for p in waiting)
    elapsed = time.perf_counter() - start
    if share < 10:
      results["parts"][part] = {"status": "skipped",
                                "reason": f"the budget was spent ({share:.0f} s left for it)"}
      continue
    print(f"[suite {elapsed / 60:4.1f} min] {part}: starting, {share:.0f} s", flush=True)
    record = _run_child(part, args, share)
    results["parts"][part] = record
    results["suite"]["seconds"] = round(time.perf_counter() - start, 1)
    _write(args.out, results)
    print(f"[suite {(time.perf_counter() - start) / 60:4.1f} min] {part}: {record['status']}"
          + (f" ({record.get('error')})" if record["status"] == "failed" else ""), flush=True)
    for name, value in record.get("table", []):
      print(f"    {name}: {value}", flush=True)
  results["suite"]["seconds"] = round(time.perf_counter() - start, 1)
  _write(args.out, results)
  print(f"[suite] done in {results['suite']['seconds'] / 60:.1f} min: "
        f"{os.path.join(args.out, RESULTS)}, {os.path.join(args.out, TABLE)}", flush=True)
  return 1 if any(r["status"] == "failed" for r in results["parts"].values()) else 0


# -- a part, in its own process -------------------------------------------------

def run_part(args) -> int:
  deadline = time.perf_counter() + args.part_budget
  sizes = SIZES["smoke" if args.smoke else "full"].get(args.part, {})
  rec = Record(args.out, args.part, sizes)
  sys.path.insert(0, REPO)  # configs/
  try:
    importlib.import_module(f"suite.{args.part}").run(rec, sizes, deadline, args)
  except Exception as e:  # pylint: disable=broad-except
    import traceback  # pylint: disable=import-outside-toplevel
    traceback.print_exc()
    rec.finish("failed", error=f"{type(e).__name__}: {e}".splitlines()[0][:300])
    return 0  # the failure is in the record; the suite goes on
  rec.finish("done")
  return 0


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--out", default="workdir/accelerator_suite",
                      help="folder of the JSON, the markdown table and the runs")
  parser.add_argument("--budget", type=float, default=None,
                      help="seconds for the whole suite (default 720, 12 minutes; under --smoke "
                           f"{SMOKE_BUDGET_S:.0f}: compiling on a shared CPU is slow, and the "
                           "smoke run checks that every part works, not how fast)")
  parser.add_argument("--parts", default=",".join(PARTS),
                      help=f"comma-separated parts to run, in that order, of {', '.join(PARTS)}")
  parser.add_argument("--data", default=None,
                      help="human games for the sl part: an import (games.npz) or SGF files / "
                           "tar archives (default: data/kgs; under --smoke, synthetic games)")
  parser.add_argument("--smoke", action="store_true",
                      help="every part at tiny sizes on the CPU (CI)")
  parser.add_argument("--part", choices=("probe",) + PARTS, help=argparse.SUPPRESS)
  parser.add_argument("--part-budget", type=float, help=argparse.SUPPRESS)
  args = parser.parse_args(argv)
  if args.data is None and not args.smoke:
    args.data = "data/kgs"
  if args.budget is None:
    args.budget = SMOKE_BUDGET_S if args.smoke else BUDGET_S
  args.out = os.path.abspath(args.out)
  if args.part:
    return run_part(args)
  args.parts = [p.strip() for p in args.parts.split(",") if p.strip()]
  unknown = sorted(set(args.parts) - set(PARTS))
  if unknown:
    parser.error(f"unknown part(s) {', '.join(unknown)}; the parts are {', '.join(PARTS)}")
  if args.data:
    args.data = os.path.abspath(args.data)
  return run_suite(args)


if __name__ == "__main__":
  sys.exit(main())
