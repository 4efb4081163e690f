"""The real entry point, end to end: training, checkpoints, preemption, resume, bad input.

Each test runs `python -m agz_jax.launch` in a subprocess on a tiny 5x5 config.
"""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from agz_jax import checkpoint, sgf

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TINY = [
    "--config.game.size=5", "--config.game.max_moves=12", "--config.model.blocks=1", "--config.model.channels=8",
    "--config.model.value_hidden=16", "--config.search.num_simulations=4",
    "--config.search.max_num_considered_actions=4", "--config.selfplay.num_games=8",
    "--config.selfplay.steps_per_iteration=8", "--config.replay.rows_per_game=24",
    "--config.replay.min_ready=8", "--config.train.batch_size=8",
    "--config.train.updates_per_iteration=2", "--config.eval.every=0",
]


def launch_cmd(workdir, iterations, *extra):
  return [sys.executable, "-m", "agz_jax.launch", "--config", "configs/cpu_9x9.py",
          "--workdir", str(workdir), f"--config.iterations={iterations}", *TINY, *extra]


def run(workdir, iterations, *extra, timeout=300):
  proc = subprocess.run(launch_cmd(workdir, iterations, *extra), cwd=REPO, capture_output=True,
                        text=True, timeout=timeout)
  assert proc.returncode == 0, proc.stdout + proc.stderr
  return proc


def saved_params(workdir, step):
  """The parameters stored in a checkpoint, as a flat list of numpy arrays."""
  path = os.path.join(workdir, "checkpoints", str(step), "state")
  restored = checkpoint.restore_numpy(path)  # saved by a run on 2 CPU devices
  import jax  # pylint: disable=import-outside-toplevel
  return [np.asarray(x) for x in jax.tree.leaves(restored["params"])]


def wait_for(predicate, timeout, proc):
  deadline = time.time() + timeout
  while time.time() < deadline:
    if predicate():
      return
    if proc.poll() is not None:
      raise AssertionError("training exited early:\n" + proc.stdout.read() + proc.stderr.read())
    time.sleep(0.2)
  raise AssertionError("timed out")


def test_trains_logs_and_checkpoints(tmp_path):
  # JAX logs every XLA compilation: the fused iteration must compile once for all three.
  cmd = launch_cmd(tmp_path, 3, "--config.checkpoint.every=2", "--config.checkpoint.keep=1",
                   "--config.log.sgf_every=1")
  proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300,
                        env=dict(os.environ, JAX_LOG_COMPILES="1"))
  assert proc.returncode == 0, proc.stdout + proc.stderr
  assert (proc.stdout + proc.stderr).count("Compiling jit(iteration)") == 1
  lines = [l for l in proc.stdout.splitlines() if l.startswith("it ")]
  assert [l.split()[1] for l in lines] == ["1/3", "2/3", "3/3"]
  assert "compiling" in lines[0] and all("pos/s" in l and "ETA" in l for l in lines[1:])
  rows = [json.loads(l) for l in open(tmp_path / "metrics.jsonl")]
  assert [r["iteration"] for r in rows] == [1, 2, 3]
  assert rows[-1]["trained"] == 1.0 and np.isfinite(rows[-1]["loss_policy"])
  assert rows[-1]["loss_policy"] > 0 and rows[-1]["loss_value"] >= 0
  # The last `keep` checkpoints, and checkpoint 0 (the untrained network) for ever.
  assert sorted(os.listdir(tmp_path / "checkpoints")) == ["0", "3"]
  first, last = saved_params(tmp_path, 0), saved_params(tmp_path, 3)
  assert max(np.max(np.abs(a - b)) for a, b in zip(first, last, strict=True)) > 1e-3
  assert any(f.startswith("events") for f in os.listdir(tmp_path / "tensorboard"))
  # A sample of self-play games as SGF: complete games that replay, a win rate per move.
  games = sorted(os.listdir(tmp_path / "sgf"))
  assert games
  for name in games:
    record = sgf.read(str(tmp_path / "sgf" / name))
    assert record.size == 5 and record.result and record.moves
    assert all(c and c.startswith("win rate ") for c in record.comments)
    states = sgf.replay(record)
    assert record.result.endswith("+R") or bool(states[-1].terminated) or len(record.moves) == 12


def test_a_run_on_katagos_inputs_trains_and_its_network_reads_them(tmp_path):
  """The encoding with global features end to end: self-play, training and a checkpoint whose
  network has the global input (nets.GLOBAL_INPUTS), as bench/encoding_pair.sh runs it."""
  run(tmp_path, 3, "--config.model.encoding=katago_noladders", "--config.checkpoint.every=3")
  rows = [json.loads(l) for l in open(tmp_path / "metrics.jsonl")]
  assert rows[-1]["trained"] == 1.0 and np.isfinite(rows[-1]["loss_policy"])
  config, variables = checkpoint.load_network(str(tmp_path))
  assert config.model.encoding == "katago_noladders"
  from agz_jax import nets  # pylint: disable=import-outside-toplevel
  assert nets.GLOBAL_INPUTS["katago_noladders"] > 0
  assert "global" in str(list(variables["params"])).lower()  # the globals' projection
  first, last = saved_params(tmp_path, 0), saved_params(tmp_path, 3)
  assert max(np.max(np.abs(a - b)) for a, b in zip(first, last, strict=True)) > 1e-3


def test_kill_9_then_resume_matches_uninterrupted_run(tmp_path):
  killed, straight = tmp_path / "killed", tmp_path / "straight"
  proc = subprocess.Popen(launch_cmd(killed, 100, "--config.checkpoint.every=1"), cwd=REPO,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
  try:
    wait_for(lambda: os.path.isdir(killed / "checkpoints" / "2"), 240, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
  finally:
    proc.kill()
  steps = sorted(int(s) for s in os.listdir(killed / "checkpoints") if s.isdigit())
  last = steps[-1]
  resumed = run(killed, last + 1)
  assert f"resumed from the checkpoint of iteration {last}" in resumed.stdout
  assert [l.split()[1] for l in resumed.stdout.splitlines() if l.startswith("it ")] == [
      f"{last + 1}/{last + 1}"]
  run(straight, last + 1)
  for a, b in zip(saved_params(killed, last + 1), saved_params(straight, last + 1), strict=True):
    np.testing.assert_array_equal(a, b)


def test_sigterm_saves_and_stops(tmp_path):
  proc = subprocess.Popen(launch_cmd(tmp_path, 100, "--config.checkpoint.every=1000"), cwd=REPO,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
  try:
    wait_for(lambda: os.path.exists(tmp_path / "metrics.jsonl")
             and os.path.getsize(tmp_path / "metrics.jsonl") > 0, 240, proc)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
  finally:
    proc.kill()
  assert proc.returncode == 0, out + err
  assert "SIGTERM: checkpoint of iteration" in out
  step = int(out.split("SIGTERM: checkpoint of iteration")[1].split()[0])
  assert sorted(os.listdir(tmp_path / "checkpoints"), key=int) == ["0", str(step)]


def _damage(folder, which):
  """Truncates every file of a checkpoint folder, or only its array data ('half written')."""
  for root, _, files in os.walk(folder):
    for f in files:
      path = os.path.join(root, f)
      if which == "all" or (os.sep + "d" + os.sep in path and os.path.getsize(path) > 100):
        with open(path, "r+b") as handle:
          handle.truncate(0 if which == "all" else os.path.getsize(path) // 2)


@pytest.mark.parametrize("which", ["all", "data"])
def test_damaged_checkpoint_is_skipped_and_set_aside(tmp_path, which):
  run(tmp_path, 2, "--config.checkpoint.every=1")
  _damage(tmp_path / "checkpoints" / "2", which)
  proc = run(tmp_path, 3, "--config.checkpoint.every=1", "--config.checkpoint.keep=5")
  assert "checkpoint" in proc.stderr and "cannot be restored and is skipped" in proc.stderr
  assert "WARNING: checkpoint" in proc.stdout  # in the progress log too, not only in warnings
  assert "resumed from the checkpoint of iteration 1" in proc.stdout
  # Moved out of the way: the run saved its own iterations 2 and 3 in their place.
  assert os.listdir(tmp_path / "checkpoints_damaged") == ["2"]
  assert {"2", "3"} <= set(os.listdir(tmp_path / "checkpoints"))
  saved_params(tmp_path, 2)  # readable again


def test_checkpoint_of_another_network_stops_the_run(tmp_path):
  run(tmp_path, 1)
  before = saved_params(tmp_path, 0)
  proc = subprocess.run(launch_cmd(tmp_path, 2, "--config.model.channels=16"), cwd=REPO,
                        capture_output=True, text=True, timeout=300)
  assert proc.returncode != 0
  last = proc.stderr.strip().splitlines()[-1]
  assert last.startswith("launch: checkpoint ") and "does not fit this config" in last, last
  assert "model.channels (8 there, 16 here)" in last and "new --workdir" in last
  assert "Traceback" not in proc.stderr
  # Nothing of the old run is touched.
  assert sorted(os.listdir(tmp_path / "checkpoints"), key=int) == ["0", "1"]
  assert not os.path.exists(tmp_path / "checkpoints_damaged")
  for a, b in zip(before, saved_params(tmp_path, 0), strict=True):
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("args, message", [
    (["--config.train.bach_size=3"], "unknown config key 'train.bach_size'"),
    (["--config.train.batch_size=abc"], "batch_size"),
    (["--config.model.encoding=agz18"], "launch: encoding must be one of agz17, alphago48"),
    (["--config.model.encoding=alphago48", "--config.game.history=2"],
     "launch: encoding 'alphago48' needs game.history >= 8"),
])
def test_bad_overrides_fail_at_once_with_one_clear_line(tmp_path, args, message):
  proc = subprocess.run(launch_cmd(tmp_path, 1, *args), cwd=REPO, capture_output=True, text=True,
                        timeout=120)
  assert proc.returncode != 0
  assert message in proc.stderr
  assert "Traceback" not in proc.stderr
  assert not os.path.exists(tmp_path / "checkpoints")


def test_bare_config_name_is_found_under_configs(tmp_path):
  cmd = launch_cmd(tmp_path, 1)
  cmd[cmd.index("configs/cpu_9x9.py")] = "cpu_9x9.py"
  proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
  assert proc.returncode == 0, proc.stdout + proc.stderr
  assert "it 1/1" in proc.stdout
