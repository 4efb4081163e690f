"""bench/accelerator_suite.py --smoke: every part runs at tiny sizes on the CPU, its figures
or its reason for skipping land in the JSON, and the markdown table lists every part.

The suite runs once for the module (5 to 6 minutes on 2 cores: each part compiles its programs
in a process of its own); the tests read what it wrote.
"""

import importlib.util
import json
import math
import os
import subprocess
import sys

import pytest

from agz_jax import checkpoint, stats

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUITE = os.path.join(REPO, "bench", "accelerator_suite.py")
PARTS = ("env", "selfplay", "sl", "agz", "alphago")


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
  out = tmp_path_factory.mktemp("suite")
  env = dict(os.environ, PYTHONPATH=os.pathsep.join(
      p for p in (REPO, os.environ.get("PYTHONPATH")) if p))
  proc = subprocess.run([sys.executable, SUITE, "--smoke", "--out", str(out)],
                        cwd=REPO, env=env, capture_output=True, text=True, timeout=2400)
  with open(out / "accelerator_suite.json", encoding="utf-8") as f:
    results = json.load(f)
  return proc, results, (out / "accelerator_suite.md").read_text(encoding="utf-8")


def _positive_numbers(figures: dict) -> list:
  return [v for v in figures.values()
          if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0]


@pytest.mark.slow
@pytest.mark.subprocess
def test_the_smoke_run_succeeds_and_says_what_it_ran_on(smoke):
  proc, results, _ = smoke
  assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
  suite = results["suite"]
  assert suite["smoke"] and suite["backend"] == "cpu" and suite["parts"] == list(PARTS)
  assert 0 < suite["seconds"] <= suite["budget_s"]


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("part", PARTS)
def test_every_part_has_figures_or_a_reason(smoke, part):
  _, results, _ = smoke
  record = results["parts"][part]
  if record["status"] == "skipped":
    assert record["reason"]
    return
  assert record["status"] == "done", record
  assert _positive_numbers(record["figures"]), record
  assert record["table"] and all(name and value for name, value in record["table"])
  assert all(isinstance(reason, str) and reason for reason in record["skipped"])


@pytest.mark.slow
@pytest.mark.subprocess
def test_the_figures_are_the_ones_each_part_promises(smoke):
  _, results, _ = smoke
  parts = {name: r for name, r in results["parts"].items() if r["status"] == "done"}
  assert set(parts) == set(PARTS)  # pgx missing skips only the comparisons, not the parts
  env, play = parts["env"]["figures"], parts["selfplay"]["figures"]
  assert env["9x9_b16_steps_per_s"] > 0 and env["19x19_b8_steps_per_s"] > 0
  assert play["positions_per_s"] > 0 and play["network_flops_per_evaluation"] > 0
  has_pgx = results["suite"]["pgx"] is not None
  assert ("9x9_b16_ratio" in env) == has_pgx and ("ratio" in play) == has_pgx
  # On a CPU there is no bf16 peak: the share is not reported, and the table says why.
  assert "selfplay_peak_share" not in play
  assert any("bf16 peak" in reason for reason in parts["selfplay"]["skipped"])
  sl = parts["sl"]["figures"]
  assert sl["steps"] > 0 and 0 <= sl["val_top1"] <= sl["val_top5"] <= 1
  alphago = parts["alphago"]["figures"]
  # Which encoding is faster is a benchmark's figure, not this test's: under a loaded CI the
  # order of two smoke timings can flip.
  assert alphago["9x9_b4_agz17_per_s"] > 0 and alphago["9x9_b4_alphago48_lanes2_per_s"] > 0
  assert alphago["9x9_b4_alphago48_lanes0.125_per_s"] > 0  # the CPU's default lanes
  assert alphago["9x9_b4_alphago48_no_ladders_per_s"] > 0
  assert alphago["9x9_b4_alphago48_host_per_s"] > 0  # the reader that is not the CPU's default
  assert alphago["9x9_b4_alphago48_loop_graphs_per_s"] > 0  # a child process, XLA_FLAGS set
  assert alphago["9x9_b4_reader_ladders"] >= alphago["9x9_b4_reader_undecided"] >= 0
  assert alphago["rollout_random_playouts_per_s"] > 0 and alphago["rollout_p_pi_playouts_per_s"] > 0
  agz = parts["agz"]["figures"]
  assert agz["iterations"] > 0
  # Its final network is kept, as a folder and as one file, to be measured at home.
  assert checkpoint.load_network(agz["network"])[0].game.size == 5
  assert os.path.getsize(agz["network"] + ".tar.gz") > 0
  # A GTP engine's one tree under a clock, one leaf a step and 8 (search.leaf_batch).
  assert agz["search_leaves1_root_visits"] > 0 and agz["search_leaves8_root_visits"] > 0
  for opponent in ("random", "iteration0"):
    games = agz[f"vs_{opponent}_games"]
    assert agz[f"vs_{opponent}_wins"] + agz[f"vs_{opponent}_losses"] + \
        agz[f"vs_{opponent}_draws"] == games
    assert 0 <= agz[f"vs_{opponent}_low"] <= agz[f"vs_{opponent}_win_rate"] <= \
        agz[f"vs_{opponent}_high"] <= 1
    points = agz[f"vs_{opponent}_wins"] + agz[f"vs_{opponent}_draws"] / 2
    assert agz[f"vs_{opponent}_win_rate"] == pytest.approx(points / games)
    assert (agz[f"vs_{opponent}_low"], agz[f"vs_{opponent}_high"]) == pytest.approx(
        stats.wilson_interval(points, games))


@pytest.mark.slow
@pytest.mark.subprocess
def test_the_markdown_table_lists_every_part(smoke):
  _, results, table = smoke
  assert "| part | measurement | result |" in table
  rows = [line for line in table.splitlines() if line.startswith("| ")][1:]
  for part in PARTS:
    assert any(line.startswith(f"| {part} |") for line in rows), table
  for part, record in results["parts"].items():
    for name, _ in record["table"]:
      assert f"| {part} | {name} |" in table


def _suite_module():
  spec = importlib.util.spec_from_file_location("accelerator_suite", SUITE)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def test_missing_games_skip_only_the_sl_part(tmp_path):
  suite = _suite_module()
  args = suite.argparse.Namespace(smoke=False, data=str(tmp_path / "no_games"))
  missing = suite._prerequisites(args, {"backend": "gpu"})  # pylint: disable=protected-access
  assert list(missing) == ["sl"] and "no human games" in missing["sl"]
  assert "agz_jax.data.import_sgf" in missing["sl"]
  (tmp_path / "sgf").mkdir()
  (tmp_path / "sgf" / "a.sgf").write_text("(;GM[1]SZ[19])", encoding="utf-8")
  args.data = str(tmp_path / "sgf")
  assert not suite._prerequisites(args, {"backend": "gpu"})  # pylint: disable=protected-access
  args.smoke, args.data = True, None  # --smoke writes its own games
  assert not suite._prerequisites(args, {"backend": "cpu"})  # pylint: disable=protected-access


@pytest.mark.subprocess
def test_without_an_accelerator_every_part_is_skipped_with_the_reason(tmp_path):
  # Without --smoke on a CPU nothing runs; each part says why, and nothing failed.
  env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=os.pathsep.join(
      p for p in (REPO, os.environ.get("PYTHONPATH")) if p))
  proc = subprocess.run([sys.executable, SUITE, "--out", str(tmp_path), "--data",
                         str(tmp_path / "no_games")], cwd=REPO, env=env, capture_output=True,
                        text=True, timeout=300)
  assert proc.returncode == 0, proc.stderr[-3000:]
  results = json.loads((tmp_path / "accelerator_suite.json").read_text(encoding="utf-8"))
  for part in PARTS:
    record = results["parts"][part]
    assert record["status"] == "skipped" and "no accelerator visible" in record["reason"]
  table = (tmp_path / "accelerator_suite.md").read_text(encoding="utf-8")
  assert table.count("| skipped | no accelerator visible") == len(PARTS)


def test_the_bf16_peak_is_known_by_device_kind_and_unknown_devices_get_none():
  spec = importlib.util.spec_from_file_location(
      "selfplay_speed", os.path.join(REPO, "bench", "selfplay_speed.py"))
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  peak = module.bf16_peak_tflops
  assert peak("NVIDIA H200") == peak("NVIDIA H100 80GB HBM3") == 989.0
  assert peak("NVIDIA H100 PCIe") == 756.0 and peak("NVIDIA A100-SXM4-80GB") == 312.0
  assert peak("TPU v4") == 275.0 and peak("TPU v5 lite") == 197.0
  assert peak("NVIDIA L40S") is None and peak("cpu") is None
