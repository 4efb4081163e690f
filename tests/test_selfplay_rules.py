"""Self-play's move rules (selfplay.selfplay_step): temperature, no early pass, resignation.

A tiny random network gives varied search policies for the temperature rule; a fake network (prior
logits and value read from its variables, helpers.fake_apply) gives positions whose searched value
is known exactly for the pass and resignation rules. Each jitted step is built once.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import go, selfplay
from agz_jax.game import Game
from agz_jax.nets import AlphaZeroNet
from agz_jax.search import run_search

import helpers

CFG = go.GoConfig(size=5, komi=0.5, history=2, max_moves=30)
GAME = Game(go, CFG)
A, PASS = CFG.num_actions, CFG.pass_action
MIN_PASS_MOVES = 5
SEARCH = {
    "gumbel": helpers.search_config(algorithm="gumbel", num_simulations=8,
                                    max_num_considered_actions=8, gumbel_scale=0.0),
    "puct": helpers.search_config(algorithm="puct", num_simulations=8, dirichlet_fraction=0.0),
}


@functools.cache
def _net():
  model = AlphaZeroNet(blocks=1, channels=8, value_hidden=8)
  variables = model.init(jax.random.PRNGKey(1), jnp.zeros((1, 5, 5, go.num_planes(CFG, "agz17"))), train=False)
  return helpers.network_evaluator(CFG, lambda v, x: model.apply(v, x, train=False)), variables


@functools.cache
def _step(network, algorithm):
  evaluator = _net()[0] if network == "net" else helpers.fake_evaluator
  search = SEARCH[algorithm].replace(min_pass_moves=MIN_PASS_MOVES)

  def run(variables, games, key, temperature_moves, resign_threshold, resign_min_moves):
    settings = selfplay.SelfPlayConfig(
        search=search, encoding="agz17", temperature_moves=temperature_moves,
        resign_threshold=resign_threshold, resign_min_moves=resign_min_moves,
        no_resign_fraction=0.0)
    return selfplay.selfplay_step(GAME, evaluator, variables, games, key, settings)
  return jax.jit(run)


def step(network, algorithm, variables, games, *, seed=0, temperature_moves=0,
         resign_threshold=-1.0, resign_min_moves=0):
  return _step(network, algorithm)(variables, games, jax.random.PRNGKey(seed),
                                   jnp.int32(temperature_moves), jnp.float32(resign_threshold),
                                   jnp.int32(resign_min_moves))


def games_of(states, may_resign=None):
  n = len(states)
  may_resign = [False] * n if may_resign is None else may_resign
  return selfplay.Games(states=jax.tree.map(lambda *xs: jnp.stack(xs), *states),
                        may_resign=jnp.asarray(may_resign, bool),
                        would_resign=jnp.zeros(n, jnp.int8))


def at_move(move_count, to_play=go.BLACK):
  return go.init(CFG, to_play=to_play).replace(move_count=jnp.int32(move_count))


# --------------------------------------------------------------------------- temperature

TEMPERATURE_MOVES, HALF = 4, 16


@pytest.mark.parametrize("algorithm", ["gumbel", "puct"])
def test_sampled_before_temperature_moves_best_move_after(algorithm):
  # The same position in every game: games 0..15 at move 3 (still sampled), 16..31 at move 4.
  _, variables = _net()
  states = [at_move(TEMPERATURE_MOVES - 1)] * HALF + [at_move(TEMPERATURE_MOVES)] * HALF
  games = games_of(states)
  _, rec = step("net", algorithm, variables, games, temperature_moves=TEMPERATURE_MOVES)
  action, policy = np.asarray(rec.action), np.asarray(rec.policy)
  if algorithm == "gumbel":
    # Without Gumbel noise the search is deterministic: its action, searched here again.
    settings = SEARCH["gumbel"].replace(min_pass_moves=MIN_PASS_MOVES)
    out = jax.jit(lambda s: run_search(GAME, _net()[0], variables, s, jax.random.PRNGKey(9),
                                       settings))(games.states)
    best = np.asarray(out.action)
  else:
    best = policy.argmax(-1)          # PUCT's policy is the root's visit counts, normalised
  np.testing.assert_array_equal(action[HALF:], best[HALF:])
  sampled = action[:HALF]
  assert np.all(policy[np.arange(HALF), sampled] > 0)
  assert len(set(sampled.tolist())) >= 3
  assert np.any(sampled != best[:HALF])


# --------------------------------------------------------------------------- min_pass_moves


def _passer():
  logits = np.zeros(A)
  logits[PASS] = 50.0
  return helpers.fake_variables(A, logits)


def test_no_pass_before_min_pass_moves_unless_nothing_else_is_legal():
  only_pass = go.init(CFG, black=list(range(1, CFG.size * CFG.size)))  # black: 0 is suicide
  assert np.flatnonzero(np.asarray(go.legal_actions(CFG, only_pass))).tolist() == [PASS]
  states = [at_move(0), at_move(MIN_PASS_MOVES - 1, go.WHITE), at_move(MIN_PASS_MOVES),
            at_move(MIN_PASS_MOVES + 3), only_pass]
  for seed in range(3):
    _, rec = step("fake", "gumbel", _passer(), games_of(states), seed=seed, temperature_moves=100)
    action, policy = np.asarray(rec.action), np.asarray(rec.policy)
    # Early: pass is withheld although the network wants nothing else.
    np.testing.assert_array_equal(policy[:2, PASS], 0.0)
    assert np.all(action[:2] != PASS)
    # From min_pass_moves on it is allowed, and the network's choice.
    np.testing.assert_array_equal(action[2:4], PASS)
    assert np.all(policy[2:4, PASS] > 0.5)
    # Nothing else legal: pass, early or not.
    assert action[4] == PASS and policy[4, PASS] == pytest.approx(1.0)


# --------------------------------------------------------------------------- resignation


def test_resigns_on_the_searched_value_after_resign_min_moves_only():
  # The network says -0.5 everywhere for the player to move, so every move searched (8
  # simulations, 8 moves considered: each visited once) has the value +0.5 for the mover: the
  # searched value is +0.5 while the network's own value of the position is -0.5.
  lost = helpers.fake_variables(A, value=-0.5)
  states = [at_move(2), at_move(3), at_move(3), at_move(3, go.WHITE)]
  may_resign = [True, True, False, False]
  games = games_of(states, may_resign)
  new, rec = step("fake", "gumbel", lost, games, resign_threshold=0.49, resign_min_moves=3)
  np.testing.assert_allclose(np.asarray(rec.root_value), 0.5, atol=1e-6)
  np.testing.assert_array_equal(np.asarray(rec.resigned), False)       # 0.5 is not below 0.49
  np.testing.assert_array_equal(np.asarray(new.would_resign), 0)
  new, rec = step("fake", "gumbel", lost, games, resign_threshold=0.51, resign_min_moves=3)
  # Game 0 is before resign_min_moves; games 2 and 3 may not resign and remember who would have.
  np.testing.assert_array_equal(np.asarray(rec.resigned), [False, True, False, False])
  np.testing.assert_array_equal(np.asarray(rec.ended), [False, True, False, False])
  assert float(rec.result[1]) == -1.0                                  # black resigned
  np.testing.assert_array_equal(np.asarray(new.would_resign), [0, 0, go.BLACK, go.WHITE])
  np.testing.assert_array_equal(np.asarray(new.states.move_count), [3, 0, 4, 4])
