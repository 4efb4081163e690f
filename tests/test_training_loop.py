"""training.loop.run on a task of a few numbers: what the progress callback is given."""

import jax
import jax.numpy as jnp
import ml_collections
from flax import struct

from agz_jax.training import loop


@struct.dataclass
class _State:
  params: dict  # {'w': [3] float32}, one more every step
  batch_stats: dict  # {'m': [1] float32}, unused


class _Counting(loop.Task):
  """Five steps; steps 2 and 4 (and the last, which saves) are reported."""

  def __init__(self, config):
    super().__init__(config)
    self.total = 5
    self.items_per_unit = 10
    device = jax.devices()[0]
    self.abstract_state = jax.tree.map(
        lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype,
                                       sharding=jax.sharding.SingleDeviceSharding(device)),
        jax.eval_shape(self.init, 0))

  def init(self, seed):
    return _State({"w": jnp.zeros(3)}, {"m": jnp.zeros(1)})

  def step(self, state, i):
    return state.replace(params={"w": state.params["w"] + 1}), {"loss": jnp.float32(1.0 / i)}

  def reporting(self, i):
    return i % 2 == 0

  def lines(self, i, metrics, seconds, eta, compiling):
    return [f"step {i}/{self.total}", f"  loss {metrics['loss']:.2f}"]


def _config():
  config = ml_collections.ConfigDict()
  config.seed = 0
  config.checkpoint = ml_collections.ConfigDict({"every": 100, "keep": 1})
  return config


def test_progress_gets_each_reported_steps_lines_instead_of_stdout(tmp_path, capsys):
  calls = []
  state = loop.run(_Counting(_config()), _config(), str(tmp_path),
                   progress=lambda step, total, lines: calls.append((step, total, lines)))
  assert calls == [(2, 5, ["step 2/5", "  loss 0.50"]), (4, 5, ["step 4/5", "  loss 0.25"]),
                   (5, 5, ["step 5/5", "  loss 0.20"])]
  assert "step" not in capsys.readouterr().out
  assert float(state.params["w"][0]) == 5.0
  # Without a callback the same lines are printed, here by a run resumed from step 5 to 7.
  task = _Counting(_config())
  task.total = 7
  loop.run(task, _config(), str(tmp_path))
  out = capsys.readouterr().out.splitlines()
  assert out == ["resumed from the checkpoint of step 5", "step 6/7", "  loss 0.17",
                 "step 7/7", "  loss 0.14"]


def test_the_eta_of_a_run_with_a_time_limit_ends_at_the_limit():
  import time  # pylint: disable=import-outside-toplevel
  clock = loop._Clock(0)  # pylint: disable=protected-access
  clock.recent = [2.0] * 5
  assert clock.eta(10, 1010) == 2000.0                       # no limit: the steps left
  soon = time.perf_counter() + 60.0
  assert 60.0 <= clock.eta(10, 1010, soon) <= 62.0           # the limit, plus the last step
  assert clock.eta(1005, 1010, soon) == 10.0                 # the steps end first
  assert clock.eta(10, 1010, time.perf_counter() - 5.0) == 2.0  # past the limit: one step
