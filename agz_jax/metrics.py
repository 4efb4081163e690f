"""What the user sees of training: a progress line, TensorBoard events, a JSONL log.

Only process 0 writes. `metrics.jsonl` in the workdir (one JSON object per
logged iteration) is what `python -m agz_jax.plot` reads.
"""

import json
import math
import os
import time

import jax


class NonFiniteLossError(RuntimeError):
  pass


def check_finite(metrics: dict, iteration: int) -> None:
  """Stops training on a NaN or infinite loss, naming the loss and the iteration."""
  for name, value in metrics.items():
    if name.startswith("loss") and not math.isfinite(float(value)):
      raise NonFiniteLossError(
          f"iteration {iteration}: {name} is {value}; training stopped. Lower the learning rate "
          f"or check the data; the last checkpoint is intact.")


class MetricWriter:
  """Writes scalars to TensorBoard event files and metrics.jsonl (process 0 only)."""

  def __init__(self, workdir: str):
    self.active = jax.process_index() == 0
    self._tb = None
    self._jsonl = None
    if self.active:
      os.makedirs(workdir, exist_ok=True)
      from tensorboardX import SummaryWriter  # pylint: disable=import-outside-toplevel
      self._tb = SummaryWriter(os.path.join(workdir, "tensorboard"))
      self._jsonl = open(os.path.join(workdir, "metrics.jsonl"), "a", encoding="utf-8")

  def write(self, step: int, scalars: dict) -> None:
    if not self.active:
      return
    for name, value in scalars.items():
      self._tb.add_scalar(name, float(value), step)
    row = {"iteration": int(step), "time": time.time()}
    row.update({k: float(v) for k, v in scalars.items()})
    self._jsonl.write(json.dumps(row) + "\n")
    self._jsonl.flush()

  def close(self) -> None:
    if self.active:
      self._tb.close()
      self._jsonl.close()


def format_eta(seconds: float) -> str:
  """1h05m or 4m07s."""
  hours, rest = divmod(int(seconds), 3600)
  return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s"


def progress_line(iteration: int, total: int, m: dict, seconds: float, eta: float, *,
                  min_ready: int, compiled: bool) -> str:
  """One readable line per iteration.

  Args:
    iteration: the iteration just done; total: the last one.
    m: its metrics (without losses while the buffer is still filling).
    seconds: its wall time; eta: seconds left.
    min_ready: positions needed before training starts.
    compiled: this iteration included compilation (its speed is not typical).
  """
  eta_text = format_eta(eta)
  if "loss_policy" in m:
    losses = (f"loss p {m['loss_policy']:.3f} v {m['loss_value']:.3f} l2 {m['loss_l2']:.4f} "
              f"H {m['policy_entropy']:.2f}")
  else:
    losses = f"filling buffer {int(m['buffer_ready'])}/{min_ready}"
  speed = "compiling" if compiled else f"{m['positions_per_s']:,.0f} pos/s"
  return (f"it {iteration}/{total} | {speed} | games {int(m['games'])} "
          f"len {m['game_length']:.0f} B-win {m['black_win_rate']:.2f} | {losses} | "
          f"{seconds:.1f}s/it ETA {eta_text}")


def log(text: str) -> None:
  """Prints a progress line on process 0 only."""
  if jax.process_index() == 0:
    print(text, flush=True)
