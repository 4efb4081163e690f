"""AlphaZeroNet: shapes and ranges, the bfloat16 compute mode, BatchNorm modes, parameter count.

A tiny network (1 block, 8 channels, value head 16 wide) on 5x5 boards with 2 history planes
(F = 5 input planes). Each jitted function is built once per module (`_apply`).
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import go
from agz_jax.nets import AlphaZeroNet

CFG = go.GoConfig(size=5, komi=0.5, history=2)
N, F, A = CFG.size, 2 * CFG.history + 1, CFG.num_actions
BLOCKS, CHANNELS, HIDDEN = 1, 8, 16
BATCH = 4


def _model(dtype=jnp.float32, blocks=BLOCKS):
  return AlphaZeroNet(blocks=blocks, channels=CHANNELS, value_hidden=HIDDEN, dtype=dtype)


def _planes(seed, batch=BATCH):
  """Random 0/1 planes, as go.features produces."""
  rng = np.random.default_rng(seed)
  return jnp.asarray(rng.integers(0, 2, size=(batch, N, N, F)), jnp.float32)


@functools.cache
def _variables(blocks=BLOCKS):
  return _model(blocks=blocks).init(jax.random.PRNGKey(0), _planes(0), train=False)


@functools.cache
def _apply(dtype_name, train):
  """Jitted apply: eval mode returns (logits, value); train mode also the new batch_stats."""
  model = _model(dtype=jnp.dtype(dtype_name))
  if train:
    return jax.jit(lambda v, x: model.apply(v, x, train=True, mutable=["batch_stats"]))
  return jax.jit(lambda v, x: model.apply(v, x, train=False))


def _trained_stats(variables, seed):
  """batch_stats moved away from their initial (0, 1) by a few train-mode passes."""
  for s in range(3):
    _, new = _apply("float32", True)(variables, _planes(seed + s) * 3.0)
    variables = {"params": variables["params"], "batch_stats": new["batch_stats"]}
  return variables


# ---------------------------------------------------------------------------- outputs


def test_output_shapes_and_dtypes():
  logits, value = _apply("float32", False)(_variables(), _planes(1))
  assert logits.shape == (BATCH, N * N + 1) and logits.dtype == jnp.float32
  assert value.shape == (BATCH,) and value.dtype == jnp.float32
  assert np.all(np.isfinite(np.asarray(logits)))


def test_value_is_squashed_into_minus_one_one():
  # Blow up the last value layer so that the pre-activation is far outside [-1, 1]: only the
  # final tanh keeps the value in range, and it must reach both signs (no ReLU/sigmoid cut).
  variables = _variables()

  def last_layer_times(factor):
    params = dict(variables["params"])
    params["Dense_2"] = jax.tree.map(lambda w: w * factor, params["Dense_2"])
    return {"params": params, "batch_stats": variables["batch_stats"]}

  big = last_layer_times(1e4)
  values = np.concatenate([np.asarray(_apply("float32", False)(big, _planes(s))[1])
                           for s in range(2, 6)])
  assert np.all(np.abs(values) <= 1.0)
  assert np.max(np.abs(values)) > 0.99
  assert values.min() < 0 < values.max()
  # tanh is odd: negating the last layer negates every value.
  neg = last_layer_times(-1e4)
  x = _planes(2)
  np.testing.assert_allclose(np.asarray(_apply("float32", False)(neg, x)[1]),
                             -np.asarray(_apply("float32", False)(big, x)[1]), rtol=1e-6)


def test_logits_depend_on_the_position():
  logits, value = _apply("float32", False)(_variables(), _planes(7))
  assert np.ptp(np.asarray(logits), axis=0).max() > 1e-4
  assert np.ptp(np.asarray(value)) > 1e-6


# ---------------------------------------------------------------------------- bfloat16


def test_bfloat16_model_keeps_float32_params():
  variables = _model(dtype=jnp.bfloat16).init(jax.random.PRNGKey(0), _planes(0), train=False)
  for leaf in jax.tree.leaves(variables):
    assert leaf.dtype == jnp.float32
  # Same parameter structure as the float32 model, so one set of weights serves both.
  assert jax.tree.structure(variables) == jax.tree.structure(_variables())


def test_bfloat16_computes_in_bfloat16():
  model = _model(dtype=jnp.bfloat16)
  _, state = jax.jit(lambda v, x: model.apply(v, x, train=False, capture_intermediates=True,
                                              mutable=["intermediates"]))(_variables(), _planes(1))
  inter = state["intermediates"]
  assert inter["Conv_0"]["__call__"][0].dtype == jnp.bfloat16
  assert inter["ResidualBlock_0"]["__call__"][0].dtype == jnp.bfloat16
  assert inter["Dense_0"]["__call__"][0].dtype == jnp.bfloat16     # policy logits layer
  assert inter["Dense_2"]["__call__"][0].dtype == jnp.bfloat16     # value layer


def test_bfloat16_outputs_are_float32_close_to_but_not_equal_to_float32():
  variables = _trained_stats(_variables(), 20)
  x = _planes(3)
  logits32, value32 = _apply("float32", False)(variables, x)
  logits16, value16 = _apply("bfloat16", False)(variables, x)
  assert logits16.dtype == jnp.float32 and value16.dtype == jnp.float32
  diff = np.abs(np.asarray(logits16) - np.asarray(logits32))
  scale = np.max(np.abs(np.asarray(logits32)))
  assert diff.max() > 0                      # rounded to bfloat16 somewhere
  assert diff.max() < 0.05 * scale + 0.05    # ... but the same network
  np.testing.assert_allclose(np.asarray(value16), np.asarray(value32), atol=0.05)
  # Rounded outputs: bfloat16 has 8 significant bits, so every logit is a bfloat16 value.
  np.testing.assert_array_equal(np.asarray(logits16),
                                np.asarray(logits16.astype(jnp.bfloat16).astype(jnp.float32)))


# ---------------------------------------------------------------------------- BatchNorm


def test_train_mode_updates_batch_stats_with_momentum_0_9():
  variables = _variables()
  x = _planes(4)
  (_, _), new = _apply("float32", True)(variables, x)
  old_stats, new_stats = variables["batch_stats"], new["batch_stats"]
  assert jax.tree.structure(new_stats) == jax.tree.structure(old_stats)
  # Every BatchNorm of the network (stem, tower, both heads) moved its statistics.
  for a, b in zip(jax.tree.leaves(new_stats), jax.tree.leaves(old_stats)):
    assert not np.allclose(np.asarray(a), np.asarray(b))
  # The first BatchNorm normalises the input convolution: new = 0.9 old + 0.1 batch statistic.
  conv = jax.lax.conv_general_dilated(
      x, variables["params"]["Conv_0"]["kernel"], (1, 1), "SAME",
      dimension_numbers=("NHWC", "HWIO", "NHWC"))
  mean = np.asarray(jnp.mean(conv, axis=(0, 1, 2)))
  var = np.asarray(jnp.var(conv, axis=(0, 1, 2)))
  np.testing.assert_allclose(np.asarray(new_stats["BatchNorm_0"]["mean"]), 0.1 * mean,
                             rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(np.asarray(new_stats["BatchNorm_0"]["var"]), 0.9 + 0.1 * var,
                             rtol=1e-4, atol=1e-5)


def test_eval_mode_does_not_update_batch_stats():
  variables = _variables()
  model = _model()
  _, new = model.apply(variables, _planes(4), train=False, mutable=["batch_stats"])
  for a, b in zip(jax.tree.leaves(new["batch_stats"]), jax.tree.leaves(variables["batch_stats"])):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_eval_mode_evaluates_each_sample_alone_train_mode_does_not():
  variables = _trained_stats(_variables(), 30)
  x = _planes(5)
  y = x.at[1:].set(_planes(6)[1:])   # same first sample, different companions
  eval_x = _apply("float32", False)(variables, x)
  eval_y = _apply("float32", False)(variables, y)
  for a, b in zip(eval_x, eval_y):
    np.testing.assert_allclose(np.asarray(a[0]), np.asarray(b[0]), rtol=1e-5, atol=1e-6)
  (logits_x, value_x), _ = _apply("float32", True)(variables, x)
  (logits_y, value_y), _ = _apply("float32", True)(variables, y)
  assert np.max(np.abs(np.asarray(logits_x[0]) - np.asarray(logits_y[0]))) > 1e-3
  # Eval mode uses the running statistics: changing them changes the output.
  shifted = jax.tree.map(lambda s: s + 0.5, variables["batch_stats"])
  logits_s, _ = _apply("float32", False)({"params": variables["params"], "batch_stats": shifted}, x)
  assert np.max(np.abs(np.asarray(logits_s) - np.asarray(eval_x[0]))) > 1e-3


# ---------------------------------------------------------------------------- size


def _expected_counts(blocks, c, h, n, f):
  """(params, batch_stats) of the architecture in AlphaZeroNet's docstring, counted by hand.

  BatchNorm: a scale and a bias per channel (params), a mean and a variance (batch_stats).
  Convolutions have no bias (BatchNorm follows), dense layers do.
  """
  p = n * n
  stem = 3 * 3 * f * c + 2 * c
  tower = blocks * 2 * (3 * 3 * c * c + 2 * c)
  policy = c * 2 + 2 * 2 + (2 * p) * (p + 1) + (p + 1)
  value = c * 1 + 2 * 1 + p * h + h + h * 1 + 1
  stats = 2 * c + blocks * 2 * 2 * c + 2 * 2 + 2 * 1
  return stem + tower + policy + value, stats


@pytest.mark.parametrize("blocks", [1, 2])
def test_parameter_count_matches_the_architecture(blocks):
  variables = jax.eval_shape(
      lambda: _model(blocks=blocks).init(jax.random.PRNGKey(0), _planes(0), train=False))
  count = lambda tree: sum(int(np.prod(x.shape)) for x in jax.tree.leaves(tree))
  params, stats = _expected_counts(blocks, CHANNELS, HIDDEN, N, F)
  assert count(variables["params"]) == params
  assert count(variables["batch_stats"]) == stats
  assert set(variables) == {"params", "batch_stats"}


def test_parameter_count_of_a_19x19_agz_sized_head():
  # 19x19, 17 planes, 256 channels, value head 256: the paper's stem and heads; blocks=0 keeps
  # it cheap (eval_shape only) while the tower is checked above.
  cfg19 = dict(blocks=0, channels=256, value_hidden=256)
  variables = jax.eval_shape(
      lambda: AlphaZeroNet(**cfg19).init(jax.random.PRNGKey(0), jnp.zeros((1, 19, 19, 17)),
                                         train=False))
  count = sum(int(np.prod(x.shape)) for x in jax.tree.leaves(variables["params"]))
  assert count == _expected_counts(0, 256, 256, 19, 17)[0]
