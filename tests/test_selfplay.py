"""Self-play steps (search policies, restarts, results, resignation) and arena matches, on 5x5.

The network is a fake whose prior logits ([A]) and value ([]) are read from its variables, so a
single compiled program serves every setting: random logits for varied policies, a steep
"lowest point first" prior for games whose moves the test can predict, a huge pass logit for a
player that always passes. Each jitted function is built once per module.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import arena, go, selfplay, stats
from agz_jax.game import Game

import helpers


CFG = go.GoConfig(size=5, komi=0.5, history=2, max_moves=8)
GAME = Game(go, CFG)
A, PASS = CFG.num_actions, CFG.pass_action
BATCH = 4
SEARCH = helpers.search_config(algorithm="gumbel", num_simulations=16, max_num_considered_actions=8)


def _point(vertex):
  return helpers.point(CFG.size, vertex)


def fake_variables(logits=None, value=0.0):
  return helpers.fake_variables(A, logits, value)


# Prefers the lowest-numbered legal point by a margin no search statistic can overturn, never
# passes while a point is legal: the move played is predictable.
LOWEST_FIRST = fake_variables(-100.0 * np.arange(A))


@functools.cache
def _jit(name):
  return jax.jit(getattr(go, name), static_argnums=0)


def legal(state):
  return np.asarray(_jit("legal_actions")(CFG, state))


def play(state, *vertices):
  for v in vertices:
    assert legal(state)[_point(v)], v
    state = _jit("step")(CFG, state, jnp.int32(_point(v)))
  return state


def position(text, to_play=go.BLACK):
  _, black, white = go.parse_board(text)
  return go.init(CFG, black=black, white=white, to_play=to_play)


def stack(states):
  return jax.tree.map(lambda *xs: jnp.stack(xs), *states)


def unstack(states):
  n = states.to_play.shape[0]
  return [jax.tree.map(lambda x: x[i], states) for i in range(n)]


def games_of(states, may_resign):
  return selfplay.Games(states=stack(states), may_resign=jnp.asarray(may_resign, bool),
                        would_resign=jnp.zeros(len(states), jnp.int8))


@functools.cache
def _step():
  def run(variables, games, key, temperature_moves, resign_threshold, resign_min_moves,
          no_resign_fraction):
    return selfplay.selfplay_step(
        GAME, helpers.fake_evaluator, variables, games, key, settings(
            SEARCH, temperature_moves=temperature_moves, resign_threshold=resign_threshold,
            resign_min_moves=resign_min_moves, no_resign_fraction=no_resign_fraction))
  return jax.jit(run)


def settings(search, **fields):
  return selfplay.SelfPlayConfig(search=search, encoding="agz17", **fields)


def step(variables, games, seed, *, temperature_moves=0, resign_threshold=-1.0,
         resign_min_moves=0, no_resign_fraction=0.0):
  return _step()(variables, games, jax.random.PRNGKey(seed), jnp.int32(temperature_moves),
                 jnp.float32(resign_threshold), jnp.int32(resign_min_moves),
                 jnp.float32(no_resign_fraction))


KO = """
    . X O . .
    X O . O .
    . X O . .
    . . . . .
    . . . . .
"""

LONE_WHITE = """
    . . . . .
    . . . . .
    . . O . .
    . . . . .
    . . . . .
"""

LONE_BLACK = LONE_WHITE.replace("O", "X")

# Black wins the 8-move game that LOWEST_FIRST plays from here (by 4.5 points).
BLACK_ROOM = """
    . . . . .
    . . . . .
    . . . . .
    . X X X .
    . X . X .
"""


def assert_fresh(state):
  np.testing.assert_array_equal(np.asarray(state.board), 0)
  assert int(state.move_count) == 0 and int(state.to_play) == go.BLACK
  assert not bool(state.terminated) and int(state.passes) == 0 and int(state.num_seen) == 1


# ---------------------------------------------------------------------------- records


def test_records_hold_the_searched_position_and_a_legal_search_policy():
  ko_taken = play(position(KO), "C4")                 # white may not retake at B4
  starts = [go.init(CFG), ko_taken, position(LONE_BLACK, go.WHITE),
            play(go.init(CFG), "C3", "C2", "B2")]
  games = games_of(starts, [False] * BATCH)
  logits = 2.0 * np.random.default_rng(0).normal(size=A)
  for t in range(5):
    before = unstack(games.states)
    games, rec = step(fake_variables(logits), games, t, temperature_moves=100)
    policy = np.asarray(rec.policy)
    np.testing.assert_allclose(policy.sum(axis=1), 1.0, rtol=1e-5)
    for i, s in enumerate(before):
      mask = legal(s)
      np.testing.assert_array_equal(policy[i][~mask], 0.0)
      assert np.count_nonzero(policy[i]) > 1             # a distribution, not a one-hot
      np.testing.assert_array_equal(np.asarray(rec.planes[i]),
                                    np.asarray(_jit("features")(CFG, s)).astype(np.uint8))
      assert int(rec.to_play[i]) == int(s.to_play)
    assert rec.planes.dtype == jnp.uint8
    if t == 0:
      assert policy[1, _point("B4")] == 0.0                # the ko
      assert policy[3, _point("C3")] == 0.0                # occupied


def _lowest_legal(state):
  mask = legal(state)
  return int(np.argmax(mask[:PASS])) if mask[:PASS].any() else PASS


def test_games_that_end_are_scored_and_restarted():
  # Predictable moves (lowest legal point, no sampling); games end at the 8-move limit, from
  # different move counts so that the slots end at different steps.
  starts = [go.init(CFG), position(KO).replace(move_count=jnp.int32(3)),
            position(LONE_BLACK).replace(move_count=jnp.int32(5)),
            position(LONE_WHITE, go.WHITE).replace(move_count=jnp.int32(6))]
  games = games_of(starts, [True] * BATCH)
  ends = np.zeros(BATCH, int)
  results = set()
  for t in range(11):
    before = unstack(games.states)
    expected = [_jit("step")(CFG, s, jnp.int32(_lowest_legal(s))) for s in before]
    games, rec = step(LOWEST_FIRST, games, t)
    np.testing.assert_array_equal(np.asarray(rec.resigned), False)
    for i, (s, e) in enumerate(zip(before, expected)):
      after = jax.tree.map(lambda x: x[i], games.states)
      assert bool(rec.ended[i]) == bool(e.terminated), (t, i)
      if bool(e.terminated):
        assert float(rec.result[i]) == float(_jit("result")(CFG, e)), (t, i)
        assert int(rec.length[i]) == int(e.move_count) == CFG.max_moves
        assert_fresh(after)
        assert int(games.would_resign[i]) == 0
        ends[i] += 1
        results.add(float(rec.result[i]))
      else:
        np.testing.assert_array_equal(np.asarray(after.board), np.asarray(e.board))
        assert int(after.move_count) == int(s.move_count) + 1
        assert int(after.to_play) == -int(s.to_play)
  np.testing.assert_array_equal(ends, [1, 1, 2, 2])
  assert results == {-1.0, 1.0}                            # both colours won somewhere


def test_selfplay_scans_steps_and_stacks_their_records():
  starts = [go.init(CFG), position(BLACK_ROOM), position(KO).replace(move_count=jnp.int32(6)),
            position(LONE_WHITE, go.WHITE)]
  run = jax.jit(lambda games, key: selfplay.selfplay(
      GAME, helpers.fake_evaluator, LOWEST_FIRST, games, key, 3, settings(
          SEARCH, temperature_moves=0, resign_threshold=-1.0, resign_min_moves=0,
          no_resign_fraction=0.0)))
  games, rec = run(games_of(starts, [True] * BATCH), jax.random.PRNGKey(5))
  assert rec.policy.shape == (3, BATCH, A) and rec.planes.shape[:2] == (3, BATCH)
  for i, s in enumerate(starts):
    for t in range(3):
      np.testing.assert_array_equal(np.asarray(rec.planes[t, i]),
                                    np.asarray(_jit("features")(CFG, s)).astype(np.uint8))
      ended = bool(rec.ended[t, i])
      s = _jit("step")(CFG, s, jnp.int32(_lowest_legal(s)))
      assert ended == bool(s.terminated), (i, t)
      if ended:
        s = go.init(CFG)
    np.testing.assert_array_equal(np.asarray(games.states.board[i]), np.asarray(s.board))
    assert int(games.states.move_count[i]) == int(s.move_count)
  # The KO game (from move 6) ended at the second step and restarted.
  np.testing.assert_array_equal(np.asarray(rec.ended)[:, 2], [False, True, False])


# A PUCT search whose prior is tempered and whose value is scaled by the move number: a reused
# evaluation is the tree's own, already tempered and scaled, and must not be again.
SEARCH_EVALUATOR = {"prior_temperature": 1.5, "value_scale": (1.0, 0.5), "value_scale_moves": 3}


@pytest.mark.parametrize("algorithm, search_settings",
                         [("gumbel", {}), ("puct", {}), ("puct", SEARCH_EVALUATOR)])
def test_selfplay_reuses_evaluations_and_plays_as_if_every_root_were_evaluated(algorithm,
                                                                               search_settings):
  """A run of steps takes each root's evaluation from the previous search (the child of the move
  played) or from the run's empty-board evaluation, evaluates the rest in a sub-batch, and plays
  exactly the games of steps that evaluate every root."""
  from agz_jax.nets import AlphaZeroNet  # pylint: disable=import-outside-toplevel
  net = AlphaZeroNet(blocks=1, channels=8, value_hidden=8)
  apply_fn = lambda v, x: net.apply(v, x, train=False)
  evaluator = helpers.network_evaluator(CFG, apply_fn)
  variables = net.init(jax.random.PRNGKey(1), jnp.zeros((1, 5, 5, go.num_planes(CFG, "agz17"))),
                       train=False)
  batch, steps, spare_fraction = 8, 12, 0.25
  play_settings = settings(
      helpers.search_config(algorithm=algorithm, num_simulations=8, max_num_considered_actions=4,
                            **search_settings),
      temperature_moves=4, resign_threshold=-1.0, resign_min_moves=0, no_resign_fraction=0.0)
  games = selfplay.new_games(GAME, jax.random.PRNGKey(2), batch, no_resign_fraction=0.0)
  key = jax.random.PRNGKey(3)
  run = jax.jit(lambda g, k: selfplay.selfplay(GAME, evaluator, variables, g, k, steps,
                                               play_settings, spare_fraction=spare_fraction))
  final, rec = run(games, key)
  one = jax.jit(lambda g, k: selfplay.selfplay_step(GAME, evaluator, variables, g, k,
                                                    play_settings))
  for t, k in enumerate(jax.random.split(key, steps)):
    games, expected = one(games, k)
    assert np.all(np.asarray(expected.root_evaluated))
    np.testing.assert_array_equal(np.asarray(rec.action[t]), np.asarray(expected.action), err_msg=t)
    np.testing.assert_array_equal(np.asarray(rec.ended[t]), np.asarray(expected.ended))
    np.testing.assert_allclose(np.asarray(rec.policy[t]), np.asarray(expected.policy), atol=1e-5)
    np.testing.assert_allclose(np.asarray(rec.root_value[t]), np.asarray(expected.root_value),
                               atol=1e-5)
  np.testing.assert_array_equal(np.asarray(final.states.board), np.asarray(games.states.board))

  evaluated = np.asarray(rec.root_evaluated).sum(axis=1)
  spare = int(batch * spare_fraction)
  assert evaluated[0] == batch                       # nothing known at the start of a run
  assert np.any(np.asarray(rec.ended)[:-1])          # restarted games took the empty board's
  if algorithm == "puct":  # moves are drawn by visit counts: the move played was searched
    np.testing.assert_array_equal(evaluated[1:], 0)
  else:                    # a sampled move may be one the search never visited
    assert np.any(evaluated[1:] == 0)
    assert np.any((evaluated[1:] > 0) & (evaluated[1:] <= spare))   # a sub-batch


# ---------------------------------------------------------------------------- resignation


def test_every_game_that_may_resign_resigns_at_once_above_the_maximum_value():
  games = games_of([go.init(CFG)] * BATCH, [True, False, True, False])
  games, rec = step(fake_variables(), games, 0, resign_threshold=1.01, resign_min_moves=0,
                    no_resign_fraction=0.0)
  np.testing.assert_array_equal(np.asarray(rec.resigned), [True, False, True, False])
  np.testing.assert_array_equal(np.asarray(rec.ended), [True, False, True, False])
  np.testing.assert_array_equal(np.asarray(rec.result)[[0, 2]], -1.0)   # black resigned
  # The games that may not resign go on, remembering that black would have resigned.
  np.testing.assert_array_equal(np.asarray(games.would_resign), [0, 1, 0, 1])
  np.testing.assert_array_equal(np.asarray(games.states.move_count), [0, 1, 0, 1])
  np.testing.assert_array_equal(np.asarray(rec.resign_checked), False)
  for i in (0, 2):
    assert_fresh(jax.tree.map(lambda x: x[i], games.states))
  # no_resign_fraction 0: every restarted game may resign, and does so again.
  np.testing.assert_array_equal(np.asarray(games.may_resign), [True, False, True, False])
  games, rec = step(fake_variables(), games, 1, resign_threshold=1.01, resign_min_moves=0,
                    no_resign_fraction=1.0)
  np.testing.assert_array_equal(np.asarray(rec.resigned), [True, False, True, False])
  np.testing.assert_array_equal(np.asarray(rec.to_play), [1, -1, 1, -1])
  # White is below the threshold too, but black was first.
  np.testing.assert_array_equal(np.asarray(games.would_resign), [0, 1, 0, 1])
  # no_resign_fraction 1: the restarted games may not resign.
  np.testing.assert_array_equal(np.asarray(games.may_resign), False)


def test_no_resign_games_check_the_resignations_they_would_have_made():
  # Black would resign at once in every game; the games from the empty board are won by white
  # (lowest point first), the ones from BLACK_ROOM by black: false resignations.
  starts = [go.init(CFG), position(BLACK_ROOM)]
  games = games_of(starts * 2, [False] * BATCH)
  for t in range(CFG.max_moves):
    games, rec = step(LOWEST_FIRST, games, t, resign_threshold=1.01, resign_min_moves=0)
    np.testing.assert_array_equal(np.asarray(rec.resigned), False)
    if t < CFG.max_moves - 1:
      np.testing.assert_array_equal(np.asarray(rec.ended), False)
      np.testing.assert_array_equal(np.asarray(games.would_resign), go.BLACK)
  np.testing.assert_array_equal(np.asarray(rec.ended), True)
  np.testing.assert_array_equal(np.asarray(rec.result), [-1.0, 1.0, -1.0, 1.0])
  np.testing.assert_array_equal(np.asarray(rec.resign_checked), True)
  np.testing.assert_array_equal(np.asarray(rec.false_resign), [False, True, False, True])
  np.testing.assert_array_equal(np.asarray(games.would_resign), 0)


def _lost_for_black():
  """Black to make the last move and lost whatever it plays: every searched value is exactly -1."""
  return position(LONE_WHITE).replace(move_count=jnp.int32(CFG.max_moves - 1))


def test_resign_threshold_minus_one_never_resigns():
  games = games_of([_lost_for_black()] * BATCH, [True] * BATCH)
  lost = fake_variables(value=-1.0)
  _, rec = step(lost, games, 0, resign_threshold=-1.0)
  np.testing.assert_array_equal(np.asarray(rec.root_value), -1.0)
  np.testing.assert_array_equal(np.asarray(rec.resigned), False)
  np.testing.assert_array_equal(np.asarray(rec.ended), True)            # by the move limit
  np.testing.assert_array_equal(np.asarray(rec.result), -1.0)
  _, rec = step(lost, games, 0, resign_threshold=-0.999)
  np.testing.assert_array_equal(np.asarray(rec.resigned), True)
  np.testing.assert_array_equal(np.asarray(rec.result), -1.0)


def test_no_resignation_before_resign_min_moves():
  games = games_of([_lost_for_black()] * BATCH, [True] * BATCH)          # move 7
  _, rec = step(fake_variables(), games, 0, resign_threshold=1.01, resign_min_moves=8)
  np.testing.assert_array_equal(np.asarray(rec.resigned), False)
  _, rec = step(fake_variables(), games, 0, resign_threshold=1.01, resign_min_moves=7)
  np.testing.assert_array_equal(np.asarray(rec.resigned), True)


def test_a_resigned_game_counts_only_the_moves_played():
  # Resigning at move m instead of playing the searched move: the game has m moves, not m + 1.
  starts = [go.init(CFG), play(go.init(CFG), "C3", "C2", "B2")]
  games = games_of(starts * 2, [True] * BATCH)
  _, rec = step(fake_variables(), games, 0, resign_threshold=1.01, resign_min_moves=0)
  np.testing.assert_array_equal(np.asarray(rec.resigned), True)
  np.testing.assert_array_equal(np.asarray(rec.result), [-1.0, 1.0, -1.0, 1.0])
  np.testing.assert_array_equal(np.asarray(rec.length), [0, 3, 0, 3])


def test_new_games_draws_the_no_resign_share():
  new_games = jax.jit(lambda key, fraction: selfplay.new_games(GAME, key, 1000,
                                                               no_resign_fraction=fraction))
  games = new_games(jax.random.PRNGKey(0), jnp.float32(0.2))
  assert abs(np.asarray(games.may_resign).mean() - 0.8) < 0.05
  assert not np.asarray(new_games(jax.random.PRNGKey(0), jnp.float32(1.0)).may_resign).any()
  assert np.asarray(new_games(jax.random.PRNGKey(0), jnp.float32(0.0)).may_resign).all()
  assert_fresh(jax.tree.map(lambda x: x[17], games.states))
  np.testing.assert_array_equal(np.asarray(games.would_resign), 0)


# ---------------------------------------------------------------------------- arena


def test_elo_difference():
  assert float(stats.elo_difference(jnp.float32(0.5), 10)) == pytest.approx(0.0, abs=1e-4)
  assert float(stats.elo_difference(jnp.float32(0.75), 10)) == pytest.approx(400 * np.log10(3),
                                                                             rel=1e-5)
  for s in (0.1, 0.3, 0.65):
    assert float(stats.elo_difference(jnp.float32(s), 10)) == pytest.approx(
        -float(stats.elo_difference(jnp.float32(1 - s), 10)), rel=1e-4)
  # A clean sweep counts as half a game lost: finite, and as far as the number of games allows.
  for games in (10, 40):
    top = float(stats.elo_difference(jnp.float32(1.0), games))
    eps = 0.5 / games
    assert top == pytest.approx(400 * np.log10((1 - eps) / eps), rel=1e-4)
    assert float(stats.elo_difference(jnp.float32(0.0), games)) == pytest.approx(-top, rel=1e-4)
  assert float(stats.elo_difference(jnp.float32(1.0), 40)) > float(
      stats.elo_difference(jnp.float32(1.0), 10))


MATCH_GAMES = 4


@functools.cache
def _match():
  # Gumbel noise off: a network's search is then deterministic.
  search = SEARCH.replace(gumbel_scale=0.0)
  return jax.jit(lambda a, b, key, temperature_moves: arena.play_match(
      GAME, helpers.fake_evaluator, a, b, key, num_games=MATCH_GAMES, search=search,
      temperature_moves=temperature_moves))


def match(a, b, temperature_moves=0):
  out = _match()(a, b, jax.random.PRNGKey(0), jnp.int32(temperature_moves))
  return {k: float(v) for k, v in out.items()}


def test_match_against_itself_splits_evenly():
  # Deterministic play: every game is the same game, won by the same colour, and each network
  # plays that colour in half the games.
  out = match(fake_variables(), fake_variables())
  assert out["wins"] + out["losses"] + out["draws"] == MATCH_GAMES
  assert out["wins"] == out["losses"] == MATCH_GAMES / 2
  assert out["draws"] == 0
  assert 2 <= out["length"] <= CFG.max_moves


def test_a_player_that_always_passes_loses_with_both_colours():
  passes, plays = np.zeros(A), np.zeros(A)
  passes[PASS], plays[PASS] = 50.0, -50.0
  passer, player = fake_variables(passes), fake_variables(plays)
  out = match(passer, player, temperature_moves=2)
  assert (out["wins"], out["losses"], out["draws"]) == (0, MATCH_GAMES, 0)
  assert out["length"] == CFG.max_moves          # the player never passes: no two passes in a row
  out = match(player, passer, temperature_moves=2)
  assert (out["wins"], out["losses"], out["draws"]) == (MATCH_GAMES, 0, 0)


def test_match_needs_an_even_number_of_games():
  with pytest.raises(ValueError, match="even"):
    arena.play_match(GAME, helpers.fake_evaluator, fake_variables(), fake_variables(),
                     jax.random.PRNGKey(0),
                     num_games=3, search=SEARCH, temperature_moves=0)
