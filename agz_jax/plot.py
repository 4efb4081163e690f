"""Training curves as PNG files, from a run's metrics.jsonl.

  python -m agz_jax.plot --workdir workdir/cpu_9x9        # writes workdir/cpu_9x9/plots/*.png
  python -m agz_jax.plot --workdir runs/sl48 --workdir runs/sl17 --out plots/   # runs side by side
  python -m agz_jax.plot --workdir gs://bucket/run --out plots/     # a run's bucket
  python -m agz_jax.plot --workdir workdir/zero_9x9 --ratings ratings.json   # Elo vs wall time

With --ratings (a file of `python -m agz_jax.ratings ... --json FILE`) it draws
the run's Elo curve against training time instead: every rated player named
`NAME@ITERATION` is that iteration's checkpoint of the run, placed at the wall
time the run had reached there (from metrics.jsonl); the other players (GNU Go,
say) are drawn as horizontal lines. Several runs rated together (one --workdir
each) are drawn as one curve each: a run's checkpoints are then the players whose
NAME is its folder's name.
"""

import argparse
import io
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # pylint: disable=wrong-import-position

from agz_jax import paths  # pylint: disable=wrong-import-position

# Figure file -> (title, [(metric, label)], y label).
FIGURES = {
    "losses.png": ("Training losses", [("loss_policy", "policy (cross-entropy)"),
                                       ("loss_value", "value (MSE)"), ("loss_l2", "L2"),
                                       ("val_loss", "validation cross-entropy")], "loss"),
    "accuracy.png": ("Human move prediction", [("val_top1", "validation top-1"),
                                               ("val_top5", "validation top-5"),
                                               ("train_top1", "training top-1")], "accuracy"),
    "value_mse.png": ("Predicting games' results (value MSE; a constant guess scores 1)",
                      [("val_mse", "held-out even games"), ("train_mse", "training positions")],
                      "mean squared error"),
    "elo.png": ("Elo of the current network (first network = 0)", [("elo", "Elo")], "Elo"),
    "game_length.png": ("Game length (self-play or RL policy games)",
                        [("game_length", "mean moves per game")], "moves"),
    "speed.png": ("Speed (self-play or training positions)", [("positions_per_s", "positions / s")],
                  "positions / s"),
    "win_rate.png": ("Win rates", [("win_rate", "RL policy: against the sampled snapshot"),
                                   ("eval_win_rate", "evaluation: against the SL policy (RL) "
                                                     "or the previous network (self-play)")],
                     "share of games won"),
    "entropy.png": ("Policy entropy", [("policy_entropy", "entropy of the policy")], "nats"),
}

# Metrics with a known value before the first iteration: the Elo curve starts
# at the untrained network, 0 by definition.
AT_START = {"elo": 0.0}


def read_metrics(workdir: str) -> list[dict]:
  """The rows of a run's metrics.jsonl (local or a URL), one per iteration.

  Raises:
    FileNotFoundError: the workdir has no metrics.jsonl.
    paths.UnsupportedPath: a URL this installation cannot read.
  """
  path = paths.path(workdir) / "metrics.jsonl"
  if not path.exists():
    raise FileNotFoundError(f"no metrics.jsonl in {workdir!r}: is it the --workdir of a training run?")
  lines = path.read_text(encoding="utf-8").splitlines()
  rows = [json.loads(line) for line in lines if line.strip()]
  # A resumed run logs the iterations after its checkpoint again: keep the latest of each.
  by_iteration = {r["iteration"]: r for r in rows}
  return [by_iteration[i] for i in sorted(by_iteration)]


def plot(workdir: str | list[str], out_dir: str | None = None) -> list[str]:
  """Writes one PNG per figure that has data; returns their paths.

  Args:
    workdir: a run's workdir, or several whose curves share each figure (the
      labels then start with each run's folder name).
    out_dir: where the PNGs go (default: the first run's WORKDIR/plots); a
      local folder or a URL, like the workdirs.
  """
  workdirs = [workdir] if isinstance(workdir, str) else list(workdir)
  runs = [(os.path.basename(os.path.normpath(w)) + ": " if len(workdirs) > 1 else "",
           read_metrics(w)) for w in workdirs]
  out_dir = out_dir or os.path.join(workdirs[0], "plots")
  paths.makedirs(out_dir)
  written = []
  for name, (title, series, ylabel) in FIGURES.items():
    curves = [(prefix + label, _points(rows, key)) for prefix, rows in runs for key, label in series]
    curves = [(label, pts) for label, pts in curves if pts]
    if not curves:
      continue
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, pts in curves:
      x, y = zip(*pts)
      ax.plot(x, y, marker="o" if len(pts) < 30 else None, label=label)
    ax.set(title=title, xlabel="iteration (self-play) or step (supervised)", ylabel=ylabel)
    ax.grid(alpha=0.3)
    ax.legend()
    path = os.path.join(out_dir, name)
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=100)
    plt.close(fig)
    paths.path(path).write_bytes(png.getvalue())
    written.append(path)
  return written


def _points(rows: list[dict], key: str) -> list[tuple]:
  points = [(r["iteration"], r[key]) for r in rows if key in r]
  if points and key in AT_START and points[0][0] > 0:
    points.insert(0, (0, AT_START[key]))
  return points


def snapshot_points(ratings: dict, rows: list[dict], run: str | None = None,
                    ) -> tuple[list[tuple], dict]:
  """(minutes, iteration, elo, se) of each `NAME@ITERATION` player, by time; and the others'
  {name: (elo, se)}.

  A run's minutes start when its first iteration started (after compiling: the
  first row's time less its seconds_per_iteration); iteration 0 is at 0. With `run`, only
  the players whose NAME is `run` are its snapshots, and other runs' are left out.

  Raises:
    ValueError: a snapshot's iteration is not in the run's metrics.
  """
  times = {r["iteration"]: r["time"] for r in rows if "time" in r}
  if not times:
    raise ValueError("the run's metrics.jsonl has no times")
  first = min(times)
  start = times[first] - next(r for r in rows if r["iteration"] == first).get(
      "seconds_per_iteration", 0.0)
  times[0] = start
  snapshots, others = [], {}
  for name, r in ratings["players"].items():
    match = re.fullmatch(r"(.*)@(\d+)", name)
    if match is None:
      others[name] = (r["elo"], r["se"])
      continue
    if run is not None and match.group(1) != run:
      continue  # another run's snapshot
    iteration = int(match.group(2))
    if iteration not in times:
      raise ValueError(f"{name}: iteration {iteration} is not in the run's metrics.jsonl "
                       f"(iterations {min(times)}..{max(times)})")
    snapshots.append(((times[iteration] - start) / 60, iteration, r["elo"], r["se"]))
  if not snapshots:
    raise ValueError("no player is named " + (f"{run}@ITERATION" if run else "NAME@ITERATION")
                     + " (a checkpoint of the run)")
  return sorted(snapshots), others


def _run_name(workdir: str) -> str:
  return os.path.basename(os.path.normpath(workdir))


def elo_curve(workdirs: str | list[str], ratings_path: str, out_dir: str | None = None) -> str:
  """Draws the rated checkpoints' Elo (+-1.96 se) of one run, or of several runs rated together
  (a curve each), against wall time; returns the PNG's path.

  Raises:
    FileNotFoundError: no metrics.jsonl, or no ratings file.
    ValueError: a ratings file that does not read, snapshots a run does not have, or with
      several runs a snapshot of none of them.
  """
  workdirs = [workdirs] if isinstance(workdirs, str) else list(workdirs)
  try:
    ratings = json.loads(paths.path(ratings_path).read_text(encoding="utf-8"))
    ratings["players"].items()
  except FileNotFoundError:
    raise FileNotFoundError(f"no ratings file {ratings_path!r} (python -m agz_jax.ratings "
                            "... --json FILE writes one)") from None
  except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as e:
    raise ValueError(f"{ratings_path}: not a ratings file of agz_jax.ratings --json ({e})") from None
  runs = [_run_name(w) for w in workdirs]
  if len(workdirs) > 1:
    strays = sorted(n for n in ratings["players"]
                    if re.fullmatch(r"(.*)@\d+", n) and n.rpartition("@")[0] not in runs)
    if strays:
      raise ValueError(f"{strays[0]} is a checkpoint of none of the runs given "
                       f"({', '.join(runs)}): give its run's --workdir too")
  fig, ax = plt.subplots(figsize=(7, 4))
  for i, (workdir, run) in enumerate(zip(workdirs, runs)):
    snapshots, others = snapshot_points(ratings, read_metrics(workdir),
                                        run if len(workdirs) > 1 else None)
    minutes, _, elo, se = zip(*snapshots)
    ax.errorbar(minutes, elo, yerr=[1.96 * s for s in se], marker="o", capsize=3, color=f"C{i}",
                label=f"{run} (95% interval)")
  colours = [f"C{i}" for i in range(len(workdirs), len(workdirs) + 8)]
  for (name, (e, _)), colour in zip(sorted(others.items()), colours):
    ax.axhline(e, color=colour, linestyle="--", label=name)
  ax.set(title=f"Elo against training time (anchor {ratings['anchor']} = "
               f"{ratings['anchor_elo']:g})",
         xlabel="minutes of training (after compiling)", ylabel="Elo")
  ax.grid(alpha=0.3)
  ax.legend()
  out_dir = out_dir or os.path.join(workdirs[0], "plots")
  paths.makedirs(out_dir)
  path = os.path.join(out_dir, "elo_curve.png")
  fig.tight_layout()
  png = io.BytesIO()
  fig.savefig(png, format="png", dpi=100)
  plt.close(fig)
  paths.path(path).write_bytes(png.getvalue())
  return path


def main(argv=None):
  parser = argparse.ArgumentParser(description="Plot a training run's curves as PNG files.")
  parser.add_argument("--workdir", required=True, action="append",
                      help="the training run's --workdir (repeat it to compare runs)")
  parser.add_argument("--out", help="output folder (default: WORKDIR/plots)")
  parser.add_argument("--ratings", metavar="FILE",
                      help="draw the Elo curve of the run's checkpoints (players NAME@ITERATION) "
                           "rated in FILE (agz_jax.ratings --json) against wall time; with "
                           "several --workdir, a curve each (NAME: the run's folder name)")
  args = parser.parse_args(argv)
  try:
    if args.ratings:
      written = [elo_curve(args.workdir, args.ratings, args.out)]
    else:
      written = plot(args.workdir, args.out)
  except (FileNotFoundError, ValueError, paths.UnsupportedPath) as e:
    sys.exit(f"plot: {e}")
  for p in written:
    print(p)


if __name__ == "__main__":
  main()
