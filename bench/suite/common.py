"""What the accelerator suite's runner and its parts share: the sizes, a part's record, and
small helpers."""

import importlib.util
import json
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(REPO, "bench")

# What each part runs, at full size and under --smoke.
SIZES = {
    "full": {
        "env": {"runs": [(9, 16384), (19, 4096)], "steps": 100, "repeats": 3},
        "selfplay": {"batch": 1024, "simulations": 64, "blocks": 10, "channels": 128,
                     "dtype": "bfloat16", "steps": 8, "repeats": 3},
        "sl": {"steps": 10_000_000, "log_every": 50, "eval_every": 500, "reserve_s": 45},
        # two matches, each compiling; then pretrained/human-19x19 under a clock, one tree
        "agz": {"match_games": 256, "reserve_s": 190, "search": "human-19x19", "search_size": 19,
                "search_seconds": 2.0},
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
        "agz": {"match_games": 2, "reserve_s": 60, "iterations": 2, "size": 5, "search": None,
                "search_size": 5, "search_seconds": 0.2},
        "alphago": {"size": 9, "batches": [4], "lane_fractions": [2.0], "random_moves": 30,
                    "repeats": 1, "rollout_batch": 4, "rollout_policy": None},
    },
}
SL_AIM_TOP1, SL_AIM_MINUTES = 0.50, 10
# XLA's while loops and conditionals recorded in CUDA graphs (conditional nodes), so that a
# loop's turn needs no round trip to the host for its condition: not XLA's default.
LOOP_GRAPHS = "--xla_gpu_enable_command_buffer=+WHILE,+CONDITIONAL"
PGX_MISSING = "pgx is not installed (pip install -e '.[bench]')"


def data_kind(path: str | None) -> str | None:
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


def child_environment(smoke: bool) -> dict:
  """The environment of a process the suite starts: the repository importable, and under
  --smoke the CPU only."""
  env = dict(os.environ)
  env["PYTHONPATH"] = os.pathsep.join(p for p in (REPO, env.get("PYTHONPATH")) if p)
  if smoke:
    env["JAX_PLATFORMS"] = "cpu"  # tiny sizes on the CPU even where an accelerator is visible
  return env


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


def pgx_version() -> str | None:
  if importlib.util.find_spec("pgx") is None:
    return None
  import pgx  # pylint: disable=import-outside-toplevel
  return pgx.__version__


def metrics(workdir: str) -> list[dict]:
  with open(os.path.join(workdir, "metrics.jsonl"), encoding="utf-8") as f:
    return [json.loads(line) for line in f]


def steady_rate(rows: list[dict]) -> float:
  """Median positions/s of the reported steps after the first (compiling) one."""
  import numpy as np  # pylint: disable=import-outside-toplevel
  rates = [r["positions_per_s"] for r in rows[1:]] or [r["positions_per_s"] for r in rows]
  return float(np.median(rates))


def fresh(workdir: str) -> str:
  """`workdir`, emptied: every run of the suite trains from scratch."""
  import shutil  # pylint: disable=import-outside-toplevel
  shutil.rmtree(workdir, ignore_errors=True)
  return workdir
