"""What the AlphaGo Zero update must keep doing: its loss, its augmentation, when it trains,
how often the fused iteration compiles, and which network plays with gating.

The loss and the augmentation are checked against numpy written here. The rest runs one tiny
AlphaZeroTask (5x5, games of exactly 10 moves) once per module: its iterations, a checkpoint round
trip and the runs after it are recorded by one fixture, so the iteration compiles once.
"""

import logging
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import checkpoint, go, replay
from agz_jax.game import Game
from agz_jax.training import agz
from agz_jax.nets import AlphaZeroNet

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from configs import default  # noqa: E402  pylint: disable=wrong-import-position

N = 5
A = N * N + 1

# --------------------------------------------------------------------------- the loss


@pytest.fixture(scope="module")
def net():
  model = AlphaZeroNet(blocks=1, channels=4, value_hidden=8)
  variables = model.init(jax.random.PRNGKey(0), jnp.zeros((1, N, N, 5)), train=False)
  return model, variables["params"], variables["batch_stats"]


def sample(planes, policy, value_target, weight, **targets):
  """A replay.Sample of these AlphaGo Zero targets; KataGo's absent unless given."""
  m = planes.shape[0]
  fields = dict(policy_weight=np.ones(m, np.float32), ownership=None,
                score=np.zeros(m, np.float32), final_weight=np.zeros(m, np.float32),
                opponent_policy=np.zeros_like(policy), opponent_weight=np.zeros(m, np.float32))
  fields.update(targets)
  return replay.Sample(planes=planes, policy=policy, value_target=value_target, weight=weight,
                       **fields)


@pytest.fixture(scope="module")
def loss(net):
  model = net[0]
  fn = jax.jit(lambda c, params, stats, batch: agz.loss_fn(model, agz.LossWeights(c), params,
                                                           stats, batch), static_argnums=0)
  return lambda c, params, stats, *arrays: fn(float(c), params, stats, sample(*arrays))


def _batch(seed, m=6):
  rng = np.random.default_rng(seed)
  planes = rng.integers(0, 2, (m, N, N, 5)).astype(np.float32)
  policy = rng.dirichlet(np.ones(A), m).astype(np.float32)
  value_target = rng.choice([-1.0, 1.0], m).astype(np.float32)
  return planes, policy, value_target


def test_loss_is_the_weighted_agz_loss(net, loss):
  model, params, batch_stats = net
  planes, policy, z = _batch(0)
  weight = np.array([1, 1, 0, 1, 0, 1], np.float32)
  c = 0.05
  total, (aux, new_stats) = loss(jnp.float32(c), params, batch_stats, planes, policy, z, weight)
  # The network's outputs in training mode (BatchNorm on the batch), the rest in float64 numpy.
  logits, v = model.apply({"params": params, "batch_stats": batch_stats}, planes, train=True,
                          mutable=["batch_stats"])[0]
  logits, v = np.asarray(logits, np.float64), np.asarray(v, np.float64)
  log_p = logits - logits.max(-1, keepdims=True)
  log_p -= np.log(np.exp(log_p).sum(-1, keepdims=True))
  w = weight.astype(np.float64)
  value_loss = np.sum(w * (z - v) ** 2) / w.sum()
  policy_loss = np.sum(w * -np.sum(policy * log_p, -1)) / w.sum()
  l2 = c * sum(np.sum(np.asarray(p, np.float64) ** 2) for p in jax.tree.leaves(params))
  np.testing.assert_allclose(float(aux["loss_value"]), value_loss, rtol=1e-5)
  np.testing.assert_allclose(float(aux["loss_policy"]), policy_loss, rtol=1e-5)
  np.testing.assert_allclose(float(aux["loss_l2"]), l2, rtol=1e-5)
  np.testing.assert_allclose(float(total), value_loss + policy_loss + l2, rtol=1e-5)
  # BatchNorm's running statistics come back updated.
  assert jax.tree.structure(new_stats) == jax.tree.structure(batch_stats)
  assert any(not np.allclose(a, b) for a, b in
             zip(jax.tree.leaves(new_stats), jax.tree.leaves(batch_stats), strict=True))


def test_samples_of_weight_zero_do_not_count(net, loss):
  _, params, batch_stats = net
  planes, policy, z = _batch(1)
  weight = np.array([1, 0, 1, 0, 1, 1], np.float32)
  base = loss(jnp.float32(1e-4), params, batch_stats, planes, policy, z, weight)
  zero = weight == 0
  wild_policy, wild_z = policy.copy(), z.copy()
  wild_policy[zero] = 0.0
  wild_policy[zero, 3] = 1e6                  # not even a distribution
  wild_z[zero] = -1e6
  wild = loss(jnp.float32(1e-4), params, batch_stats, planes, wild_policy, wild_z, weight)
  for k in ("loss_value", "loss_policy", "loss_l2"):
    assert float(wild[1][0][k]) == float(base[1][0][k]), k
  assert float(wild[0]) == float(base[0])
  # With no weight anywhere (no ready position in any group) the losses are 0, not NaN.
  total, (aux, _) = loss(jnp.float32(0.0), params, batch_stats, planes, wild_policy, wild_z,
                         np.zeros(6, np.float32))
  assert float(aux["loss_value"]) == 0.0 and float(aux["loss_policy"]) == 0.0
  assert float(total) == 0.0


# --------------------------------------------------------------------------- augmentation


def _d4(board):
  """The 8 symmetries of an [N, N, ...] array, in no particular order (numpy reference)."""
  out = []
  for k in range(4):
    r = np.rot90(board, k, axes=(0, 1))
    out += [r, np.swapaxes(r, 0, 1)]
  return out


def _augment(planes, policy, key):
  game = Game(go, go.GoConfig(size=N))
  m = planes.shape[0]
  batch = sample(planes, policy, np.zeros(m, np.float32), np.ones(m, np.float32))
  out = jax.jit(lambda b, k: agz.augment(game, b, k))(batch, key)
  return out.planes, out.policy


def test_augment_moves_planes_and_policy_by_the_same_symmetry():
  m = 64
  rng = np.random.default_rng(2)
  # One random sample repeated: every output is then one of its 8 images, which tells which
  # symmetry each sample got. Random content tells the 8 apart.
  planes = np.broadcast_to(rng.integers(0, 2, (N, N, 5)).astype(np.float32), (m, N, N, 5))
  one = rng.dirichlet(np.ones(A)).astype(np.float32)
  one[-1] = 0.2                                   # a visible pass entry
  policy = np.broadcast_to(one, (m, A))
  out_planes, out_policy = _augment(planes, policy, jax.random.PRNGKey(3))
  out_planes, out_policy = np.asarray(out_planes), np.asarray(out_policy)
  plane_images = _d4(planes[0])
  policy_images = [p.reshape(-1) for p in _d4(one[:-1].reshape(N, N))]
  assert len({p.tobytes() for p in plane_images}) == 8
  used = set()
  for i in range(m):
    which = [j for j, p in enumerate(plane_images) if np.array_equal(p, out_planes[i])]
    assert len(which) == 1, f"sample {i}: the planes are no symmetry of the input"
    np.testing.assert_array_equal(out_policy[i, :-1], policy_images[which[0]], err_msg=i)
    assert out_policy[i, -1] == one[-1]           # pass is no point of the board
    used.add(which[0])
  assert len(used) >= 6                           # each sample draws its own (8 ** 64 to 1)


def test_augment_keeps_a_stone_and_its_move_together():
  m = 32
  p = 1 * N + 3                                   # no symmetry of the board fixes it
  planes = np.zeros((m, N, N, 5), np.float32)
  planes[:, 1, 3, 0] = 1.0
  policy = np.zeros((m, A), np.float32)
  policy[:, p] = 0.5
  policy[:, -1] = 0.5
  out_planes, out_policy = _augment(planes, policy, jax.random.PRNGKey(4))
  out_planes, out_policy = np.asarray(out_planes), np.asarray(out_policy)
  stones = out_planes[..., 0].reshape(m, -1).argmax(-1)
  np.testing.assert_array_equal(out_policy[:, :-1].argmax(-1), stones)
  np.testing.assert_array_equal(out_policy[:, -1], 0.5)
  np.testing.assert_array_equal(out_planes[..., 1:], 0.0)
  assert len(set(stones.tolist())) > 1


# --------------------------------------------------------------------------- the task

# Games cannot pass (min_pass_moves > max_moves) nor resign (resign_min_moves), so every game
# lasts exactly 10 moves: iterations 1 and 2 (moves 1-8) leave nothing ready, iteration 3 ends all
# 8 games at move 10 and makes 8 * 10 = 80 positions ready, exactly min_ready.
MIN_READY = 80
TINY = {
    "game.size": N, "game.max_moves": 10, "game.history": 2, "model.blocks": 1,
    "model.channels": 8, "model.value_hidden": 16, "search.num_simulations": 4,
    "search.max_num_considered_actions": 4, "selfplay.num_games": 8,
    "selfplay.steps_per_iteration": 4, "selfplay.min_pass_moves": 40,
    "selfplay.resign_min_moves": 20, "replay.rows_per_game": 16, "replay.min_ready": MIN_READY,
    "train.batch_size": 8, "train.updates_per_iteration": 2, "eval.every": 0,
    "eval.gating": True, "mesh.num_devices": 1,
}
ITERATIONS = 5
AFTER_RESTORE = 2


class _CompileLog(logging.Handler):
  """Counts XLA compilations of one jitted function (jax.log_compiles messages)."""

  def __init__(self, name):
    super().__init__(logging.WARNING)
    self.name, self.count = name, 0

  def emit(self, record):
    if record.getMessage().startswith(f"Compiling jit({self.name})"):
      self.count += 1


def _host(tree):
  return jax.tree.map(np.asarray, jax.device_get(tree))


def _copy(tree):
  return jax.tree.map(jnp.copy, tree)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
  """An AlphaZeroTask's recorded run: states before and after each iteration, compile counts."""
  config = default.get_config()
  config.update_from_flattened_dict(TINY)
  compiles = _CompileLog("iteration")
  jax_logger = logging.getLogger("jax")
  jax_logger.addHandler(compiles)
  try:
    with jax.log_compiles():
      trainer = agz.AlphaZeroTask(config)
      state = trainer.init(config.seed)
      snapshots, metrics = [_host(state)], []
      for _ in range(ITERATIONS):
        state, m, _ = trainer.iteration(state)
        snapshots.append(_host(state))
        metrics.append({k: float(v) for k, v in m.items()})
      compiled_before_restore = compiles.count
      workdir = str(tmp_path_factory.mktemp("ckpt"))
      saver = checkpoint.Checkpointer(workdir, keep=1)
      saver.save(ITERATIONS, state, config)
      saver.close()
      reader = checkpoint.Checkpointer(workdir, keep=1)
      restored, step = reader.restore_latest(trainer.abstract_state)
      reader.close()
      restored_host = _host(restored)
      for _ in range(AFTER_RESTORE):
        restored, _, _ = trainer.iteration(restored)
      compiled_after_restore = compiles.count - compiled_before_restore
  finally:
    jax_logger.removeHandler(compiles)
  return dict(trainer=trainer, config=config, state=restored, snapshots=snapshots,
              metrics=metrics, compiled_before_restore=compiled_before_restore,
              compiled_after_restore=compiled_after_restore, restored=restored_host, step=step)


def _equal(a, b):
  leaves_a, leaves_b = jax.tree.leaves(a), jax.tree.leaves(b)
  return len(leaves_a) == len(leaves_b) and all(
      x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(leaves_a, leaves_b))


def test_no_update_until_min_ready_positions_then_updates(run):
  ready = [m["buffer_ready"] for m in run["metrics"]]
  assert ready[:3] == [0.0, 0.0, MIN_READY]
  snaps = run["snapshots"]
  for it, m in enumerate(run["metrics"], start=1):
    before, after = snaps[it - 1], snaps[it]
    same = [_equal(before.params, after.params), _equal(before.batch_stats, after.batch_stats),
            _equal(before.opt_state, after.opt_state)]
    if m["buffer_ready"] < MIN_READY:
      assert same == [True, True, True], it
      assert m["trained"] == 0.0
    else:
      assert same == [False, False, False], it
      assert m["trained"] == 1.0
  # Self-play went on all the while: the games moved and the buffer filled.
  assert not _equal(snaps[0].games.states.board, snaps[1].games.states.board)
  assert int(snaps[2].iteration) == 2


def test_the_iteration_compiles_once_and_not_again_after_a_restore(run):
  assert run["compiled_before_restore"] == 1
  assert run["compiled_after_restore"] <= 1


def test_a_checkpoint_restores_the_whole_state(run):
  assert run["step"] == ITERATIONS
  assert _equal(run["restored"], run["snapshots"][-1])


def test_with_gating_the_reference_network_plays_the_games(run):
  trainer, base = run["trainer"], run["state"]
  noisy = lambda tree, seed: jax.tree.map(
      lambda x: x + jax.random.normal(jax.random.PRNGKey(seed), x.shape, x.dtype), tree)
  plain = trainer.iteration(_copy(base))
  other_params = trainer.iteration(_copy(base.replace(params=noisy(base.params, 1))))
  other_reference = trainer.iteration(_copy(base.replace(
      reference={"params": noisy(base.reference["params"], 1),
                 "batch_stats": base.reference["batch_stats"]})))
  played = lambda out: _host((out[0].games, out[0].buffer, out[2]))
  # Different current networks, the same reference: the same games, move for move.
  assert _equal(played(plain), played(other_params))
  # A different reference: other moves (so the check above can fail).
  assert not np.array_equal(np.asarray(plain[2]["action"]), np.asarray(other_reference[2]["action"]))
