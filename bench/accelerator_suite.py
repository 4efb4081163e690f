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
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARTS = ("env", "selfplay", "sl", "agz", "alphago")
# Shares of the budget (the default budget in seconds): training gets the most.
WEIGHTS = {"env": 90, "selfplay": 100, "sl": 200, "agz": 230, "alphago": 100}
BUDGET_S, SMOKE_BUDGET_S = 720.0, 1800.0
PROBE_SECONDS = 60
RESULTS, TABLE = "accelerator_suite.json", "accelerator_suite.md"

# What each part runs, at full size and under --smoke.
SIZES = {
    "full": {
        "env": {"runs": [(9, 16384), (19, 4096)], "steps": 100, "repeats": 3},
        "selfplay": {"batch": 1024, "simulations": 64, "blocks": 10, "channels": 128,
                     "dtype": "bfloat16", "steps": 8, "repeats": 3},
        "sl": {"steps": 10_000_000, "log_every": 50, "eval_every": 500, "reserve_s": 45},
        "agz": {"match_games": 256, "reserve_s": 130},  # two matches, each compiling
        # Ladder lanes per position of a batch: the CPU's 0.125, the accelerator default 2.0.
        "alphago": {"size": 19, "batches": [256, 4096], "lane_fractions": [0.125, 0.5, 2.0],
                    "random_moves": 180, "repeats": 3, "rollout_batch": 4096,
                    "rollout_policy": "pretrained/alphago-19x19/rollout_policy"},
    },
    # Compiling is most of a smoke run on a CPU: float32 (XLA's CPU bf16 convolutions compile
    # slowly), 17 planes for the SL network (the 48 with ladders are tested elsewhere), 5x5
    # games for the matches.
    "smoke": {
        "env": {"runs": [(9, 16), (19, 8)], "steps": 4, "repeats": 1},
        "selfplay": {"batch": 8, "simulations": 4, "blocks": 1, "channels": 8,
                     "dtype": "float32", "steps": 2, "repeats": 1},
        "sl": {"steps": 6, "log_every": 3, "eval_every": 3, "reserve_s": 20, "layers": 2,
               "filters": 8, "dtype": "float32", "encoding": "agz17", "games_per_batch": 2,
               "positions_per_game": 2, "eval_positions": 8, "size": 9, "synthetic_games": 12},
        "agz": {"match_games": 2, "reserve_s": 30, "iterations": 2, "size": 5},
        "alphago": {"size": 9, "batches": [4], "lane_fractions": [2.0], "random_moves": 30,
                    "repeats": 1, "rollout_batch": 4, "rollout_policy": None},
    },
}
SL_AIM_TOP1, SL_AIM_MINUTES = 0.50, 10
# XLA's while loops and conditionals recorded in CUDA graphs (conditional nodes), so that a
# loop's turn needs no round trip to the host for its condition: not XLA's default.
LOOP_GRAPHS = "--xla_gpu_enable_command_buffer=+WHILE,+CONDITIONAL"
PGX_MISSING = "pgx is not installed (pip install -e '.[bench]')"


# -- the parent: prerequisites, budget, one process per part, the results -----------------------

def _data_kind(path: str | None) -> str | None:
  """'archive' for an import (games.npz), 'sgf' for SGF files or tar archives, else None."""
  if not path or not os.path.exists(path):
    return None
  if os.path.isfile(os.path.join(path, "games.npz")):
    return "archive"
  if os.path.isfile(path):
    return "sgf" if path.endswith((".sgf", ".tar", ".tar.gz", ".tgz", ".tar.bz2")) else None
  for _, _, files in os.walk(path):
    if any(f.endswith((".sgf", ".tar", ".tar.gz", ".tgz", ".tar.bz2")) for f in files):
      return "sgf"
  return None


def _child(part: str, args, budget_s: float) -> list[str]:
  cmd = [sys.executable, os.path.abspath(__file__), "--part", part, "--out", args.out,
         "--part-budget", f"{budget_s:.1f}"]
  if args.smoke:
    cmd.append("--smoke")
  if args.data:
    cmd += ["--data", args.data]
  return cmd


def _environment(smoke: bool) -> dict:
  env = dict(os.environ)
  env["PYTHONPATH"] = os.pathsep.join(p for p in (REPO, env.get("PYTHONPATH")) if p)
  if smoke:
    env["JAX_PLATFORMS"] = "cpu"  # tiny sizes on the CPU even where an accelerator is visible
  return env


def _run_child(part: str, args, budget_s: float) -> dict:
  """Runs one part in its own process; its record, or the reason it has none."""
  path = os.path.join(args.out, "parts", f"{part}.json")
  if os.path.exists(path):
    os.remove(path)
  start = time.perf_counter()
  proc = subprocess.Popen(_child(part, args, budget_s), cwd=REPO, env=_environment(args.smoke))
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
    if _data_kind(args.data) is None:
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


# -- a part, in its own process -----------------------------------------------------------------

class Record:
  """One part's results, written to OUT/parts/PART.json whenever something is added."""

  def __init__(self, out: str, part: str, settings: dict):
    self.path = os.path.join(out, "parts", f"{part}.json")
    self.data = {"status": "running", "settings": settings, "figures": {}, "table": [],
                 "skipped": []}
    self.write()

  def add(self, figures: dict, rows=(), skipped=()) -> None:
    self.data["figures"].update({k: v.item() if hasattr(v, "item") else v  # numpy scalars
                                 for k, v in figures.items()})
    self.data["table"].extend([list(r) for r in rows])
    self.data["skipped"].extend(skipped)
    self.write()

  def finish(self, status: str, **extra) -> None:
    self.data.update(status=status, **extra)
    self.write()

  def write(self) -> None:
    with open(self.path + ".tmp", "w", encoding="utf-8") as f:
      json.dump(self.data, f, indent=1, default=str)
    os.replace(self.path + ".tmp", self.path)


def _pgx_version() -> str | None:
  if importlib.util.find_spec("pgx") is None:
    return None
  import pgx  # pylint: disable=import-outside-toplevel
  return pgx.__version__


def probe_part(rec: Record, sizes: dict, deadline: float, args) -> None:
  del sizes, deadline, args
  import jax  # pylint: disable=import-outside-toplevel
  device = jax.devices()[0]
  rec.add({"backend": jax.default_backend(), "device": device.device_kind,
           "device_count": jax.device_count(), "jax": jax.__version__, "pgx": _pgx_version()})


def env_part(rec: Record, sizes: dict, deadline: float, args) -> None:
  del deadline, args
  import env_speed  # pylint: disable=import-outside-toplevel
  peer = _pgx_version() is not None
  if not peer:
    rec.add({}, skipped=[f"the pgx comparison: {PGX_MISSING}"])
  for size, batch in sizes["runs"]:
    f = env_speed.measure(size, batch, sizes["steps"], sizes["repeats"], peer=peer)
    key = f"{size}x{size}_b{batch}"
    rows = [(f"{size}x{size}, batch {batch}: agz_jax steps/s (+ features)",
             f"{f['steps_per_s']:,.0f} ({f['steps_per_s_with_features']:,.0f})")]
    if peer:
      rows.append((f"{size}x{size}, batch {batch}: pgx steps/s, ratio (with features)",
                   f"{f['pgx_steps_per_s']:,.0f}, **{f['ratio']:.2f}x** "
                   f"({f['ratio_with_features']:.2f}x)"))
    rec.add({f"{key}_{k}": v for k, v in f.items()}, rows)


def selfplay_part(rec: Record, sizes: dict, deadline: float, args) -> None:
  del deadline, args
  import selfplay_speed  # pylint: disable=import-outside-toplevel
  peer = _pgx_version() is not None
  argv = [f"--{k}={v}" for k, v in sizes.items()] + ([] if peer else ["--no-pgx"])
  f = selfplay_speed.measure(selfplay_speed.arguments(argv))
  setting = (f"9x9, B {sizes['batch']}, {sizes['simulations']} sims, {sizes['blocks']}x"
             f"{sizes['channels']} {sizes['dtype']}")
  rows = [(f"{setting}: agz_jax positions/s", f"{f['positions_per_s']:,.1f} "
           f"({f['evaluations_per_position']:.2f} evaluations per position)")]
  skipped = [] if peer else [f"the pgx + mctx comparison: {PGX_MISSING}"]
  if peer:
    rows.append((f"{setting}: pgx + mctx positions/s, ratio (median of rounds)",
                 f"{f['pgx_positions_per_s']:,.1f}, **{f['ratio']:.2f}x** "
                 f"({f['ratio_median']:.2f}x)"))
  rows.append(("network FLOPs per evaluation (layer shapes; XLA cost analysis)",
               f"{f['network_flops_per_evaluation'] / 1e6:,.1f} M; "
               + (f"{f['xla_flops_per_evaluation'] / 1e6:,.1f} M"
                  + (f" ({selfplay_speed.UNCOUNTED})" if f["xla_flops_per_evaluation"]
                     < f["network_flops_per_evaluation"] / 2 else "")
                  if "xla_flops_per_evaluation" in f else "not given by XLA")))
  if "peak_share_not_reported" in f:
    skipped.append(f"the network's share of the bf16 peak: {f.pop('peak_share_not_reported')}")
  else:
    rows.append((f"network during self-play: TFLOP/s, share of the {f['peak_tflops']:g} "
                 f"TFLOP/s bf16 peak", f"{f['selfplay_tflops']:.1f}, "
                 f"**{f['selfplay_peak_share']:.1%}** (network alone "
                 f"{f['network_alone_peak_share']:.1%})"))
  rec.add(f, rows, skipped)


def _metrics(workdir: str) -> list[dict]:
  with open(os.path.join(workdir, "metrics.jsonl"), encoding="utf-8") as f:
    return [json.loads(line) for line in f]


def _steady_rate(rows: list[dict]) -> float:
  """Median positions/s of the reported steps after the first (compiling) one."""
  import numpy as np  # pylint: disable=import-outside-toplevel
  rates = [r["positions_per_s"] for r in rows[1:]] or [r["positions_per_s"] for r in rows]
  return float(np.median(rates))


def synthetic_sgf(folder: str, size: int, num_games: int, seed: int = 0) -> str:
  """Writes `num_games` random legal games as SGF files (2016 for training, 2017-06 for
  validation, one in four): human games stand-ins for --smoke. Returns the folder."""
  import jax  # pylint: disable=import-outside-toplevel
  import numpy as np  # pylint: disable=import-outside-toplevel
  from agz_jax import go, players, sgf  # pylint: disable=import-outside-toplevel
  cfg = go.GoConfig(size=size)
  moves = size * size // 2

  @jax.jit
  def play(key):
    def step(states, k):
      actions = jax.vmap(lambda s, kk: players.random_move(cfg, s, kk))(
          states, jax.random.split(k, num_games))
      return jax.vmap(lambda s, a: go.step(cfg, s, a))(states, actions), actions
    states = jax.vmap(lambda _: go.init(cfg))(jax.numpy.arange(num_games))
    return jax.lax.scan(step, states, jax.random.split(key, moves))[1]

  actions = np.asarray(play(jax.random.PRNGKey(seed))).T
  os.makedirs(folder, exist_ok=True)
  for i, game in enumerate(actions):
    record = sgf.GameRecord(size=size, komi=7.5, result="B+R" if i % 2 else "W+R",
                            date="2017-06-01" if i % 4 == 3 else "2016-01-01",
                            moves=[(go.BLACK if j % 2 == 0 else go.WHITE, int(a))
                                   for j, a in enumerate(game)])
    with open(os.path.join(folder, f"{i:04d}.sgf"), "wb") as f:
      f.write(sgf.write(record))
  return folder


def _games_folder(rec: Record, args, size: int, sizes: dict) -> str:
  """An imported games folder: --data itself, or the import of its SGF files (--smoke without
  --data: of synthetic games)."""
  from agz_jax import data  # pylint: disable=import-outside-toplevel
  source = args.data
  if source is None:
    source = synthetic_sgf(os.path.join(args.out, "smoke_sgf"), size, sizes["synthetic_games"])
    rec.add({}, [("games", f"{sizes['synthetic_games']} random legal games as SGF "
                  f"(--smoke without --data)")])
  if _data_kind(source) == "archive":
    return source
  start = time.perf_counter()
  archive, counts = data.import_games([source], size=size, progress=False)
  folder = os.path.join(args.out, "games")
  data.save(archive, folder)
  rec.add({"import_seconds": time.perf_counter() - start, "imported_games": counts["kept"]})
  print(f"  imported {counts['kept']:,} of {counts['games']:,} games in "
        f"{time.perf_counter() - start:.0f} s", flush=True)
  return folder


def sl_part(rec: Record, sizes: dict, deadline: float, args) -> None:
  from agz_jax import training  # pylint: disable=import-outside-toplevel
  from configs import sl_policy_19x19  # pylint: disable=import-outside-toplevel
  config = sl_policy_19x19.get_config()
  if "size" in sizes:
    config.game.size, config.game.max_moves = sizes["size"], 2 * sizes["size"] ** 2
  for key, name in (("layers", "model.layers"), ("filters", "model.filters"),
                    ("dtype", "model.dtype"), ("encoding", "model.encoding"),
                    ("games_per_batch", "data.games_per_batch"),
                    ("positions_per_game", "data.positions_per_game"),
                    ("eval_positions", "eval.num_positions")):
    if key in sizes:
      section, field = name.split(".")
      config[section][field] = sizes[key]
  config.data.dir = _games_folder(rec, args, config.game.size, sizes)
  config.steps, config.log_every, config.eval.every = (sizes["steps"], sizes["log_every"],
                                                       sizes["eval_every"])
  config.checkpoint.every = config.steps
  workdir = os.path.join(args.out, "sl_policy")
  limit = deadline - time.perf_counter() - sizes["reserve_s"]
  print(f"  training {config.model.layers} x {config.model.filters} {config.model.dtype} for "
        f"{limit:.0f} s", flush=True)
  start = time.perf_counter()
  state = training.train_and_evaluate(config, _fresh(workdir), time_limit_s=limit)
  seconds = time.perf_counter() - start
  rows = _metrics(workdir)
  final = [r for r in rows if "val_top1" in r][-1]
  steps = int(state.step)
  positions = steps * config.data.games_per_batch * config.data.positions_per_game
  f = {"steps": steps, "positions": positions, "train_seconds": seconds,
       "positions_per_s": _steady_rate(rows), "val_top1": final["val_top1"],
       "val_top5": final["val_top5"], "val_loss": final["val_loss"],
       "val_positions": config.eval.num_positions}
  aim = (f"aim {SL_AIM_TOP1:.0%} in {SL_AIM_MINUTES} min: "
         + ("met" if final["val_top1"] >= SL_AIM_TOP1 and seconds <= 60 * SL_AIM_MINUTES
            else "not met"))
  setting = (f"{config.model.layers} x {config.model.filters} {config.model.dtype}, "
             f"{config.model.encoding}")
  rec.add(f, [(f"{setting}: steps in {seconds / 60:.1f} min (compiling included), positions/s",
               f"{steps:,} ({positions:,} positions), {f['positions_per_s']:,.0f}"),
              (f"held-out top-1 / top-5 ({config.eval.num_positions:,} positions)",
               f"**{final['val_top1']:.1%}** / {final['val_top5']:.1%} ({aim})")])


def _fresh(workdir: str) -> str:
  """`workdir`, emptied: every run of the suite trains from scratch."""
  import shutil  # pylint: disable=import-outside-toplevel
  shutil.rmtree(workdir, ignore_errors=True)
  return workdir


def agz_part(rec: Record, sizes: dict, deadline: float, args) -> None:
  from agz_jax import checkpoint, training  # pylint: disable=import-outside-toplevel
  from configs import cpu_9x9, gpu_9x9  # pylint: disable=import-outside-toplevel
  if args.smoke:
    config = cpu_9x9.get_config()
    config.model.blocks, config.model.channels, config.model.value_hidden = 1, 8, 16
    config.search.num_simulations, config.search.max_num_considered_actions = 4, 4
    config.selfplay.num_games, config.selfplay.steps_per_iteration = 4, 4
    config.replay.min_ready, config.train.batch_size = 8, 8
    config.train.updates_per_iteration = 1
    config.eval.num_simulations, config.mesh.cpu_devices = 2, 1
    config.iterations, config.game.size = sizes["iterations"], sizes["size"]
    config.replay.rows_per_game = 2 * sizes["size"] ** 2 + config.selfplay.steps_per_iteration
  else:
    config = gpu_9x9.get_config()
  config.eval.every = 0  # the matches after the run measure it; none during it
  config.checkpoint.every = config.iterations  # the replay buffer makes saves slow
  workdir = os.path.join(args.out, "agz_9x9")
  limit = deadline - time.perf_counter() - sizes["reserve_s"]
  print(f"  training {config.model.blocks} x {config.model.channels} {config.model.dtype} for "
        f"{limit:.0f} s", flush=True)
  start = time.perf_counter()
  training.train_and_evaluate(config, _fresh(workdir), time_limit_s=limit)
  seconds = time.perf_counter() - start
  # The final network, to measure (and ship, if stronger) against pretrained/zero-9x9 at home.
  shipped = checkpoint.export_with_archive(workdir, _fresh(os.path.join(args.out, "ship")),
                                           "agz-9x9")
  print(f"  final network in {shipped} (and {shipped}.tar.gz)", flush=True)
  rows = _metrics(workdir)
  last = rows[-1]
  f = {"iterations": int(last["iteration"]), "train_seconds": seconds, "network": shipped,
       "positions_per_s": _steady_rate(rows),
       "positions": int(last["iteration"]) * config.selfplay.num_games
       * config.selfplay.steps_per_iteration}
  f.update({k: last[k] for k in ("loss_policy", "loss_value") if k in last})
  size = config.game.size
  rec.add(f, [(f"{size}x{size}, {config.model.blocks} x {config.model.channels} "
               f"{config.model.dtype}, "
               f"{config.selfplay.num_games} games x {config.search.num_simulations} sims: "
               f"iterations in {seconds / 60:.1f} min (compiling included), self-play "
               f"positions/s", f"{f['iterations']} ({f['positions']:,} positions), "
               f"{f['positions_per_s']:,.0f}"),
              ("final losses: policy, value", ", ".join(
                  f"{last[k]:.2f}" if k in last else "not trained yet"
                  for k in ("loss_policy", "loss_value")))])
  for opponent, who in (("random", "a random player"), ("iteration 0", "its iteration-0 network")):
    outcome = final_match(workdir, opponent, sizes["match_games"])
    key = opponent.replace(" ", "")
    rec.add({f"vs_{key}_{k}": v for k, v in outcome.items()},
            [(f"final network against {who} ({outcome['games']} games, "
              f"{outcome['simulations']} sims)",
              f"**{outcome['win_rate']:.1%}** (95%: {outcome['low']:.1%} - "
              f"{outcome['high']:.1%}; {outcome['wins']:.0f}-{outcome['losses']:.0f}"
              f"-{outcome['draws']:.0f})")])


def final_match(workdir: str, opponent: str, num_games: int) -> dict:
  """The run's final network against `opponent` ('random' or 'iteration 0'), on the device,
  half the games with each colour, with the run's evaluation settings."""
  import functools  # pylint: disable=import-outside-toplevel
  import jax  # pylint: disable=import-outside-toplevel
  # pylint: disable-next=import-outside-toplevel
  from agz_jax import arena, checkpoint, game as game_lib, nets, players, search, stats
  config, current = checkpoint.load_network(workdir)
  game = game_lib.make(config.game)
  evaluator = search.flax_network(game, nets.make(config.model), config.model.encoding)
  e = config.eval
  settings = search.SearchConfig.from_config(config.search, num_simulations=e.num_simulations,
                                             dirichlet_fraction=e.dirichlet_fraction)
  if opponent == "random":
    reference, moves_b = None, lambda states, key: jax.vmap(
        functools.partial(players.random_move, game.cfg))(
            states, jax.random.split(key, states.to_play.shape[0]))
  else:
    reference = checkpoint.load_network(os.path.join(workdir, "checkpoints", "0"))[1]
    moves_b = None
  match = jax.jit(lambda a, b, key: arena.play_match(
      game, evaluator, a, b, key, num_games=num_games, search=settings,
      temperature_moves=e.temperature_moves, moves_b=moves_b))
  start = time.perf_counter()
  out = {k: float(v) for k, v in match(current, reference, jax.random.PRNGKey(17)).items()}
  points = out["wins"] + 0.5 * out["draws"]
  low, high = stats.wilson_interval(points, num_games)  # points scored, not the rate
  out.update(games=num_games, simulations=e.num_simulations, win_rate=points / num_games,
             low=low, high=high, seconds=time.perf_counter() - start)
  print(f"  against {opponent}: {out['wins']:.0f} wins, {out['losses']:.0f} losses, "
        f"{out['draws']:.0f} draws of {num_games} ({out['seconds']:.0f} s, compiling included)",
        flush=True)
  return out


def alphago_part(rec: Record, sizes: dict, deadline: float, args) -> None:
  """AlphaGo's planes (how many ladder lanes an accelerator wants) and its rollouts."""
  import features_speed  # pylint: disable=import-outside-toplevel
  from agz_jax import go  # pylint: disable=import-outside-toplevel
  size, repeats = sizes["size"], sizes["repeats"]
  cfg = go.GoConfig(size=size, komi=7.5, history=8)
  human = size == 19 and _data_kind(args.data) == "archive"
  where = "human positions" if human else f"positions after {sizes['random_moves']} random moves"
  default, reader_default = go.ladder_settings().lanes, go.ladder_settings().reader
  other = {"host": "device", "device": "host"}[reader_default]
  positions = {}

  def states_of(batch):
    if batch not in positions:
      positions[batch] = (features_speed.human_positions(cfg, args.data, batch, 0) if human else
                          features_speed.random_positions(cfg, batch, sizes["random_moves"], 0))
    return positions[batch]

  def planes(batch, fraction, place=None):
    """The 48 planes at `fraction` ladder lanes per position, read where `place` says (the
    backend's default, else on the device: the lanes are a device setting). None: the 17, and
    the 48 without the ladder reading, the planes' cost apart from the reading."""
    key, states = f"{size}x{size}_b{batch}", states_of(batch)
    if fraction is None:
      plain = features_speed.positions_per_second(cfg, "agz17", states, repeats)
      bare = features_speed.positions_per_second(cfg, "without ladders", states, repeats)
      rec.add({f"{key}_agz17_per_s": plain, f"{key}_alphago48_no_ladders_per_s": bare},
              [(f"{size}x{size}, batch {batch}, {where}: 17 planes; 48 without the ladder "
                f"reading, positions/s", f"{plain:,.0f}; {bare:,.0f}")])
      return
    plain = rec.data["figures"][f"{key}_agz17_per_s"]
    place = place or (reader_default if fraction == default else "device")
    rate = features_speed.positions_per_second(
        cfg, "alphago48", states, repeats, features_speed.ladder_settings(place, fraction))
    if place == "host":  # the lanes there are the CPU's, whatever this backend's
      rec.add({f"{key}_alphago48_host_per_s": rate},
              [(f"{size}x{size}, batch {batch}: 48 planes, the ladders read on the host's CPU"
                f"{' (the default)' if place == reader_default else ''}, positions/s "
                f"(ratio to 17)", f"{rate:,.0f} ({rate / plain:.4f}x)")])
      return
    rec.add({f"{key}_alphago48_lanes{fraction:g}_per_s": rate},
            [(f"{size}x{size}, batch {batch}: 48 planes, read on the device"
              f"{' (the default)' if place == reader_default else ''}, {fraction:g} ladder "
              f"lanes per position{' (the default)' if fraction == default else ''}, "
              f"positions/s (ratio to 17)", f"{rate:,.0f} ({rate / plain:.4f}x)")])

  def graphs(batch):
    """The 48 planes again with XLA's loops recorded in command buffers (CUDA graphs with
    conditional nodes), in a process of its own: XLA reads its flags once, at start-up."""
    key, plain = f"{size}x{size}_b{batch}", rec.data["figures"][f"{size}x{size}_b{batch}_agz17_per_s"]
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import features_speed as f; "
            "from agz_jax import go; a = json.loads(sys.argv[2]); "
            "cfg = go.GoConfig(size=a['size'], komi=7.5, history=8); "
            "s = (f.human_positions(cfg, a['data'], a['batch'], 0) if a['human'] else "
            "f.random_positions(cfg, a['batch'], a['moves'], 0)); "
            "print(json.dumps(f.positions_per_second(cfg, 'alphago48', s, a['repeats'], "
            "f.ladder_settings('device'))))")
    argv = json.dumps({"size": size, "data": args.data, "batch": batch, "human": human,
                       "moves": sizes["random_moves"], "repeats": repeats})
    env = _environment(args.smoke)
    env["XLA_FLAGS"] = f"{env.get('XLA_FLAGS', '')} {LOOP_GRAPHS}".strip()
    try:
      done = subprocess.run([sys.executable, "-c", code,
                             os.path.dirname(os.path.abspath(__file__)), argv], env=env,
                            capture_output=True, text=True, cwd=REPO, check=True,
                            timeout=max(10.0, deadline - time.perf_counter() - 5))
      rate = float(done.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError) as e:
      last = (getattr(e, "stderr", None) or "").strip().splitlines()[-1:]
      rec.add({}, skipped=[f"batch {batch} with loops in command buffers: "
                           f"{type(e).__name__} {' '.join(last)}"[:300]])
      return
    rec.add({f"{key}_alphago48_loop_graphs_per_s": rate},
            [(f"{size}x{size}, batch {batch}: 48 planes, read on the device at the default "
              f"lanes, XLA's loops in command "
              f"buffers (`XLA_FLAGS={LOOP_GRAPHS}`), positions/s (ratio to 17)",
              f"{rate:,.0f} ({rate / plain:.4f}x)")])

  def reader(batch):
    """Where the reading's time goes (bench/ladder_reader.py): moves tried, the cost of one,
    and the longest reading alone on one lane, the floor under any number of lanes."""
    import ladder_reader  # pylint: disable=import-outside-toplevel
    f = ladder_reader.measure(cfg, states_of(batch), repeats)  # the reader on the device
    key = f"{size}x{size}_b{batch}_reader"
    rec.add({f"{key}_{k}": v for k, v in f.items()})
    if "tries" in f:
      rec.add({}, [(f"{size}x{size}, batch {batch}: ladders (undecided where they start), moves "
                    f"tried, the longest reading", f"{f['ladders']:,} ({f['undecided']:,}), "
                    f"{f['tries']:,}, {f['tries_longest']:,}"),
                   ("the ladder reading: us per ladder, per move tried; the longest reading "
                    "alone on one lane", f"{f['us_per_ladder']:,.1f}, {f['us_per_move']:,.2f}; "
                    f"{f['longest_alone_s'] * 1e3:,.2f} ms "
                    f"({f['longest_alone_s'] / f['tries_longest'] * 1e6:,.1f} us per move)")])

  # Most telling first (a short budget keeps those): the first batch's 17 planes and the 48
  # without the reading, the 48 with the default reader, with the other one, on the device with
  # the loops in command buffers, the rollouts, where the reading's time goes, then the rest.
  first, *others = sizes["batches"]
  sweep = [f for f in sizes["lane_fractions"] if f != default]
  steps = [(first, None), (first, default), ("other", first), ("graphs", first), "rollouts",
           ("reader", first)] + [(first, f) for f in sweep] + [
               (b, f) for b in others for f in [None, default] + sweep]
  names = {"graphs": " with loops in command buffers", "reader": ": where the reading's time goes",
           "other": f": the ladders read on the {other}"}
  for i, step in enumerate(steps):
    if time.perf_counter() > deadline - (60 if step == "rollouts" else 30):
      rec.add({}, skipped=[", ".join(
          s if s == "rollouts" else f"batch {s[1]}{names[s[0]]}" if s[0] in names else
          f"batch {s[0]}" + ("" if s[1] is None else f" at {s[1]:g} lanes") for s in steps[i:])
          + ": the part's time was spent"])
      return
    if step == "rollouts":
      rollouts(rec, sizes, size, human, args)
    elif step[0] == "graphs":
      graphs(step[1])
    elif step[0] == "reader":
      reader(step[1])
    elif step[0] == "other":
      planes(step[1], default, other)
    else:
      planes(*step)


def rollouts(rec: Record, sizes: dict, size: int, human: bool, args) -> None:
  """The shipped rollout policy's playouts against random playouts (bench/rollout_speed.py)."""
  import rollout_speed  # pylint: disable=import-outside-toplevel
  policy = sizes["rollout_policy"] and os.path.join(REPO, sizes["rollout_policy"])
  r = rollout_speed.measure(size, sizes["rollout_batch"], sizes["repeats"], policy,
                            args.data if human else None, None, 500)
  rec.add({"rollout_random_playouts_per_s": r["random"]["playouts_per_s"],
           "rollout_p_pi_playouts_per_s": r["p_pi"]["playouts_per_s"],
           "rollout_p_pi_moves_ratio": r["ratio_moves"]},
          [(f"{size}x{size}, {sizes['rollout_batch']} playouts from move "
            f"{rollout_speed.START_MOVE.get(size)}: p_pi playouts/s, moves/s (random play)",
            f"{r['p_pi']['playouts_per_s']:,.0f}, {r['p_pi']['moves_per_s']:,.0f} "
            f"({r['random']['playouts_per_s']:,.0f}, {r['random']['moves_per_s']:,.0f}); "
            f"p_pi moves at **{r['ratio_moves']:.2f}x** the random rate")])


PART_FUNCTIONS = {"probe": probe_part, "env": env_part, "selfplay": selfplay_part,
                  "sl": sl_part, "agz": agz_part, "alphago": alphago_part}


def run_part(args) -> int:
  deadline = time.perf_counter() + args.part_budget
  sizes = SIZES["smoke" if args.smoke else "full"].get(args.part, {})
  rec = Record(args.out, args.part, sizes)
  sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the other bench scripts
  sys.path.insert(0, REPO)  # configs/
  try:
    PART_FUNCTIONS[args.part](rec, sizes, deadline, args)
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
  parser.add_argument("--part", choices=tuple(PART_FUNCTIONS), help=argparse.SUPPRESS)
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
