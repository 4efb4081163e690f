"""What the user sees of training: a progress line, TensorBoard events, a JSONL log.

Only process 0 writes. `metrics.jsonl` in the workdir (one JSON object per
logged iteration) is what `python -m agz_jax.plot` reads; the workdir may be
a bucket (gs://), see MetricWriter.
"""

import json
import math
import os
import shutil
import tempfile
import time

import jax

from agz_jax import paths

_JSONL = "metrics.jsonl"
_TENSORBOARD = "tensorboard"


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
  """Writes scalars to TensorBoard event files and metrics.jsonl (process 0 only).

  In a local workdir both files grow in place as rows are written. Objects in a
  bucket (a gs:// workdir) cannot be appended to: there both files grow in a
  local staging folder and `flush` uploads them whole, each upload replacing
  the bucket's copy. The training loop flushes at each checkpoint; `write`
  also flushes once `upload_seconds` have passed since the last upload, and
  `close` flushes last. A run killed between uploads loses only rows of steps
  after its last checkpoint, which the resumed run does and logs again (and
  leaves its staging folder in the temporary directory); a resumed run's
  metrics.jsonl starts from the bucket's.
  """

  def __init__(self, workdir: str, *, upload_seconds: float = 60.0):
    self.active = jax.process_index() == 0
    self.upload_seconds = upload_seconds
    self._tb = None
    self._jsonl = None
    self._remote = None  # a URL workdir: the files grow in self._local and are uploaded there
    if self.active:
      local = workdir
      if paths.is_remote(workdir):
        self._remote = paths.path(workdir)
        local = tempfile.mkdtemp(prefix="agz_jax_metrics_")
        saved = self._remote / _JSONL
        if saved.exists():
          with open(os.path.join(local, _JSONL), "wb") as f:
            f.write(saved.read_bytes())
      os.makedirs(local, exist_ok=True)
      from tensorboardX import SummaryWriter  # pylint: disable=import-outside-toplevel
      self._local = local
      self._tb = SummaryWriter(os.path.join(local, _TENSORBOARD))
      self._jsonl = open(os.path.join(local, _JSONL), "a", encoding="utf-8")
      self._uploaded = time.monotonic()

  def write(self, step: int, scalars: dict) -> None:
    if not self.active:
      return
    for name, value in scalars.items():
      self._tb.add_scalar(name, float(value), step)
    row = {"iteration": int(step), "time": time.time()}
    row.update({k: float(v) for k, v in scalars.items()})
    self._jsonl.write(json.dumps(row) + "\n")
    self._jsonl.flush()
    if time.monotonic() - self._uploaded >= self.upload_seconds:
      self.flush()

  def flush(self) -> None:
    """Uploads both files to a remote workdir (a local one is always up to date)."""
    if self.active and self._remote is not None:
      self._tb.flush()
      self._upload()

  def close(self) -> None:
    if self.active:
      self._tb.close()
      self._jsonl.close()
      if self._remote is not None:
        self._upload()
        shutil.rmtree(self._local)

  def _upload(self) -> None:
    events = os.path.join(self._local, _TENSORBOARD)
    names = [_JSONL] + [os.path.join(_TENSORBOARD, f) for f in sorted(os.listdir(events))]
    for name in names:
      with open(os.path.join(self._local, name), "rb") as f:
        (self._remote / name).write_bytes(f.read())
    self._uploaded = time.monotonic()


def format_eta(seconds: float) -> str:
  """1h05m or 4m07s."""
  hours, rest = divmod(int(seconds), 3600)
  return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s"


# KataGo's auxiliary losses and their short names in the progress line.
_AUX_LOSSES = (("loss_ownership", "own"), ("loss_score", "score"),
               ("loss_opponent_policy", "opp"))


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
    extra = [f"{short} {m[key]:.3f}" for key, short in _AUX_LOSSES if key in m]
    if extra:
      losses += " | aux " + " ".join(extra)
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
