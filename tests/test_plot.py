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


def test_the_elo_curve_against_wall_time(tmp_path, capsys):
  # Iteration i ends at 1000 + 30 i seconds, the first one took 30 s: the run starts at 1000.
  _write(tmp_path / "run", [{"iteration": i, "time": 1000.0 + 30 * i, "seconds_per_iteration": 30.0}
                            for i in range(1, 21)])
  players = {"zero@20": (300.0, 40.0), "zero@10": (100.0, 35.0), "gnugo-l1": (0.0, 0.0)}
  ratings = {"anchor": "gnugo-l1", "anchor_elo": 0.0,
             "players": {n: {"elo": e, "se": s, "games": 10, "score": 0.5}
                         for n, (e, s) in players.items()}}
  (tmp_path / "r.json").write_text(json.dumps(ratings))
  snapshots, others = plot.snapshot_points(ratings, plot.read_metrics(str(tmp_path / "run")))
  assert snapshots == [(5.0, 10, 100.0, 35.0), (10.0, 20, 300.0, 40.0)]   # minutes, by time
  assert others == {"gnugo-l1": (0.0, 0.0)}
  plot.main(["--workdir", str(tmp_path / "run"), "--ratings", str(tmp_path / "r.json"),
             "--out", str(tmp_path / "out")])
  assert capsys.readouterr().out.strip() == str(tmp_path / "out" / "elo_curve.png")
  image = matplotlib.image.imread(str(tmp_path / "out" / "elo_curve.png"))
  assert image.shape[0] > 200 and image.std() > 0.01
  # A snapshot the run never reached, a file that is not ratings, and no file: one line each.
  ratings["players"]["zero@99"] = ratings["players"]["zero@10"]
  (tmp_path / "bad.json").write_text(json.dumps(ratings))
  for path, message in ((tmp_path / "bad.json", "zero@99: iteration 99 is not in the run"),
                        (tmp_path / "run" / "metrics.jsonl", "not a ratings file"),
                        (tmp_path / "none.json", "no ratings file")):
    with pytest.raises(SystemExit, match=message):
      plot.main(["--workdir", str(tmp_path / "run"), "--ratings", str(path)])


def test_two_runs_rated_together_get_a_curve_each(tmp_path, capsys):
  # Run a: 30 s an iteration from t = 1000; run b: 60 s an iteration from t = 5000.
  _write(tmp_path / "a", [{"iteration": i, "time": 1000.0 + 30 * i, "seconds_per_iteration": 30.0}
                          for i in range(1, 21)])
  _write(tmp_path / "b", [{"iteration": i, "time": 5000.0 + 60 * i, "seconds_per_iteration": 60.0}
                          for i in range(1, 11)])
  players = {"a@10": (100.0, 30.0), "a@20": (250.0, 30.0), "b@10": (400.0, 35.0),
             "gnugo-l1": (0.0, 0.0)}
  ratings = {"anchor": "gnugo-l1", "anchor_elo": 0.0,
             "players": {n: {"elo": e, "se": s, "games": 10, "score": 0.5}
                         for n, (e, s) in players.items()}}
  (tmp_path / "r.json").write_text(json.dumps(ratings))
  b_rows = plot.read_metrics(str(tmp_path / "b"))
  assert plot.snapshot_points(ratings, b_rows, "b") == ([(10.0, 10, 400.0, 35.0)],
                                                        {"gnugo-l1": (0.0, 0.0)})
  with pytest.raises(ValueError, match="iteration 20 is not in the run"):
    plot.snapshot_points(ratings, b_rows)   # one run: every NAME@ITERATION is its own
  args = ["--workdir", str(tmp_path / "a"), "--workdir", str(tmp_path / "b"),
          "--ratings", str(tmp_path / "r.json"), "--out", str(tmp_path / "out")]
  plot.main(args)
  assert capsys.readouterr().out.strip() == str(tmp_path / "out" / "elo_curve.png")
  image = matplotlib.image.imread(str(tmp_path / "out" / "elo_curve.png"))
  assert image.shape[0] > 200 and image.std() > 0.01
  ratings["players"]["c@5"] = ratings["players"]["a@10"]
  (tmp_path / "r.json").write_text(json.dumps(ratings))
  with pytest.raises(SystemExit, match="c@5 is a checkpoint of none of the runs given"):
    plot.main(args)


def test_an_rl_policy_run_gets_its_win_rates_and_entropy(tmp_path):
  _write(tmp_path, [{"iteration": i, "time": 30 * i, "win_rate": 0.4 + i / 100,
                     "policy_entropy": 2.4 - i / 50, "game_length": 430.0,
                     **({"eval_win_rate": 0.5 + i / 100} if i % 5 == 0 else {})}
                    for i in range(1, 21)])
  names = sorted(os.path.basename(p) for p in plot.plot(str(tmp_path)))
  assert names == ["entropy.png", "game_length.png", "win_rate.png"]
  assert plot._points(plot.read_metrics(str(tmp_path)), "eval_win_rate") == [
      (i, 0.5 + i / 100) for i in (5, 10, 15, 20)]
