"""Training runs in a fresh process, for tests/test_parallel.py.

The number of (fake CPU) devices is fixed by XLA_FLAGS when JAX starts, so each
device layout needs its own process; the test sets XLA_FLAGS and runs:

  python tests/parallel_worker.py trainer OUT.npz OVERRIDES_JSON
      AlphaZeroTask(config).iteration twice on a 1-device and on an all-device mesh.
  python tests/parallel_worker.py supervised OUT.npz CONFIG_NAME OVERRIDES_JSON
      Two steps of a supervised task (configs/CONFIG_NAME.py) on a 1-device and
      on an all-device mesh.
  python tests/parallel_worker.py launch OUT.npz [--sigterm_after=K] -- LAUNCH_FLAGS...
      The real entry point (`agz_jax.launch`, multi-host flags included); the
      state train_and_evaluate returns is saved as this process sees it. With
      --sigterm_after=K the process sends itself SIGTERM after K iterations.

OUT.npz holds flat arrays named `<snapshot>/<what>`: the parameter leaves
(`params/<i>`, this process's replica), the self-play boards and replay buffer
rows of the game slots this process holds (`slots` gives their indices), the
metrics (trainer mode) and facts about the shardings.
"""

import json
import os
import re
import signal
import sys

import numpy as np


def _local_params(params) -> dict:
  """This process's replica of each parameter leaf (replicated over the mesh)."""
  import jax  # pylint: disable=import-outside-toplevel
  leaves = jax.tree.leaves(params)
  return {f"params/{i}": np.asarray(x.addressable_data(0)) for i, x in enumerate(leaves)}


def _local_slots(x) -> tuple[np.ndarray, np.ndarray]:
  """The game slots of `x` (split along its leading axis) that this process holds.

  Returns:
    (the rows held, in slot order; their global slot indices).
  """
  rows = {}
  for shard in x.addressable_shards:
    start = shard.index[0].start or 0
    for i, row in enumerate(np.asarray(shard.data)):
      rows.setdefault(start + i, row)  # a slot may sit on several devices
  slots = np.asarray(sorted(rows))
  return np.stack([rows[s] for s in slots]), slots


def _local_games(state) -> dict:
  """Self-play boards and the replay buffer's rows for the slots this process holds."""
  buffer = state.buffer
  out = {}
  for name, x in [("boards", state.games.states.board), ("buffer_planes", buffer.planes),
                  ("buffer_policy", buffer.policy), ("buffer_value_target", buffer.value_target),
                  ("buffer_status", buffer.status)]:
    out[name], out["slots"] = _local_slots(x)
  return out


def _layout(state) -> dict:
  import jax  # pylint: disable=import-outside-toplevel
  board, leaf = state.games.states.board, jax.tree.leaves(state.params)[0]
  return {
      "board_devices": np.int32(len(board.sharding.device_set)),
      "board_replicated": np.bool_(board.sharding.is_fully_replicated),
      "board_shard_rows": np.int32(board.addressable_shards[0].data.shape[0]),
      "params_devices": np.int32(len(leaf.sharding.device_set)),
      "params_replicated": np.bool_(leaf.sharding.is_fully_replicated),
  }


def _snapshot(prefix: str, state, metrics=None) -> dict:
  out = {**_local_params(state.params), **_local_games(state), **_layout(state)}
  if metrics is not None:
    out.update({f"metrics/{k}": np.asarray(v) for k, v in metrics.items()})
  return {f"{prefix}/{k}": v for k, v in out.items()}


def _collectives_in_loops(hlo_text: str) -> int:
  """Collective operations in the program's computations other than its entry (loop bodies,
  conditions, branches). On CPU the iteration's K updates are unrolled into the entry, so any
  collective left in a loop belongs to self-play."""
  ops = re.compile(r"\b(all-reduce|all-gather|all-to-all|collective-permute|reduce-scatter)"
                   r"(-start)?\(")
  blocks = re.split(r"\n(?=\S)", hlo_text)
  return sum(len(ops.findall(block)) for block in blocks if not block.startswith("ENTRY"))


def _collectives(hlo_text: str) -> int:
  return len(re.findall(r"\b(all-reduce|all-gather|all-to-all|collective-permute|reduce-scatter)"
                        r"(-start)?\(", hlo_text))


def run_trainer(out_path: str, overrides_json: str) -> None:
  """Two iterations of AlphaZeroTask on a 1-device mesh and on a mesh of every device."""
  import jax  # pylint: disable=import-outside-toplevel
  from agz_jax import parallel  # pylint: disable=import-outside-toplevel
  from agz_jax.training import agz  # pylint: disable=import-outside-toplevel
  from configs import default  # pylint: disable=import-outside-toplevel

  config = default.get_config()
  config.update_from_flattened_dict(json.loads(overrides_json))
  out = {"device_count": np.int32(jax.device_count())}
  for devices in (1, jax.device_count()):
    config.mesh.num_devices = devices
    trainer = agz.AlphaZeroTask(config)
    state = trainer.init(config.seed)
    out[f"d{devices}/loop_collectives"] = np.int32(_collectives_in_loops(
        trainer.iteration.lower(state).compile().as_text()))
    out.update(_snapshot(f"d{devices}/it0", state))
    for it in (1, 2):
      state, metrics, _ = trainer.iteration(state)
      out.update(_snapshot(f"d{devices}/it{it}", state, parallel.to_host(metrics)))
  np.savez(out_path, **out)


def run_supervised(out_path: str, config_name: str, overrides_json: str) -> None:
  """Two steps of a supervised task (sl_policy or rollout_policy) on 1 device and on all."""
  import importlib  # pylint: disable=import-outside-toplevel
  import jax  # pylint: disable=import-outside-toplevel
  from agz_jax import training  # pylint: disable=import-outside-toplevel

  config = importlib.import_module(f"configs.{config_name}").get_config()
  config.update_from_flattened_dict(json.loads(overrides_json))
  out = {"device_count": np.int32(jax.device_count())}
  for devices in (1, jax.device_count()):
    config.mesh.num_devices = devices
    task = training.TASKS[config.task](config)
    state = task.init(config.seed)
    task.begin(os.path.dirname(out_path), 0)
    out.update({f"d{devices}/it0/{k}": v for k, v in _local_params(state.params).items()})
    for it in (1, 2):
      state, metrics = task.step(state, it)
      out.update({f"d{devices}/it{it}/{k}": v for k, v in _local_params(state.params).items()})
      out.update({f"d{devices}/it{it}/metrics/{k}": np.asarray(v) for k, v in metrics.items()})
    leaf = jax.tree.leaves(state.params)[0]
    out[f"d{devices}/params_replicas_equal"] = np.bool_(all(
        np.array_equal(np.asarray(s.data), np.asarray(leaf.addressable_shards[0].data))
        for s in leaf.addressable_shards))
    out[f"d{devices}/params_devices"] = np.int32(len(leaf.sharding.device_set))
    out[f"d{devices}/collectives"] = np.int32(sum(
        _collectives(text) for text in task.train.programs(state, *task.step_inputs())))
  np.savez(out_path, **out)


def run_launch(out_path: str, launch_argv: list[str], sigterm_after: int = 0) -> None:
  """The real entry point, with its final state saved as this process holds it.

  Args:
    out_path: where the .npz goes.
    launch_argv: flags of agz_jax.launch.
    sigterm_after: if positive, this process sends itself SIGTERM once its
      task has run this many iterations (a preemption notice that reaches
      one host only).
  """
  from agz_jax import launch, training  # pylint: disable=import-outside-toplevel

  train_and_evaluate = training.train_and_evaluate

  def train_and_save(config, workdir, **options):
    import jax  # pylint: disable=import-outside-toplevel
    state = train_and_evaluate(config, workdir, **options)
    np.savez(out_path, process_index=np.int32(jax.process_index()),
             process_count=np.int32(jax.process_count()),
             device_count=np.int32(jax.device_count()),
             local_device_count=np.int32(jax.local_device_count()),
             iteration=np.asarray(state.iteration.addressable_data(0)),
             **_snapshot("final", state))
    return state

  class TaskThenSigterm(training.TASKS["selfplay"]):

    def __init__(self, config):
      super().__init__(config)
      iteration, done = self.iteration, []

      def iteration_then_sigterm(state):
        out = iteration(state)
        done.append(True)
        if len(done) == sigterm_after:
          os.kill(os.getpid(), signal.SIGTERM)
        return out

      self.iteration = iteration_then_sigterm

  training.train_and_evaluate = train_and_save
  if sigterm_after > 0:
    training.TASKS["selfplay"] = TaskThenSigterm
  sys.argv = ["agz_jax.launch", *launch_argv]
  launch.run()


if __name__ == "__main__":
  sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # configs
  mode, path, *rest = sys.argv[1:]
  if mode == "trainer":
    run_trainer(path, *rest)
  elif mode == "supervised":
    run_supervised(path, *rest)
  elif mode == "launch":
    split = rest.index("--")
    options = dict(arg.lstrip("-").split("=", 1) for arg in rest[:split])
    run_launch(path, rest[split + 1:], sigterm_after=int(options.get("sigterm_after", 0)))
  else:
    sys.exit(f"unknown mode {mode!r}")
