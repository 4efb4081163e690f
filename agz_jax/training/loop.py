"""The training loop every task shares, and the Task interface it drives.

`run(task, config, workdir)` restores the newest good checkpoint of the
workdir (or initialises and, for tasks that keep it, saves step 0), then runs
the task's jitted step until `task.total` (or, with a time limit, the step
that runs past it, which then counts as the last): metrics go to TensorBoard and
metrics.jsonl with a progress line and ETA, checkpoints are saved every
`checkpoint.every` steps, at the end and on SIGTERM (every host stops at the
same step), and a NaN or infinite loss stops the run with the last checkpoint
intact. The workdir is a local folder or a bucket's URL (gs://, see
agz_jax.paths).
"""

import time
from typing import Callable

import jax
import ml_collections
import numpy as np

from agz_jax import checkpoint, parallel, paths
from agz_jax.metrics import MetricWriter, check_finite, log

# progress(step, total, lines): what a reported step shows, instead of printing it.
Progress = Callable[[int, int, list[str]], None]


class Task:
  """One kind of training run: its state, its jitted step and what it reports.

  A task module defines a subclass and registers it in `agz_jax.training.TASKS`.

  Attributes:
    unit: what one step is called in messages ("iteration", "step").
    keep_steps: checkpoints kept for ever (besides the last `checkpoint.keep`).
    save_initial: a fresh run saves its untrained state as checkpoint 0.
    total: the last step of the run.
    items_per_unit: positions per step, for the positions/s figure.
    abstract_state: the state's shapes, dtypes and shardings (for restoring).
  """

  unit = "step"
  keep_steps: tuple[int, ...] = ()
  save_initial = False

  def __init__(self, config: ml_collections.ConfigDict):
    self.config = config
    self.total = 0
    self.items_per_unit = 0
    self.abstract_state = None

  def init(self, seed: int):
    """A fresh, sharded state."""
    raise NotImplementedError

  def begin(self, workdir: str, start: int) -> None:
    """Called once before the first step (`start`: the step restored, 0 for a fresh run)."""

  def step(self, state, i: int):
    """Runs step `i`; returns (state, dict of [] device arrays)."""
    raise NotImplementedError

  def reporting(self, i: int) -> bool:
    """Whether step `i`'s metrics are fetched, written and shown."""
    del i
    return True

  def report(self, i: int, state, metrics: dict) -> tuple[object, dict]:
    """Adds what the task measures at a reported step (evaluations); returns (state, metrics)."""
    del i
    return state, metrics

  def lines(self, i: int, metrics: dict, seconds: float, eta: float, compiling: bool) -> list[str]:
    """The progress lines of a reported step (`seconds`: per step)."""
    raise NotImplementedError

  def end(self) -> None:
    """Called once when the run stops, however it stops."""


def run(task: Task, config: ml_collections.ConfigDict, workdir: str, *,
        progress: Progress | None = None, time_limit_s: float | None = None):
  """Trains `task` from its config, resuming from the latest good checkpoint in `workdir`.

  Args:
    task: what to train.
    config: the run's config.
    workdir: a local folder or a URL (gs://bucket/run) for checkpoints, metrics and samples.
    progress: called as progress(step, total, lines) at every reported step,
      with that step's progress lines, instead of printing them (a notebook's
      progress bar); None prints them.
    time_limit_s: seconds from the call (compiling included) after which the
      step running becomes the last: it is reported, evaluated and saved as the
      run's last step (`task.total` is set to it). Every host stops at the same
      step. None: run to `task.total`.

  Returns:
    The final state.
  """
  deadline = None if time_limit_s is None else time.perf_counter() + time_limit_s
  paths.makedirs(workdir)
  ckpt = checkpoint.Checkpointer(workdir, keep=config.checkpoint.keep, keep_steps=task.keep_steps)
  try:
    state, start = ckpt.restore_latest(task.abstract_state, config)
  except checkpoint.CheckpointMismatch:
    ckpt.close()  # nothing of this run is touched: another run's checkpoints stay as they are
    raise
  if state is None:
    state, start = task.init(config.seed), 0
    if task.save_initial:
      ckpt.save(0, state, config)
  else:
    log(f"resumed from the checkpoint of {task.unit} {start}")
  writer = MetricWriter(workdir)
  preemption = checkpoint.Preemption()
  clock = _Clock(start)
  try:
    task.begin(workdir, start)
    for i in range(start + 1, task.total + 1):
      state, metrics = task.step(state, i)
      if (deadline is not None and i < task.total
          and parallel.any_process(time.perf_counter() > deadline)):
        task.total = i
        log(f"time limit of {time_limit_s:g} s reached: {task.unit} {i} is the last")
      saving = i % config.checkpoint.every == 0 or i == task.total
      if i == start + 1:
        jax.block_until_ready(state)  # the first step compiles: not counted in speeds
      reported = task.reporting(i) or saving
      if reported:
        metrics = {k: float(v) for k, v in parallel.to_host(metrics).items()}
        check_finite(metrics, i)
        seconds, compiling = clock.per_step(i)
        metrics["positions_per_s"] = task.items_per_unit / max(seconds, 1e-9)
        metrics[f"seconds_per_{task.unit}"] = seconds
        state, metrics = task.report(i, state, metrics)
        writer.write(i, metrics)
        lines = task.lines(i, metrics, seconds, clock.eta(i, task.total, deadline), compiling)
        if progress is None:
          for line in lines:
            log(line)
        elif jax.process_index() == 0:
          progress(i, task.total, lines)
      stop = checkpoint.save_if_due(ckpt, preemption, i, state, config, due=saving, unit=task.unit)
      if saving:
        writer.flush()  # a bucket's metrics reach at least as far as its checkpoints
      if stop:
        break
      if reported or i == start + 1:
        clock.mark(i)
      if i == task.total:  # the time limit made this step the last
        break
  finally:
    task.end()
    ckpt.close()
    writer.close()
    preemption.restore()
  return state


class _Clock:
  """Seconds per step between reports; the ETA from the median of the recent ones."""

  def __init__(self, start: int):
    self.start = start
    self.last_step, self.last_time = start, time.perf_counter()
    self.recent = []

  def per_step(self, i: int) -> tuple[float, bool]:
    """(seconds per step since the last mark, whether these steps include compiling)."""
    seconds = (time.perf_counter() - self.last_time) / max(i - self.last_step, 1)
    compiling = self.last_step == self.start
    if not compiling:
      self.recent = (self.recent + [seconds])[-5:]
    return seconds, compiling

  def mark(self, i: int) -> None:
    """Steps after `i` are timed anew (called after the first, compiling step and each report)."""
    self.last_step, self.last_time = i, time.perf_counter()

  def eta(self, i: int, total: int, deadline: float | None = None) -> float:
    """Seconds left: the steps left at the recent pace, at most until the time limit's
    `deadline` (a time.perf_counter() value; the step running then is the last)."""
    per_step = np.median(self.recent) if self.recent else 0.0
    left = float(per_step * (total - i))
    if deadline is not None:
      left = min(left, max(deadline - time.perf_counter(), 0.0) + per_step)
    return left
