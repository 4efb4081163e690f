"""Training: one loop for every task, and the registry `launch` looks tasks up in.

A task is one module with its state, its jitted step and its metrics (a
`loop.Task` subclass); adding one is that module and a line in TASKS.
"""

import ml_collections

from agz_jax.training import (agz, loop, optim, rl_policy, rollout_policy, sl_dual, sl_policy,
                              supervised, value)
from agz_jax.training.loop import Task

TASKS: dict[str, type[Task]] = {
    "selfplay": agz.AlphaZeroTask,
    "sl_policy": sl_policy.SLPolicyTask,
    "sl_dual": sl_dual.SLDualTask,
    "rollout_policy": rollout_policy.FastPolicyTask,
    "rl_policy": rl_policy.RLPolicyTask,
    "value": value.ValueTask,
}


def make_task(config: ml_collections.ConfigDict) -> Task:
  """The task `config.task` names, built from the config."""
  if config.task not in TASKS:
    raise ValueError(f"config.task must be one of {', '.join(TASKS)}, got {config.task!r}")
  return TASKS[config.task](config)


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str, *,
                       progress: loop.Progress | None = None, time_limit_s: float | None = None):
  """Trains the task `config.task` names, resuming from the newest good checkpoint in `workdir`.

  Args:
    config: the run's config.
    workdir: where checkpoints and metrics go (and are resumed from).
    progress: called as progress(step, total, lines) at every reported step
      instead of printing its progress lines (a notebook's progress bar).
    time_limit_s: stop after the step that runs past this many seconds
      (compiling included), reported, evaluated and saved as the last one.

  Returns:
    The final training state.
  """
  return loop.run(make_task(config), config, workdir, progress=progress,
                  time_limit_s=time_limit_s)


__all__ = ["TASKS", "Task", "agz", "loop", "make_task", "optim", "rl_policy", "rollout_policy",
           "sl_dual", "sl_policy", "supervised", "train_and_evaluate", "value"]
