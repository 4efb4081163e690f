"""Wilson intervals and Elo differences (agz_jax.stats) on numbers worked out by hand."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import stats


def test_wilson_interval():
  # 8 of 10: the textbook Wilson interval [0.4902, 0.9433].
  lo, hi = stats.wilson_interval(8, 10)
  assert lo == pytest.approx(0.4902, abs=1e-4) and hi == pytest.approx(0.9433, abs=1e-4)
  # 0 of 10: lower bound 0, upper z^2 / (n + z^2) = 0.2775.
  assert stats.wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
  # Symmetric around an even score; draws count half (5 wins 0 draws == 4 wins 2 draws).
  lo, hi = stats.wilson_interval(5, 10)
  assert lo + hi == pytest.approx(1.0)
  assert stats.wilson_interval(4 + 2 / 2, 10) == (lo, hi)
  # 1 of 50: [0.35%, 10.5%].
  lo, hi = stats.wilson_interval(1, 50)
  assert lo == pytest.approx(0.0035, abs=1e-4) and hi == pytest.approx(0.1050, abs=1e-4)
  assert stats.wilson_interval(0, 0) == (0.0, 1.0)


def test_elo_difference_of_floats():
  assert stats.elo_difference(0.5) == 0
  assert stats.elo_difference(0.75) == pytest.approx(400 * math.log10(3))  # +190.85
  assert stats.elo_difference(0.75) == pytest.approx(190.85, abs=0.01)
  assert stats.elo_difference(10 / 11) == pytest.approx(400.0)
  assert stats.elo_difference(0.1) == pytest.approx(-381.70, abs=0.01)
  assert stats.elo_difference(1.0) == math.inf and stats.elo_difference(0.0) == -math.inf
  assert isinstance(stats.elo_difference(0.75), float)
  # With the number of games, a clean sweep of 10 counts as 9.5 of 10.
  assert stats.elo_difference(1.0, 10) == pytest.approx(400 * math.log10(19))
  assert stats.elo_difference(0.0, 10) == pytest.approx(-400 * math.log10(19))
  assert stats.elo_difference(0.75, 10) == pytest.approx(400 * math.log10(3))
  np.testing.assert_allclose(stats.elo_difference(np.array([0.25, 0.5])),
                             [-400 * math.log10(3), 0.0], atol=1e-9)


def test_elo_difference_of_jax_arrays_inside_jit():
  elo = jax.jit(stats.elo_difference, static_argnums=1)
  got = elo(jnp.array([0.0, 0.5, 0.75, 1.0]), 10)
  assert isinstance(got, jax.Array)
  np.testing.assert_allclose(np.asarray(got), [-400 * math.log10(19), 0.0, 400 * math.log10(3),
                                               400 * math.log10(19)], rtol=1e-5, atol=1e-3)
  unclipped = np.asarray(jax.jit(stats.elo_difference)(jnp.array([0.0, 0.75, 1.0])))
  assert unclipped[0] == -np.inf and unclipped[2] == np.inf
  assert unclipped[1] == pytest.approx(400 * math.log10(3), rel=1e-5)


def test_elo_per_log_odds_is_the_elo_scale():
  assert stats.elo_difference(1 / (1 + math.exp(-1))) == pytest.approx(stats.ELO_PER_LOG_ODDS)
