"""Data parallelism: 8 devices give the 1-device result, and two processes train as one.

The number of fake CPU devices is fixed by XLA_FLAGS when JAX starts, so every
run is a subprocess (tests/parallel_worker.py, which saves what it computed to
an .npz). The 8-device run is the reference for the 1-device run (AlphaZeroTask
directly) and for two processes of 4 devices each (the real entry point,
`agz_jax.launch --coordinator_address ... --num_processes 2 --process_id i`).
"""

import json
import os
import re
import socket
import subprocess
import sys
import time

import jax
import numpy as np
import pytest

from agz_jax import checkpoint

import helpers

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKER = os.path.join(REPO, "tests", "parallel_worker.py")

# Games end after 3 moves, so every iteration (4 moves) has finished games in
# the replay buffer and both iterations train.
TINY = {
    "game.size": 5, "game.max_moves": 3, "model.blocks": 1, "model.channels": 8,
    "model.value_hidden": 16, "search.num_simulations": 4,
    "search.max_num_considered_actions": 4, "selfplay.num_games": 16,
    "selfplay.steps_per_iteration": 4, "replay.rows_per_game": 8, "replay.min_ready": 16,
    "train.batch_size": 16, "train.updates_per_iteration": 2, "eval.every": 0,
}
GAMES = TINY["selfplay.num_games"]
# Same layout, different order of floating-point sums (all-reduce over 8 devices).
PARAMS_TOL = dict(rtol=1e-5, atol=1e-5)
METRICS_TOL = dict(rtol=1e-4, atol=1e-6)
POLICY_TOL = dict(atol=1e-4)  # search policies amplify the parameters' rounding differences
GAME_ARRAYS = ("boards", "buffer_planes", "buffer_status", "buffer_value_target")


def _env(devices: int) -> dict:
  env = dict(os.environ)
  env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
  env["JAX_PLATFORMS"] = "cpu"
  env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
  return env


def _read(path, last=4000) -> str:
  """A log file without absl INFO lines (orbax writes many), its last `last` characters."""
  with open(path, encoding="utf-8", errors="replace") as f:
    text = "".join(line for line in f if not re.match(r"I\d{4} ", line))
  return text if last is None else text[-last:]


def _run_together(commands, devices: int, logdir, timeout: float) -> list[str]:
  """Runs commands at once, all to succeed within `timeout` seconds; returns their stdout.

  Output goes to files (a full pipe would stall a process). When one process
  fails or time runs out, the others are killed and every log is shown.
  """
  procs, logs = [], []
  for i, command in enumerate(commands):
    out, err = os.path.join(logdir, f"stdout{i}"), os.path.join(logdir, f"stderr{i}")
    logs.append((out, err))
    with open(out, "w") as o, open(err, "w") as e:
      procs.append(subprocess.Popen(command, cwd=REPO, env=_env(devices), stdout=o, stderr=e))
  deadline = time.monotonic() + timeout
  while (time.monotonic() < deadline and any(p.poll() is None for p in procs)
         and not any(p.poll() for p in procs)):
    time.sleep(0.5)
  timed_out = any(p.poll() is None for p in procs) and not any(p.poll() for p in procs)
  for proc in procs:
    if proc.poll() is None:
      proc.kill()
      proc.wait()
  if timed_out or any(p.returncode for p in procs):
    report = [f"timed out after {timeout:.0f}s:" if timed_out else "failed:"]
    for i, (proc, (out, err)) in enumerate(zip(procs, logs)):
      report.append(f"--- process {i} (rc {proc.returncode}) stdout:\n{_read(out)}\n"
                    f"--- process {i} stderr:\n{_read(err)}")
    pytest.fail("\n".join(report), pytrace=False)
  return [_read(out, last=None) for out, _ in logs]


def _free_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def _params(run: dict, prefix: str) -> list[np.ndarray]:
  count = len([k for k in run if k.startswith(prefix + "/params/")])
  assert count > 0
  return [run[f"{prefix}/params/{i}"] for i in range(count)]


def _assert_params_close(actual, expected, what):
  assert len(actual) == len(expected)
  for i, (a, e) in enumerate(zip(actual, expected)):
    np.testing.assert_allclose(a, e, **PARAMS_TOL, err_msg=f"{what}: parameter leaf {i}")


def _load(path) -> dict:
  with np.load(path) as z:
    return dict(z)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict:
  """Two AlphaZeroTask iterations on a 1-device mesh and on an 8-device mesh, one process."""
  tmp = tmp_path_factory.mktemp("reference")
  out = tmp / "trainer.npz"
  _run_together([[sys.executable, WORKER, "trainer", str(out), json.dumps(TINY)]], 8, tmp,
                timeout=300)
  return _load(out)


def test_state_is_split_over_eight_devices(reference):
  assert reference["device_count"] == 8
  for it in (0, 1, 2):
    assert reference[f"d8/it{it}/board_devices"] == 8
    assert not reference[f"d8/it{it}/board_replicated"]
    assert reference[f"d8/it{it}/board_shard_rows"] == GAMES // 8
    assert reference[f"d8/it{it}/params_devices"] == 8
    assert reference[f"d8/it{it}/params_replicated"]
    assert reference[f"d1/it{it}/board_devices"] == 1


def test_self_play_needs_no_communication_between_devices(reference):
  """Each device plays its own games (shard_map): no collective inside any loop of the compiled
  iteration; the gradients' all-reduce stays at its top level (the updates are unrolled on CPU)."""
  assert reference["d8/loop_collectives"] == 0


def test_eight_devices_match_one_device(reference):
  r = reference
  for it in (1, 2):
    assert r[f"d8/it{it}/metrics/trained"] == 1 and r[f"d1/it{it}/metrics/trained"] == 1
    assert r[f"d8/it{it}/metrics/games"] > 0
  start = _params(r, "d1/it0")
  for a, b in zip(start, _params(r, "d8/it0")):
    np.testing.assert_array_equal(a, b)  # the same initialization
  moved = max(np.max(np.abs(a - b)) for a, b in zip(start, _params(r, "d1/it2")))
  assert moved > 1e-2, "training did not change the parameters; the comparison would be empty"

  for it in (1, 2):
    _assert_params_close(_params(r, f"d8/it{it}"), _params(r, f"d1/it{it}"), f"iteration {it}")
    for name in GAME_ARRAYS:
      np.testing.assert_array_equal(r[f"d8/it{it}/{name}"], r[f"d1/it{it}/{name}"],
                                    err_msg=f"iteration {it}: {name}")
    np.testing.assert_allclose(r[f"d8/it{it}/buffer_policy"], r[f"d1/it{it}/buffer_policy"],
                               **POLICY_TOL)
    names = sorted(k for k in r if k.startswith(f"d1/it{it}/metrics/"))
    assert names == sorted(k.replace("d8/", "d1/") for k in r
                           if k.startswith(f"d8/it{it}/metrics/"))
    for name in names:
      np.testing.assert_allclose(r[name.replace("d1/", "d8/")], r[name], **METRICS_TOL,
                                 err_msg=name)


def _launch_flags(workdir, iterations: int, process_id: int, port: int) -> list[str]:
  flags = [f"--config.{k}={v}" for k, v in TINY.items()]
  return ["--config", "configs/default.py", "--workdir", str(workdir),
          f"--config.iterations={iterations}", *flags,
          "--coordinator_address", f"127.0.0.1:{port}", "--num_processes", "2",
          "--process_id", str(process_id)]


def _two_processes(tmp_path, iterations: int, sigterm_after=(0, 0), timeout=240):
  """Runs agz_jax.launch as two processes of 4 CPU devices; returns their dumps and stdout."""
  workdir, port = tmp_path / "run", _free_port()
  commands = [[sys.executable, WORKER, "launch", str(tmp_path / f"process{i}.npz"),
               f"--sigterm_after={sigterm_after[i]}", "--",
               *_launch_flags(workdir, iterations, i, port)] for i in (0, 1)]
  stdout = _run_together(commands, 4, tmp_path, timeout=timeout)
  runs = [_load(tmp_path / f"process{i}.npz") for i in (0, 1)]
  for i, run in enumerate(runs):
    assert run["process_index"] == i and run["process_count"] == 2
    assert run["device_count"] == 8 and run["local_device_count"] == 4
    assert run["final/board_devices"] == 8 and not run["final/board_replicated"]
    assert run["final/params_devices"] == 8 and run["final/params_replicated"]
    np.testing.assert_array_equal(run["final/slots"], np.arange(i * GAMES // 2,
                                                                (i + 1) * GAMES // 2))
  return runs, stdout, workdir


def _assert_processes_agree_with(runs, reference, it: int):
  """Both replicas of the parameters are identical and match the 1-process 8-device run."""
  for a, b in zip(_params(runs[0], "final"), _params(runs[1], "final")):
    np.testing.assert_array_equal(a, b)
  _assert_params_close(_params(runs[0], "final"), _params(reference, f"d8/it{it}"),
                       "two processes against one")
  for name in GAME_ARRAYS:
    joined = np.concatenate([run[f"final/{name}"] for run in runs])
    np.testing.assert_array_equal(joined, reference[f"d8/it{it}/{name}"], err_msg=name)
  joined = np.concatenate([run["final/buffer_policy"] for run in runs])
  np.testing.assert_allclose(joined, reference[f"d8/it{it}/buffer_policy"], **POLICY_TOL)


def _restore_numpy(path) -> dict:
  return checkpoint.restore_numpy(path)


def test_two_processes_train_as_one(tmp_path, reference):
  runs, stdout, workdir = _two_processes(tmp_path, iterations=2)
  assert [int(run["iteration"]) for run in runs] == [2, 2]
  _assert_processes_agree_with(runs, reference, it=2)

  # Only process 0 reports; its metrics are those of the 8-device run.
  assert [l.split()[1] for l in stdout[0].splitlines() if l.startswith("it ")] == ["1/2", "2/2"]
  assert not [l for l in stdout[1].splitlines() if l.startswith("it ")]
  with open(workdir / "metrics.jsonl", encoding="utf-8") as f:
    rows = [json.loads(line) for line in f]
  assert [row["iteration"] for row in rows] == [1, 2]
  for row, it in zip(rows, (1, 2)):
    for key in (k for k in reference if k.startswith(f"d8/it{it}/metrics/")):
      np.testing.assert_allclose(row[key.rsplit("/", 1)[1]], reference[key], **METRICS_TOL,
                                 err_msg=key)

  # Both processes wrote their halves of one checkpoint.
  assert sorted(os.listdir(workdir / "checkpoints")) == ["0", "2"]
  saved = _restore_numpy(str(workdir / "checkpoints" / "2" / "state"))
  assert int(saved["iteration"]) == 2
  for a, b in zip(jax.tree.leaves(saved["params"]), _params(runs[0], "final")):
    np.testing.assert_array_equal(a, b)
  joined = np.concatenate([run["final/boards"] for run in runs])
  np.testing.assert_array_equal(saved["games"]["states"]["board"], joined)
  # A player on one device loads the network the 8 devices saved.
  _, variables = checkpoint.load_network(str(workdir))
  for a, b in zip(jax.tree.leaves(variables["params"]), _params(runs[0], "final")):
    np.testing.assert_array_equal(a, b)


def test_sigterm_on_one_process_stops_every_process(tmp_path, reference):
  """A preemption notice reaching one host stops all of them at the same iteration.

  Process 1 alone gets SIGTERM after its second iteration (of 5). If the
  processes disagree about stopping, process 1 waits in the checkpoint save
  while process 0 waits in the third iteration's collectives: a deadlock. The
  processes may agree to stop after iteration 2 or a little later.
  """
  runs, stdout, workdir = _two_processes(tmp_path, iterations=5, sigterm_after=(0, 2))
  stopped = int(runs[0]["iteration"])
  assert int(runs[1]["iteration"]) == stopped and 2 <= stopped < 5
  if stopped == 2:
    _assert_processes_agree_with(runs, reference, it=2)
  else:
    for a, b in zip(_params(runs[0], "final"), _params(runs[1], "final")):
      np.testing.assert_array_equal(a, b)
  progress = [l.split()[1] for l in stdout[0].splitlines() if l.startswith("it ")]
  assert progress == [f"{it}/5" for it in range(1, stopped + 1)]
  assert sorted(os.listdir(workdir / "checkpoints"), key=int) == ["0", str(stopped)]


def test_cpu_devices_set_again_with_the_same_count_change_nothing():
  # A notebook cell that splits the CPU may run twice, after JAX has its devices.
  code = ("import jax; from agz_jax import parallel; parallel.use_cpu_devices(2); "
          "n = jax.device_count(); parallel.use_cpu_devices(2); print(n, jax.device_count())")
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  proc = subprocess.run([sys.executable, "-c", code], env=dict(env, JAX_PLATFORMS="cpu"),
                        capture_output=True, text=True, timeout=120)
  assert proc.returncode == 0, proc.stderr
  assert proc.stdout.split() == ["2", "2"]


def test_a_second_process_loads_what_the_first_compiled(tmp_path):
  # The GTP engine keeps its compiled search for the next start (--compile-cache).
  code = ("import sys, jax, jax.numpy as jnp; from agz_jax import parallel; "
          "parallel.use_compile_cache(sys.argv[1], min_compile_seconds=0); "
          "f = jax.jit(lambda x: jnp.cumsum(jnp.sin(x) * 3)); print(float(f(jnp.arange(7.0))[-1]))")
  cache = tmp_path / "cache"
  # Without the test session's cache settings (tests/conftest.py): JAX's defaults, as a user has.
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS" and not k.startswith(
      ("JAX_COMPILATION_CACHE", "JAX_PERSISTENT_CACHE"))}
  outputs = []
  for _ in range(2):
    proc = subprocess.run([sys.executable, "-c", code, str(cache)], capture_output=True, text=True,
                          env=dict(env, JAX_PLATFORMS="cpu", JAX_LOG_COMPILES="1"), timeout=120)
    assert proc.returncode == 0, proc.stderr
    outputs.append((proc.stdout, sorted(os.listdir(cache))))
  assert outputs[0][1] and outputs[0] == outputs[1]   # same result; the second wrote nothing new
  assert "Persistent compilation cache hit" in proc.stderr


def _random_games(folder, count=8, length=30):
  """Random legal 9x9 games, half of them dated in the validation range."""
  from agz_jax import data, go  # pylint: disable=import-outside-toplevel
  cfg, rng, games = go.GoConfig(size=9, max_moves=162), np.random.default_rng(5), []
  for i in range(count):
    state, moves = go.init(cfg), []
    for _ in range(length):
      action = int(rng.choice(np.flatnonzero(np.asarray(helpers.legal_moves(cfg, state))[:-1])))
      moves.append(action)
      state = go.play(cfg, [action], state)
    games.append(data.Game(setup_black=np.zeros(0, np.int16), setup_white=np.zeros(0, np.int16),
                           moves=np.asarray(moves, np.int16), first_player=1, komi=7.5,
                           winner=1, date="2016-01-01" if i % 2 else "2017-06-01"))
  data.save(data.from_games(9, games), folder)


SUPERVISED = {
    "sl_policy_cpu": {"model.layers": 2, "model.filters": 8, "model.encoding": "agz17",
                      "train.optimizer": "adam", "train.learning_rate": 0.01},
    "rollout_policy": {"model.num_3x3": 200, "model.num_response": 100,
                       "data.harvest_games": 4, "data.harvest_chunk": 4, "data.min_count": 1,
                       "train.learning_rate": 0.05},
}


@pytest.mark.parametrize("config_name", sorted(SUPERVISED))
def test_supervised_steps_on_two_devices_match_one_device(tmp_path, config_name):
  """Each device samples and replays its own half of the minibatch; the first device averages
  the halves' gradients (no collective: several CPU devices of one process) and the update equals
  that of one device on the whole minibatch."""
  _random_games(str(tmp_path / "games"))
  overrides = {"game.size": 9, "game.max_moves": 162, "data.dir": str(tmp_path / "games"),
               "data.val_from": "2017-01-01", "data.games_per_batch": 4,
               "data.positions_per_game": 4, "eval.num_positions": 16, **SUPERVISED[config_name]}
  out = tmp_path / "supervised.npz"
  _run_together([[sys.executable, WORKER, "supervised", str(out), config_name,
                  json.dumps(overrides)]], 2, tmp_path, timeout=300)
  r = _load(out)
  assert r["device_count"] == 2 and r["d2/params_devices"] == 2
  assert r["d2/params_replicas_equal"]
  assert r["d2/collectives"] == 0
  start = _params(r, "d1/it0")
  moved = max(np.max(np.abs(a - b)) for a, b in zip(start, _params(r, "d1/it2")))
  assert moved > 1e-3, "training did not change the parameters; the comparison would be empty"
  for it in (1, 2):
    _assert_params_close(_params(r, f"d2/it{it}"), _params(r, f"d1/it{it}"), f"step {it}")
    for name in ("loss_policy", "train_top1"):
      np.testing.assert_allclose(r[f"d2/it{it}/metrics/{name}"], r[f"d1/it{it}/metrics/{name}"],
                                 **METRICS_TOL)
