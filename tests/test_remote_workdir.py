"""A gs:// workdir end to end, against a local Cloud Storage server.

The module starts `gcp-storage-emulator` (the `dev` extra) on a free port and
points orbax (tensorstore: TENSORSTORE_GCS_HTTP_URL) and epath (gcsfs:
STORAGE_EMULATOR_HOST) at it, in this process and in the training
subprocesses (tests/gcs_server.py says why the emulator is wrapped). A tiny
5x5 run trains into gs://bucket/run, is killed with SIGKILL and resumed from
the bucket; its network then plays from the bucket and its curves are plotted
from it. What the bucket holds is read through the server's JSON API, not
through the code under test.
"""

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import jax
import numpy as np
import pytest

from agz_jax import checkpoint, export, paths, plot, sgf

import helpers
from helpers import cpu_9x9
from test_launch import REPO, launch_cmd, saved_params, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

BUCKET = "bucket"
RUN = f"gs://{BUCKET}/run"


def _free_port() -> int:
  with socket.socket() as s:
    s.bind(("localhost", 0))
    return s.getsockname()[1]


@pytest.fixture(scope="module")
def emulator():
  """The server's URL, with this process's environment pointing the GCS clients at it."""
  for package in ("gcp_storage_emulator", "gcsfs"):
    if importlib.util.find_spec(package) is None:
      pytest.skip(f"{package} is not installed (pip install -e '.[dev]')")
  port = _free_port()
  url = f"http://localhost:{port}"
  server = subprocess.Popen(
      [sys.executable, os.path.join(os.path.dirname(__file__), "gcs_server.py"), "start",
       "--host=localhost", f"--port={port}", "--in-memory", f"--default-bucket={BUCKET}", "--quiet"],
      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  try:
    deadline = time.time() + 60
    while True:
      try:
        urllib.request.urlopen(f"{url}/storage/v1/b/{BUCKET}", timeout=5)
        break
      except OSError:
        if server.poll() is not None or time.time() > deadline:
          pytest.fail("gcp-storage-emulator did not start")
        time.sleep(0.2)
    with pytest.MonkeyPatch.context() as patch:
      for name, value in {
          "STORAGE_EMULATOR_HOST": url, "TENSORSTORE_GCS_HTTP_URL": url,
          "GOOGLE_AUTH_TOKEN_FOR_TESTING": "test",
          # gcsfs would ask the real Storage Control API for the bucket's layout.
          "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT": "false", "NO_GCE_CHECK": "true"}.items():
        patch.setenv(name, value)
      yield url
  finally:
    server.kill()
    server.wait()


def objects(url, prefix) -> list[str]:
  """Names of the bucket's objects under `prefix`, relative to it."""
  query = urllib.parse.urlencode({"prefix": prefix + "/", "maxResults": 100000})
  with urllib.request.urlopen(f"{url}/storage/v1/b/{BUCKET}/o?{query}", timeout=30) as r:
    items = json.load(r).get("items", [])
  return sorted(item["name"][len(prefix) + 1:] for item in items)


def steps(url, prefix) -> list[int]:
  """The finished checkpoints under gs://bucket/<prefix>/checkpoints."""
  found = [name.split("/") for name in objects(url, prefix)]
  return sorted(int(parts[1]) for parts in found if len(parts) == 3
                and parts[0] == "checkpoints" and parts[2] == "commit_success.txt")


def launch(workdir, iterations, cwd, *extra, **env):
  """Popen arguments of test_launch's command, run from `cwd` with `env` added."""
  cmd = launch_cmd(workdir, iterations, *extra)
  cmd[cmd.index("configs/cpu_9x9.py")] = os.path.join(REPO, "configs", "cpu_9x9.py")
  return dict(args=cmd, cwd=cwd, env=dict(os.environ, PYTHONPATH=REPO, **env), text=True)


@pytest.fixture(scope="module")
def killed_and_resumed(emulator, tmp_path_factory):
  """A run killed with SIGKILL after its checkpoint 2, then resumed for one iteration more.

  Returns:
    (last step before the kill, the resumed run's stdout, its working folder, its TMPDIR).
  """
  cwd, staging = tmp_path_factory.mktemp("cwd"), tmp_path_factory.mktemp("staging")
  killed_staging = str(tmp_path_factory.mktemp("killed_staging"))  # left behind by SIGKILL
  proc = subprocess.Popen(**launch(RUN, 100, cwd, "--config.checkpoint.every=1",
                                   "--config.log.sgf_every=1", TMPDIR=killed_staging),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
  try:
    # A workdir taken for a local path would appear as ./gs:/bucket/run: fail at once then.
    wait_for(lambda: 2 in steps(emulator, "run") or os.path.exists(cwd / "gs:"), 400, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
  finally:
    proc.kill()
  assert not os.path.exists(cwd / "gs:"), "the gs:// workdir was written as a local folder"
  last = steps(emulator, "run")[-1]
  resumed = subprocess.run(**launch(RUN, last + 1, cwd, "--config.log.sgf_every=1",
                                    TMPDIR=str(staging)), capture_output=True, timeout=400)
  assert resumed.returncode == 0, resumed.stdout + resumed.stderr
  return last, resumed.stdout, cwd, staging


def test_resumes_from_the_bucket(emulator, killed_and_resumed):
  last, out, _, _ = killed_and_resumed
  assert f"resumed from the checkpoint of iteration {last}" in out
  assert [l.split()[1] for l in out.splitlines() if l.startswith("it ")] == [
      f"{last + 1}/{last + 1}"]
  assert steps(emulator, "run")[-1] == last + 1
  # The bucket's metrics.jsonl goes on from the killed run's rows (uploaded at its checkpoints).
  rows = [json.loads(l) for l in paths.path(RUN + "/metrics.jsonl").read_text().splitlines()]
  assert set(range(1, last)) | {last + 1} <= {r["iteration"] for r in rows}
  assert rows[-1]["iteration"] == last + 1 and np.isfinite(rows[-1]["loss_policy"])


def test_everything_is_in_the_bucket_nothing_on_local_disk(emulator, killed_and_resumed):
  last, _, cwd, staging = killed_and_resumed
  names = objects(emulator, "run")
  assert "metrics.jsonl" in names
  # Two runs: two TensorBoard event files.
  assert len([n for n in names if n.startswith("tensorboard/events.out.tfevents.")]) == 2
  for step in (0, last + 1):  # the untrained network for ever, and the newest
    assert any(n.startswith(f"checkpoints/{step}/network/") for n in names)
  games = [n for n in names if n.startswith("sgf/") and n.endswith(".sgf")]
  assert games
  for name in games:
    record = sgf.read(f"{RUN}/{name}")
    assert record.size == 5 and record.result and record.moves
  # Not a './gs:/bucket/run' folder, not a staging folder left behind by a clean exit.
  assert os.listdir(cwd) == []
  assert [f for f in os.listdir(staging) if f.startswith("agz_jax_metrics_")] == []


def test_network_loads_and_plays_from_the_bucket(emulator, killed_and_resumed):
  last, _, cwd, _ = killed_and_resumed
  assert checkpoint.find_checkpoint(RUN) == f"{RUN}/checkpoints/{last + 1}"
  config, variables = checkpoint.load_network(RUN)
  assert config.game.size == 5 and config.model.channels == 8
  for a, b in zip(jax.tree.leaves(variables["params"]), saved_params(RUN, last + 1), strict=True):
    np.testing.assert_array_equal(a, b)
  gtp = subprocess.run([sys.executable, "-m", "agz_jax.gtp", "--checkpoint", RUN, "--policy-only"],
                       input="boardsize 5\ngenmove b\nquit\n", cwd=cwd, capture_output=True,
                       text=True, timeout=300, env=dict(os.environ, PYTHONPATH=REPO))
  assert gtp.returncode == 0, gtp.stderr
  answers = [l for l in gtp.stdout.splitlines() if l.strip()]
  assert answers[0] == "=" and answers[1][:2] == "= " and answers[2] == "=", gtp.stdout
  assert answers[1][2:].lower() in {f"{c}{r}" for c in "abcde" for r in range(1, 6)} | {"pass"}


def test_network_exports_from_the_bucket(emulator, killed_and_resumed, tmp_path):
  last, _, _, _ = killed_and_resumed
  out = tmp_path / "shipped"
  assert export.main([RUN, str(out)]) == 0
  assert sorted(os.listdir(out)) == ["_CHECKPOINT_METADATA", "config", "network"]
  assert "commit_success.txt" not in os.listdir(out / "network")
  config, variables = checkpoint.load_network(str(out))
  assert config.to_dict() == checkpoint.load_network(RUN)[0].to_dict()
  for a, b in zip(jax.tree.leaves(variables["params"]), saved_params(RUN, last + 1), strict=True):
    np.testing.assert_array_equal(a, b)


def test_plots_from_the_bucket(emulator, killed_and_resumed, tmp_path):
  written = plot.plot(RUN)
  assert f"{RUN}/plots/losses.png" in written
  names = objects(emulator, "run")
  assert {p[len(RUN) + 1:] for p in written} <= set(names)
  assert paths.path(f"{RUN}/plots/losses.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
  local = plot.plot(RUN, str(tmp_path / "plots"))
  assert sorted(os.listdir(tmp_path / "plots")) == sorted(os.path.basename(p) for p in local)


def test_damaged_checkpoint_in_the_bucket_is_set_aside(emulator):
  workdir = f"gs://{BUCKET}/damaged"
  config = cpu_9x9.get_config()

  def state(value):
    return helpers.Network({"w": np.full(3, value, np.float32)}, {"mean": np.zeros(2, np.float32)})

  saver = checkpoint.Checkpointer(workdir, keep=5)
  for step in (1, 2):
    saver.save(step, state(step), config)
  saver.close()
  for name in objects(emulator, "damaged/checkpoints/2"):
    paths.path(f"{workdir}/checkpoints/2/{name}").write_bytes(b"")
  device = jax.sharding.SingleDeviceSharding(jax.devices()[0])
  abstract = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=device),
                          state(0))
  ckpt = checkpoint.Checkpointer(workdir, keep=5)
  with pytest.warns(UserWarning, match="cannot be restored and is skipped"):
    restored, step = ckpt.restore_latest(abstract, config)
  assert step == 1 and np.all(np.asarray(restored.params["w"]) == 1)
  # Moved out of the way object by object; the step is free for a new save.
  assert objects(emulator, "damaged/checkpoints_damaged/2")
  assert objects(emulator, "damaged/checkpoints/2") == []
  ckpt.save(2, state(2), config)
  ckpt.close()
  assert steps(emulator, "damaged") == [1, 2]


def test_remote_workdir_without_its_package_says_what_to_install(monkeypatch, capsys):
  real = importlib.util.find_spec
  monkeypatch.setattr(importlib.util, "find_spec",
                      lambda name, *a: None if name == "gcsfs" else real(name, *a))
  with pytest.raises(paths.UnsupportedPath, match=r"pip install 'agz_jax\[gcs\]'"):
    paths.path(RUN)
  with pytest.raises(SystemExit, match=r"^plot: 'gs://bucket/run': gs:// paths need the gcsfs "):
    plot.main(["--workdir", RUN])
  with pytest.raises(paths.UnsupportedPath, match="s3:// paths are not supported"):
    checkpoint.find_checkpoint("s3://bucket/run")
