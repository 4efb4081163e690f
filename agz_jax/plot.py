"""Training curves as PNG files, from a run's metrics.jsonl.

  python -m agz_jax.plot --workdir workdir/cpu_9x9        # writes workdir/cpu_9x9/plots/*.png
  python -m agz_jax.plot --workdir runs/sl48 --workdir runs/sl17 --out plots/   # runs side by side
  python -m agz_jax.plot --workdir gs://bucket/run --out plots/     # a run's bucket
"""

import argparse
import io
import json
import os
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
    "elo.png": ("Elo of the current network (first network = 0)", [("elo", "Elo")], "Elo"),
    "game_length.png": ("Self-play game length", [("game_length", "mean moves per game")], "moves"),
    "speed.png": ("Speed (self-play or training positions)", [("positions_per_s", "positions / s")],
                  "positions / s"),
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


def main(argv=None):
  parser = argparse.ArgumentParser(description="Plot a training run's curves as PNG files.")
  parser.add_argument("--workdir", required=True, action="append",
                      help="the training run's --workdir (repeat it to compare runs)")
  parser.add_argument("--out", help="output folder (default: WORKDIR/plots)")
  args = parser.parse_args(argv)
  try:
    written = plot(args.workdir, args.out)
  except (FileNotFoundError, paths.UnsupportedPath) as e:
    sys.exit(f"plot: {e}")
  for p in written:
    print(p)


if __name__ == "__main__":
  main()
