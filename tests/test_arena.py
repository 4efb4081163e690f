"""The evaluation match and the Elo it implies (arena.evaluate_and_rate), with and without gating.

The networks are fakes whose prior logits and value come from their variables (helpers.fake_apply
behind a model's `apply`): a player that never passes beats one that always passes with both
colours (on 5x5 with 8 moves the passer's opponent owns the board), so the score of a match
between them is 1 or 0 by construction, and the Elo change and replacement follow from it.
"""

import functools
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import arena, go, players
from agz_jax.game import Game
from agz_jax.training import agz

import helpers

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from configs import default  # noqa: E402  pylint: disable=wrong-import-position

CFG = go.GoConfig(size=5, komi=0.5, history=2, max_moves=8)
GAME = Game(go, CFG)
A, PASS = CFG.num_actions, CFG.pass_action
GAMES = 4


class FakeModel:
  """A model whose apply reads prior logits and value from its 'params' (helpers.fake_apply)."""

  def apply(self, variables, planes, train=False):  # pylint: disable=redefined-outer-name
    del train
    return helpers.fake_apply(variables["params"], planes)


def _network(pass_logit):
  logits = np.zeros(A)
  logits[PASS] = pass_logit
  return helpers.fake_variables(A, logits)


PASSER, PLAYER = _network(50.0), _network(-50.0)


def _state(current, reference, elo=100.0):
  return agz.TrainState(
      params=current, batch_stats={}, opt_state=None, games=None, buffer=None,
      rng=jax.random.PRNGKey(0), iteration=jnp.int32(3),
      reference={"params": reference, "batch_stats": {}}, elo=jnp.float32(elo))


@functools.cache
def _evaluate(gating, threshold):
  config = default.get_config()
  config.search.num_simulations, config.search.max_num_considered_actions = 8, 8
  config.eval.num_games, config.eval.num_simulations, config.eval.temperature_moves = GAMES, 8, 2
  config.eval.gating, config.eval.gating_threshold = gating, threshold
  return jax.jit(functools.partial(agz.evaluate, config, GAME, FakeModel()))


def evaluate(current, reference, *, gating=False, threshold=0.55, elo=100.0):
  state, metrics = _evaluate(gating, threshold)(_state(current, reference, elo))
  return state, {k: float(v) for k, v in metrics.items()}


def _sweep_elo(games):
  """Elo of a clean sweep over `games` games, counted as half a game lost (arena docstring)."""
  eps = 0.5 / games
  return 400.0 * np.log10((1 - eps) / eps)


def _same(a, b):
  return all(np.array_equal(x, y) for x, y in
             zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True))


def test_the_passer_loses_every_game_with_both_colours():
  match = jax.jit(lambda a, b, key: arena.play_match(
      GAME, helpers.fake_evaluator, a, b, key, num_games=GAMES,
      search=helpers.search_config(algorithm="gumbel", num_simulations=8,
                                   max_num_considered_actions=8),
      temperature_moves=2))
  for seed in range(2):
    out = {k: float(v) for k, v in match(PLAYER, PASSER, jax.random.PRNGKey(seed)).items()}
    assert out["wins"] + out["losses"] + out["draws"] == GAMES
    assert (out["wins"], out["losses"], out["draws"]) == (GAMES, 0, 0)
    out = {k: float(v) for k, v in match(PASSER, PLAYER, jax.random.PRNGKey(seed)).items()}
    assert (out["wins"], out["losses"], out["draws"]) == (0, GAMES, 0)


def test_a_player_without_search_plays_its_own_moves():
  # Player b given as a move function (the suite's random player): a passer loses every game to
  # it with both colours, and a player that never passes beats a b that always passes.
  def match(a, moves_b, seed):
    out = jax.jit(lambda key: arena.play_match(
        GAME, helpers.fake_evaluator, a, None, key, num_games=GAMES,
        search=helpers.search_config(algorithm="gumbel", num_simulations=8,
                                     max_num_considered_actions=8),
        temperature_moves=2, moves_b=moves_b))(jax.random.PRNGKey(seed))
    return tuple(float(out[k]) for k in ("wins", "losses", "draws"))

  random_b = lambda states, key: jax.vmap(functools.partial(players.random_move, CFG))(
      states, jax.random.split(key, states.to_play.shape[0]))
  passing_b = lambda states, key: jnp.full(states.to_play.shape, PASS, jnp.int32)
  for seed in range(2):
    assert match(PASSER, random_b, seed) == (0, GAMES, 0)
    assert match(PLAYER, passing_b, seed) == (GAMES, 0, 0)


@pytest.mark.parametrize("current, reference, sign", [(PLAYER, PASSER, 1), (PASSER, PLAYER, -1)])
def test_without_gating_the_current_network_always_becomes_the_reference(current, reference,
                                                                          sign):
  state, metrics = evaluate(current, reference, elo=100.0)
  assert metrics["eval_win_rate"] == (1.0 if sign > 0 else 0.0)
  assert metrics["eval_replaced"] == 1.0
  np.testing.assert_allclose(metrics["elo"], 100.0 + sign * _sweep_elo(GAMES), rtol=1e-5)
  np.testing.assert_allclose(float(state.elo), metrics["elo"])
  assert _same(state.reference["params"], current)
  assert _same(state.params, current)                 # the match trains nothing
  assert 2 <= metrics["eval_game_length"] <= CFG.max_moves


def test_with_gating_a_losing_network_leaves_reference_and_elo_alone():
  state, metrics = evaluate(PASSER, PLAYER, gating=True, threshold=0.55, elo=100.0)
  assert metrics["eval_win_rate"] == 0.0
  assert metrics["eval_replaced"] == 0.0
  assert metrics["elo"] == 100.0 and float(state.elo) == 100.0
  assert _same(state.reference["params"], PLAYER)


def test_with_gating_a_winning_network_replaces_the_reference():
  state, metrics = evaluate(PLAYER, PASSER, gating=True, threshold=0.55, elo=-20.0)
  assert metrics["eval_win_rate"] == 1.0 and metrics["eval_replaced"] == 1.0
  np.testing.assert_allclose(metrics["elo"], -20.0 + _sweep_elo(GAMES), rtol=1e-5)
  assert _same(state.reference["params"], PLAYER)


def test_gating_needs_a_score_above_the_threshold():
  # A clean sweep does not exceed a threshold of 1.
  state, metrics = evaluate(PLAYER, PASSER, gating=True, threshold=1.0, elo=0.0)
  assert metrics["eval_win_rate"] == 1.0
  assert metrics["eval_replaced"] == 0.0 and metrics["elo"] == 0.0
  assert _same(state.reference["params"], PASSER)


def test_the_elo_gain_is_the_one_the_score_implies():
  # Two different middling players: some score strictly between 0 and 1 (or an edge), and the
  # Elo moves by 400 log10(s / (1 - s)), s clipped to [0.5 / G, 1 - 0.5 / G].
  rng = np.random.default_rng(0)
  a, b = (helpers.fake_variables(A, 2.0 * rng.normal(size=A)) for _ in range(2))
  _, metrics = evaluate(a, b, elo=10.0)
  s = np.clip(metrics["eval_win_rate"], 0.5 / GAMES, 1 - 0.5 / GAMES)
  assert metrics["eval_win_rate"] in {i / (2 * GAMES) for i in range(2 * GAMES + 1)}
  np.testing.assert_allclose(metrics["elo"], 10.0 + 400.0 * np.log10(s / (1 - s)), rtol=1e-5,
                             atol=1e-3)
