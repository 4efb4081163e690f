"""python -m agz_jax.plot: curves from metrics.jsonl, one run or several side by side."""

import json
import os

import matplotlib.image
import pytest

from agz_jax import plot


def _write(workdir, rows):
  os.makedirs(workdir, exist_ok=True)
  with open(os.path.join(workdir, "metrics.jsonl"), "w", encoding="utf-8") as f:
    for r in rows:
      f.write(json.dumps(r) + "\n")


def test_supervised_runs_side_by_side(tmp_path):
  for name, top1 in (("sl48", 0.3), ("sl17", 0.2)):
    _write(tmp_path / name, [{"iteration": s, "time": s, "loss_policy": 4.0 - s / 100,
                              "train_top1": top1, "positions_per_s": 300.0,
                              **({"val_top1": top1, "val_top5": 2 * top1, "val_loss": 3.5}
                                 if s % 50 == 0 else {})} for s in range(10, 110, 10)])
  paths = plot.plot([str(tmp_path / "sl48"), str(tmp_path / "sl17")], str(tmp_path / "out"))
  names = sorted(os.path.basename(p) for p in paths)
  assert names == ["accuracy.png", "losses.png", "speed.png"]      # no self-play figures
  image = matplotlib.image.imread(str(tmp_path / "out" / "accuracy.png"))
  assert image.shape[0] > 200 and image.shape[1] > 400 and image.std() > 0.01


def test_a_resumed_run_keeps_the_latest_row_of_each_iteration(tmp_path):
  _write(tmp_path, [{"iteration": 1, "elo": 0.0}, {"iteration": 2, "elo": 5.0},
                    {"iteration": 2, "elo": 7.0}, {"iteration": 3, "elo": 9.0}])
  rows = plot.read_metrics(str(tmp_path))
  assert [(r["iteration"], r["elo"]) for r in rows] == [(1, 0.0), (2, 7.0), (3, 9.0)]
  assert [os.path.basename(p) for p in plot.plot(str(tmp_path))] == ["elo.png"]


def test_the_elo_curve_starts_at_the_untrained_network():
  rows = [{"iteration": 50, "elo": -30.0, "loss_value": 0.9}, {"iteration": 100, "elo": 40.0}]
  assert plot._points(rows, "elo") == [(0, 0.0), (50, -30.0), (100, 40.0)]
  assert plot._points(rows, "loss_value") == [(50, 0.9)]   # no value known before training
  assert plot._points([], "elo") == []


def test_a_folder_without_metrics_is_named():
  with pytest.raises(FileNotFoundError, match="no metrics.jsonl in"):
    plot.plot("/nonexistent-run")
