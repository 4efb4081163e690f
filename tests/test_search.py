"""The mctx glue (agz_jax.search): masking inside the tree, terminal values, root masking and
a forced win found by search, on hand-drawn 5x5 positions.

Most tests use a fake network whose output is read from its `variables` (a fixed logit per
action and a constant value), so one compiled program serves every setting; one test runs a
tiny real AlphaZeroNet. Each jitted function is built once per module.
"""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest

from agz_jax import go, search
from agz_jax.game import Game
from agz_jax.search.action_selection import QTransform, puct_scores
from agz_jax.nets import AlphaZeroNet

import helpers
from configs import default  # noqa: E402  pylint: disable=wrong-import-position


# One config for the whole module: a 5x5 board, komi 5.5 (no draws), short history, and a move
# limit that the forced-win positions reach.
CFG = go.GoConfig(size=5, komi=5.5, history=2, max_moves=10)
GAME = Game(go, CFG)
A = CFG.num_actions
PASS = CFG.pass_action
BATCH = 4
MIN = np.finfo(np.float32).min


def _point(vertex):
  return helpers.point(CFG.size, vertex)


def fake_variables(logits=None, value=0.0):
  return helpers.fake_variables(A, logits, value)


@functools.cache
def _jit(name):
  return jax.jit(getattr(go, name), static_argnums=0)


def position(text, to_play=go.BLACK):
  size, black, white = go.parse_board(text)
  assert size == CFG.size
  return go.init(CFG, black=black, white=white, to_play=to_play)


def play(state, *vertices):
  for v in vertices:
    action = _point(v)
    assert bool(_jit("legal_actions")(CFG, state)[action]), v
    state = _jit("step")(CFG, state, jnp.int32(action))
  return state


def stack(states):
  """Pads a list of states to BATCH (repeating the first) and stacks them."""
  states = list(states) + [states[0]] * (BATCH - len(states))
  return jax.tree.map(lambda *xs: jnp.stack(xs), *states)


def legal(state):
  return np.asarray(_jit("legal_actions")(CFG, state))


KO = """
    . X O . .
    X O . O .
    . X O . .
    . . . . .
    . . . . .
"""

TRIPLE_KO = """
    O . O . O
    X O . O X
    . . . . .
    X O . . .
    . X O . .
"""

LONE_BLACK = """
    . . . . .
    . . . . .
    . . X . .
    . . . . .
    . . . . .
"""


def ko_start():
  return position(KO)


def triple_ko_before_b1():
  """Black to play B1; after it white's E5 would repeat the position after C3 (superko only)."""
  return play(position(TRIPLE_KO, to_play=go.WHITE), "C3", "B5", "A1", "D5", "A5")


# ---------------------------------------------------------------------------- recurrent_fn


@functools.cache
def _recurrent():
  return jax.jit(search.make_recurrent_fn(GAME, helpers.fake_evaluator))


def recurrent(states, actions, variables):
  actions = list(actions) + [actions[0]] * (BATCH - len(actions))
  return _recurrent()(variables, jax.random.PRNGKey(0), jnp.asarray(actions, jnp.int32),
                      stack(states))


def _softmax(x):
  e = np.exp(x - x.max())
  return e / e.sum()


def test_each_algorithm_reads_its_own_settings_whose_defaults_are_the_configs():
  fields = {f.name: f for f in dataclasses.fields(search.SearchConfig)}
  own = [name for names in search.ALGORITHM_SETTINGS.values() for name in names]
  assert sorted(own) == sorted(set(fields) - {"algorithm", "num_simulations", "min_pass_moves"})
  config = default.get_config().search
  for name in own:
    assert fields[name].default == config[name], name
  # An algorithm's caller gives only its own settings.
  alphago = search.SearchConfig(algorithm="alphago", num_simulations=8, c_puct=3.0)
  assert alphago.c_puct == 3.0 and alphago == helpers.search_config(
      algorithm="alphago", num_simulations=8, c_puct=3.0)


def test_recurrent_fn_masks_ko_and_superko_inside_the_tree():
  logits = np.linspace(-1.0, 1.0, A)
  variables = fake_variables(logits, value=0.25)
  starts = [ko_start(), triple_ko_before_b1()]
  out, after = recurrent(starts, [_point("C4"), _point("B1")], variables)
  prior = np.asarray(out.prior_logits)

  # The embedding is the stepped game.
  for i, (s, v) in enumerate(zip(starts, ["C4", "B1"])):
    expected = play(s, v)
    np.testing.assert_array_equal(np.asarray(after.board[i]), np.asarray(expected.board))
    assert int(after.to_play[i]) == go.WHITE
    mask = legal(expected)
    np.testing.assert_array_equal(prior[i] == MIN, ~mask)
    # The legal part of the prior is the network's prior, renormalised.
    np.testing.assert_allclose(_softmax(prior[i][mask]), _softmax(logits[mask]), rtol=1e-5)

  # Ko: white may not take back at once.
  assert prior[0, _point("B4")] == MIN
  assert prior[0, _point("D3")] > MIN and prior[0, PASS] > MIN
  # Triple ko: E5 takes a ko that is no simple ko, yet repeats an earlier position.
  assert prior[1, _point("E5")] == MIN
  assert prior[1, _point("A1")] == MIN
  assert prior[1, _point("E3")] > MIN


def test_recurrent_fn_non_terminal_step():
  out, _ = recurrent([ko_start(), triple_ko_before_b1()], [_point("C4"), _point("B1")],
                     fake_variables(value=0.25))
  np.testing.assert_array_equal(np.asarray(out.reward), 0.0)
  np.testing.assert_array_equal(np.asarray(out.discount), -1.0)
  np.testing.assert_allclose(np.asarray(out.value), 0.25)


def _lone_black(to_play):
  return position(LONE_BLACK, to_play=to_play)


def test_recurrent_fn_game_end_reward_is_the_result_for_the_mover():
  # Black owns the whole board (25 - 5.5): black wins whoever ends the game.
  white_ends = play(_lone_black(go.BLACK), "pass")           # white to play, black just passed
  black_ends = play(_lone_black(go.WHITE), "pass")           # black to play, white just passed
  at_limit = _lone_black(go.WHITE).replace(move_count=jnp.int32(CFG.max_moves - 1))
  assert int(white_ends.passes) == 1 and int(black_ends.passes) == 1
  states = [white_ends, black_ends, at_limit, ko_start()]
  actions = [PASS, PASS, _point("A1"), _point("C4")]
  out, after = recurrent(states, actions, fake_variables(value=0.25))

  ended = np.asarray(after.terminated)
  np.testing.assert_array_equal(ended, [True, True, True, False])
  results = [float(_jit("result")(CFG, jax.tree.map(lambda x: x[i], after))) for i in range(3)]
  # The move limit: white's A1 makes every empty point neutral: 1 - 1 - 5.5 < 0.
  assert results == [1.0, 1.0, -1.0]
  movers = [go.WHITE, go.BLACK, go.WHITE]
  np.testing.assert_array_equal(np.asarray(out.reward)[:3], np.multiply(results, movers))
  np.testing.assert_array_equal(np.asarray(out.reward), [-1.0, 1.0, 1.0, 0.0])
  np.testing.assert_array_equal(np.asarray(out.discount), [0.0, 0.0, 0.0, -1.0])
  # A finished game is worth its reward alone: the network is not asked.
  np.testing.assert_array_equal(np.asarray(out.value), [0.0, 0.0, 0.0, 0.25])
  # Only pass stays open below a finished game.
  prior = np.asarray(out.prior_logits)
  assert np.all(prior[:3, :PASS] == MIN) and np.all(prior[:3, PASS] > MIN)


def test_recurrent_fn_below_a_finished_game_gives_nothing():
  over = play(_lone_black(go.WHITE), "pass", "pass")
  assert bool(over.terminated)
  out, after = recurrent([over, over, over], [PASS, 0, _point("C3")], fake_variables(value=0.25))
  np.testing.assert_array_equal(np.asarray(out.reward), 0.0)
  np.testing.assert_array_equal(np.asarray(out.discount), 0.0)
  np.testing.assert_array_equal(np.asarray(out.value), 0.0)
  np.testing.assert_array_equal(np.asarray(after.board), np.stack([np.asarray(over.board)] * BATCH))


# ---------------------------------------------------------------------------- run_search


@functools.cache
def _search(algorithm, real_net):
  """Jitted run_search; noise settings are traced so that one program serves them all."""
  evaluator = _net_evaluator() if real_net else helpers.fake_evaluator

  def run(variables, states, key, gumbel_scale, dirichlet_fraction, dirichlet_alpha):
    settings = helpers.search_config(
        algorithm=algorithm, num_simulations=48, max_num_considered_actions=16,
        gumbel_scale=gumbel_scale, dirichlet_fraction=dirichlet_fraction,
        dirichlet_alpha=dirichlet_alpha)
    return search.run_search(GAME, evaluator, variables, states, key, settings)

  return jax.jit(run)


def run_search(algorithm, variables, states, seed=0, *, real_net=False, gumbel_scale=1.0,
               dirichlet_fraction=0.25, dirichlet_alpha=None):
  alpha = GAME.dirichlet_alpha if dirichlet_alpha is None else dirichlet_alpha
  return _search(algorithm, real_net)(variables, states, jax.random.PRNGKey(seed),
                                      jnp.float32(gumbel_scale), jnp.float32(dirichlet_fraction),
                                      jnp.float32(alpha))


def _net_evaluator():
  model = AlphaZeroNet(blocks=1, channels=8, value_hidden=16)
  return search.network(GAME, lambda v, x: model.apply(v, x, train=False), "agz17")


@functools.cache
def _net_variables():
  model = AlphaZeroNet(blocks=1, channels=8, value_hidden=16)
  planes = jnp.zeros((1, CFG.size, CFG.size, 2 * CFG.history + 1))
  return model.init(jax.random.PRNGKey(3), planes, train=False)


def _masking_states():
  """Positions with occupied points, a ko and a superko-only point for the player to move."""
  return [play(ko_start(), "C4"), play(triple_ko_before_b1(), "B1"), go.init(CFG),
          play(_lone_black(go.WHITE), "C4", "D3")]


@pytest.mark.parametrize("algorithm", ["gumbel", "puct"])
def test_run_search_never_weights_illegal_actions(algorithm):
  states = _masking_states()
  masks = np.stack([legal(s) for s in states])
  assert not masks[0, _point("B4")] and not masks[1, _point("E5")]
  # Illegal actions get the network's highest prior: the mask, not the net, must stop them.
  logits = np.zeros(A)
  logits[[_point("B4"), _point("E5"), _point("A1"), _point("C3"), _point("B5")]] = 5.0
  cases = [(fake_variables(logits), False)]
  if algorithm == "gumbel":
    cases.append((_net_variables(), True))
  for variables, real_net in cases:
    for seed in range(2):
      out = run_search(algorithm, variables, stack(states), seed, real_net=real_net)
      weights = np.asarray(out.action_weights)
      np.testing.assert_array_equal(weights[~masks], 0.0)
      np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=1e-5)
      visits = np.asarray(out.search_tree.summary().visit_counts)
      np.testing.assert_array_equal(visits[~masks], 0)
      action = np.asarray(out.action)
      assert all(masks[i, a] for i, a in enumerate(action)), action


@pytest.mark.parametrize("algorithm", ["gumbel", "puct"])
def test_with_a_key_per_game_a_games_search_does_not_depend_on_its_batch(algorithm):
  evaluator = _net_evaluator()
  settings = helpers.search_config(algorithm=algorithm, num_simulations=16,
                                   max_num_considered_actions=8)
  search_fn = jax.jit(lambda v, states, keys: search.run_search(
      GAME, evaluator, v, states, keys, settings))
  run = lambda states, keys: search_fn(_net_variables(), states, keys)
  states = _masking_states()
  keys = jax.random.split(jax.random.PRNGKey(7), len(states))
  together = run(stack(states), keys)
  one = jax.tree.map(lambda x: x[None], states[2])
  alone = run(one, keys[2:3])                                     # the same game and key
  other_key = run(one, keys[1:2])                                 # the same game, another key
  np.testing.assert_allclose(np.asarray(alone.action_weights[0]),
                             np.asarray(together.action_weights[2]), atol=1e-6)
  assert int(alone.action[0]) == int(together.action[2])
  np.testing.assert_array_equal(np.asarray(alone.search_tree.summary().visit_counts[0]),
                                np.asarray(together.search_tree.summary().visit_counts[2]))
  # The key matters: its root noise changes the search (the empty board has many equal moves).
  assert not np.allclose(np.asarray(other_key.search_tree.summary().visit_counts[0]),
                         np.asarray(together.search_tree.summary().visit_counts[2]))


def test_gumbel_policy_with_mctxs_noise_is_mctxs_gumbel_policy():
  """Our batched Gumbel search takes its noise from the caller; given the noise mctx draws from a
  key (split the key, Gumbel noise of the logits' shape) it returns mctx's result."""
  evaluator = _net_evaluator()
  states = stack(_masking_states())

  def both(v, key):
    root = search.evaluate(GAME, evaluator, v, states, key)
    theirs = mctx.gumbel_muzero_policy(
        v, key, mctx.RootFnOutput(prior_logits=root[0], value=root[1], embedding=states),
        search.make_recurrent_fn(GAME, evaluator), 16, invalid_actions=~root[2],
        max_num_considered_actions=8)
    noise = jax.random.gumbel(jax.random.split(key)[1], root[0].shape, root[0].dtype)
    ours = search.gumbel_policy(
        v, key, mctx.RootFnOutput(prior_logits=root[0], value=root[1], embedding=states),
        search.make_recurrent_fn(GAME, evaluator), 16, invalid_actions=~root[2], gumbel=noise,
        max_num_considered_actions=8)
    return ours, theirs

  run = jax.jit(both)
  for seed in range(3):
    ours, theirs = run(_net_variables(), jax.random.PRNGKey(seed))
    np.testing.assert_array_equal(np.asarray(ours.action), np.asarray(theirs.action))
    np.testing.assert_allclose(np.asarray(ours.action_weights), np.asarray(theirs.action_weights),
                               rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(np.asarray(ours.search_tree.summary().visit_counts),
                                  np.asarray(theirs.search_tree.summary().visit_counts))


def test_dirichlet_alpha_scales_with_the_board():
  assert Game(go, go.GoConfig(size=19)).dirichlet_alpha == pytest.approx(0.03)
  assert Game(go, go.GoConfig(size=9)).dirichlet_alpha == pytest.approx(0.03 * 361 / 81)
  assert Game(go, go.GoConfig(size=5)).dirichlet_alpha == pytest.approx(0.03 * 361 / 25)


def test_unknown_algorithm_is_refused():
  with pytest.raises(ValueError, match="gumbel"):
    helpers.search_config(algorithm="alphabeta")


# ---------------------------------------------------------------------------- Q transforms

CENTRE = 12


def _centre_worse_by(cost):
  """An evaluator: prior 60% on the centre; whoever holds the centre is `cost` worse off, so
  the move that takes it is worth -cost to its player, every other move 0."""

  def evaluate(variables, states, rng_key):
    del variables, rng_key
    batch = states.board.shape[0]
    logits = jnp.zeros((batch, CFG.num_actions)).at[:, CENTRE].set(jnp.log(0.6 * 25 / 0.4))
    centre = states.board.reshape(batch, -1)[:, CENTRE]
    held = jnp.where(centre == states.to_play, -cost, cost)
    return logits, jnp.where(centre == go.EMPTY, 0.0, held)

  return evaluate


@functools.cache
def _centre_search(cost, num_simulations, **settings):
  """A PUCT search from the empty board with _centre_worse_by(cost)."""
  settings = helpers.search_config(algorithm="puct", num_simulations=num_simulations,
                                   dirichlet_fraction=0.0, **settings)
  states = jax.tree.map(lambda x: x[None], go.init(CFG))
  return jax.jit(lambda key: search.run_search(GAME, _centre_worse_by(cost), {}, states, key,
                                                settings))(jax.random.PRNGKey(0))


def _q_search(q_transform):
  return _centre_search(0.1, 150, q_transform=q_transform)


def test_bounded_q_lets_a_small_value_difference_weigh_little_against_the_prior():
  shares = {}
  for name in ("siblings", "bounded"):
    visits = np.asarray(_q_search(name).search_tree.summary().visit_counts[0], np.float64)
    shares[name] = visits[CENTRE] / visits.sum()
  # Stretched between siblings, 0.1 of value is the whole [0, 1] scale: once the centre's
  # prior term has fallen below the others', they take most of the visits. On the values'
  # own scale (-0.1 -> 0.45 against 0.5) the prior's 60% keeps them on the centre.
  assert shares["bounded"] > 0.9, shares
  assert shares["siblings"] < 0.5, shares


def test_bounded_q_is_the_value_on_its_own_scale_and_a_loss_unvisited():
  tree = jax.tree.map(lambda x: x[0], _q_search("siblings").search_tree)
  visits = np.asarray(tree.children_visits[0])
  q_values = np.asarray(tree.qvalues(0), np.float64)
  q, _ = puct_scores(tree, 0, pb_c_init=1.25, pb_c_base=19652.0, q_transform="bounded")
  want = np.where(visits > 0, (q_values + 1) / 2, 0.0)
  np.testing.assert_allclose(np.asarray(q), want, atol=1e-6)
  assert np.any(np.delete(visits, CENTRE) > 0)    # some visited child besides the centre


def test_unknown_q_transform_is_refused():
  with pytest.raises(ValueError, match="q_transform must be one of siblings, bounded"):
    helpers.search_config(algorithm="puct", q_transform="minmax")


# ---------------------------------------------------------------------------- first-play urgency


def _fpu_search(first_play):
  return _centre_search(0.5, 100, q_transform="bounded", first_play=first_play)


def test_first_play_at_the_parents_value_lets_the_search_leave_a_blunder_the_prior_likes():
  shares = {}
  for first_play in ("loss", "parent", "reduction"):
    visits = np.asarray(_fpu_search(first_play).search_tree.summary().visit_counts[0], np.float64)
    shares[first_play] = visits[CENTRE] / visits.sum()
  # Unvisited moves as losses: the centre's Q term (0.25) beats every unvisited move's 0
  # and its prior term (0.6 against 0.016 each) does the rest, so it keeps the visits. At the
  # parent's value (about -0.5 once the centre is searched: 0.25 on the bounded scale, as
  # the centre's) the others' prior terms pass the centre's, which shrinks with its visits,
  # after some 35 simulations: they are looked at, found better and take the visits.
  assert shares["loss"] > 0.9, shares
  assert shares["parent"] < 0.5, shares
  assert shares["parent"] <= shares["reduction"] <= shares["loss"], shares


def test_first_play_values_of_the_transform():
  tree = jax.tree.map(lambda x: x[0], _fpu_search("parent").search_tree)
  visits = np.asarray(tree.children_visits[0])
  q_values = np.asarray(tree.qvalues(0), np.float64)
  parent = float(tree.node_values[0])
  logits = np.asarray(tree.children_prior_logits[0], np.float64)
  prior = np.exp(logits - logits.max())
  prior /= prior.sum()
  visited_prior = prior[visits > 0].sum()
  assert 0 < visited_prior < 1 and np.any(visits == 0)
  legal = logits > np.finfo(np.float32).min / 2
  for first_play, unvisited in [("loss", -1.0), ("parent", parent),
                                ("reduction", parent - 0.3 * np.sqrt(visited_prior))]:
    transform = QTransform("bounded", first_play, fpu_reduction=0.3)
    want = (np.where(visits > 0, q_values, np.where(legal, unvisited, -1.0)) + 1) / 2
    np.testing.assert_allclose(np.asarray(transform(tree, 0)), want, atol=1e-5)
  # Stretched between siblings, the unvisited legal value takes part in the stretch.
  values = np.where(visits > 0, q_values, parent)
  low = min(parent, values[legal].min())
  high = max(parent, values[legal].max())
  np.testing.assert_allclose(np.asarray(QTransform("siblings", "parent")(tree, 0)),
                             np.where(legal, (values - low) / (high - low), 0.0), atol=1e-5)


@pytest.mark.parametrize("q_transform", ["bounded", "siblings"])
def test_first_play_never_sends_the_search_to_an_illegal_move_inside_the_tree(q_transform):
  """Black fills its own eyes; white's only legal move is then a pass (a white stone in an eye
  is suicide). Every position is worth +0.5 to its mover, so white's pass, once searched,
  is below white's mean value: an unvisited move at the parent's value would beat it, and
  inside the tree (where only the root's invalid actions are masked) the illegal ones must
  not count as such."""
  eyes = (0, 12, 24)
  state = go.init(CFG, black=[p for p in range(25) if p not in eyes], to_play=go.BLACK)
  settings = helpers.search_config(algorithm="puct", num_simulations=60, dirichlet_fraction=0.0,
                                   q_transform=q_transform, first_play="parent")
  tree = jax.jit(lambda key: search.run_search(
      GAME, helpers.fake_evaluator, fake_variables(value=0.5), stack([state]), key,
      settings))(jax.random.PRNGKey(0)).search_tree
  logits = np.asarray(tree.children_prior_logits[0])
  visits = np.asarray(tree.children_visits[0])
  used = np.asarray(tree.node_visits[0]) > 0
  illegal = logits <= np.finfo(np.float32).min / 2
  assert np.sum(used) > 3 and illegal[used].any()           # white's nodes: pass alone legal
  assert visits[used][illegal[used]].sum() == 0


def test_unknown_first_play_is_refused():
  with pytest.raises(ValueError, match="first_play must be one of loss, parent, reduction, "
                                       "got 'zero'"):
    helpers.search_config(algorithm="puct", first_play="zero")
  with pytest.raises(ValueError, match="fpu_reduction must be at least 0"):
    helpers.search_config(algorithm="puct", first_play="reduction", fpu_reduction=-0.1)


# ---------------------------------------------------------------------------- prior temperature


@pytest.mark.parametrize("given_root", [False, True])
def test_the_prior_temperature_divides_the_logits_at_every_node(given_root):
  """A search at temperature 2 is the search at 1 of a network whose logits are halved: the
  same visits and priors, at the root (evaluated inside or given, as self-play gives it) and
  inside the tree."""
  logits = 3.0 * np.sin(np.arange(A, dtype=np.float32))
  states = stack([play(go.init(CFG), "C3")])

  def run(temperature, scale):
    settings = helpers.search_config(algorithm="puct", num_simulations=40,
                                     dirichlet_fraction=0.0, q_transform="bounded",
                                     first_play="parent", prior_temperature=temperature)
    variables = fake_variables(logits * scale, value=0.1)

    def go_(key):  # a given root as the search sees its nodes (self-play's)
      root = (search.evaluate(GAME, search.search_evaluator(helpers.fake_evaluator, settings),
                              variables, states, key) if given_root else None)
      return search.run_search(GAME, helpers.fake_evaluator, variables, states, key, settings,
                               root=root).search_tree
    return jax.jit(go_)(jax.random.PRNGKey(3))

  hot, halved, plain = run(2.0, 1.0), run(1.0, 0.5), run(1.0, 1.0)
  np.testing.assert_array_equal(hot.children_visits, halved.children_visits)
  used = np.asarray(hot.node_visits) > 0
  assert used.sum() > 2 * BATCH  # nodes inside the tree
  prior = lambda tree: np.asarray(jax.nn.softmax(tree.children_prior_logits))[used]
  np.testing.assert_allclose(prior(hot), prior(halved), atol=1e-6)
  assert np.abs(prior(hot) - prior(plain)).max() > 0.05


def test_a_prior_temperature_that_cannot_be_is_refused():
  with pytest.raises(ValueError, match="prior_temperature must be above 0, got 0.0"):
    helpers.search_config(algorithm="puct", prior_temperature=0.0)
  with pytest.raises(ValueError, match="not 'alphago': AlphaGo's flattens its prior with its "
                                       "own beta"):
    search.SearchConfig(algorithm="alphago", num_simulations=8, prior_temperature=1.5)
  with pytest.raises(ValueError, match="prior_temperature is a setting of the PUCT search, not "
                                       "'gumbel'$"):
    helpers.search_config(algorithm="gumbel", prior_temperature=1.5)


# ---------------------------------------------------------------------------- value scale


@pytest.mark.parametrize("given_root", [False, True])
def test_the_value_scale_multiplies_each_nodes_value_by_its_move_numbers_entry(given_root):
  """Every node's value (the root's, evaluated inside or given as self-play gives it, and each
  leaf's) is the evaluator's times the entry of its position's move number; a finished game
  keeps its exact value."""
  scale = (1.0, 0.5, 0.25)
  states = stack([play(go.init(CFG), "C3"), play(go.init(CFG), "C3", "B2", "D4")])
  settings = helpers.search_config(algorithm="puct", num_simulations=40, dirichlet_fraction=0.0,
                                   q_transform="bounded", first_play="parent",
                                   value_scale=list(scale), value_scale_moves=2)
  variables = fake_variables(3.0 * np.sin(np.arange(A, dtype=np.float32)), value=0.4)

  def go_(key):  # a given root as the search sees its nodes (self-play's)
    root = (search.evaluate(GAME, search.search_evaluator(helpers.fake_evaluator, settings),
                            variables, states, key) if given_root else None)
    return search.run_search(GAME, helpers.fake_evaluator, variables, states, key, settings,
                             root=root).search_tree

  tree = jax.jit(go_)(jax.random.PRNGKey(0))
  used = (np.asarray(tree.node_visits) > 0) & ~np.asarray(tree.embeddings.terminated)
  moves = np.asarray(tree.embeddings.move_count)
  assert set(np.unique(moves[used])) >= {1, 2, 3, 4, 5}  # every entry is met, the last beyond
  want = 0.4 * np.asarray(scale)[np.minimum(moves // 2, 2)]
  np.testing.assert_allclose(np.asarray(tree.raw_values)[used], want[used], rtol=1e-6)
  np.testing.assert_allclose(np.asarray(tree.raw_values)[:, 0], [0.4, 0.2, 0.4, 0.4], rtol=1e-6)
  # A scale of 1 throughout is no scale: the search as without one.
  run = jax.jit(lambda key, settings: search.run_search(
      GAME, helpers.fake_evaluator, variables, states, key, settings).search_tree,
      static_argnums=1)
  ones = run(jax.random.PRNGKey(0), settings.replace(value_scale=(1.0,)))
  plain = run(jax.random.PRNGKey(0), settings.replace(value_scale=()))
  np.testing.assert_array_equal(ones.children_visits, plain.children_visits)
  np.testing.assert_allclose(ones.node_values, plain.node_values, rtol=1e-6)
  assert not np.allclose(tree.node_values, plain.node_values)


def test_a_value_scale_that_cannot_be_is_refused():
  for scale, message in ((["a"], "must be a tuple of numbers"), (3.0, "must be a tuple of numbers"),
                         ("05", "must be a tuple of numbers"),
                         ((1.0, -0.5), r"entries must be from 0 to 1, got \(1.0, -0.5\)"),
                         ((1.5,), "entries must be from 0 to 1"),
                         ((float("nan"),), "entries must be from 0 to 1")):
    with pytest.raises(ValueError, match=message):
      helpers.search_config(algorithm="puct", value_scale=scale)
  with pytest.raises(ValueError, match="value_scale_moves must be a positive integer, got 0"):
    helpers.search_config(algorithm="puct", value_scale=(1.0,), value_scale_moves=0)
  with pytest.raises(ValueError, match="value_scale is a setting of the PUCT search, not 'gumbel'"):
    helpers.search_config(algorithm="gumbel", value_scale=(0.5,))
  # A config's list (a checkpoint's JSON) becomes a tuple: the settings stay hashable.
  assert hash(helpers.search_config(algorithm="puct", value_scale=[1, 0.5]))


# ---------------------------------------------------------------------------- forced win

# Black to play, two moves before the move limit (black's move and white's reply end the game).
# The white ring (10 stones) has one liberty, B3. Without the capture white wins: black has 9
# stones and the 5 points of column E, white 10 stones (B3 is neutral): 14 - 10 - 5.5 < 0.
# Black B3 captures the ring, and then whatever white replies black wins by far.
RING = """
    O O O X .
    O X O X .
    O . O X .
    O O O X .
    X X X X .
"""


def ring_position():
  return position(RING).replace(move_count=jnp.int32(CFG.max_moves - 2))


def test_ring_position_is_a_forced_win_by_b3_only():
  """The premise of the search test, checked by brute force over both plies."""
  s = ring_position()
  black_moves = np.nonzero(legal(s))[0]
  assert len(black_moves) == 7                 # B3, column E, pass
  for a in black_moves:
    after = _jit("step")(CFG, s, jnp.int32(a))
    replies = np.nonzero(legal(after))[0]
    outcomes = {float(_jit("result")(CFG, _jit("step")(CFG, after, jnp.int32(r)))) for r in replies}
    assert outcomes == ({1.0} if a == _point("B3") else {-1.0}), (a, outcomes)


@pytest.mark.parametrize("algorithm", ["gumbel", "puct"])
def test_search_finds_the_winning_capture_with_an_uninformed_network(algorithm):
  # Zero logits and zero value: only the game results at the leaves tell the moves apart, two
  # plies down (white's reply ends the game), so the sign of rewards and discounts matters.
  states = stack([ring_position()] * BATCH)
  b3 = _point("B3")
  for seed in range(2):
    out = run_search(algorithm, fake_variables(), states, seed, dirichlet_fraction=0.0)
    summary = out.search_tree.summary()
    visits = np.asarray(summary.visit_counts)
    weights = np.asarray(out.action_weights)
    np.testing.assert_array_equal(np.argmax(weights, axis=1), b3)
    if algorithm == "gumbel":
      # Sequential halving spreads visits by design; the improved policy and the action decide.
      np.testing.assert_array_equal(np.asarray(out.action), b3)
      assert np.all(weights[:, b3] > 0.9)
    else:
      assert np.all(visits[:, b3] > visits.sum(axis=1) / 2)
      # Most visits go down the winning line, so the root value is black's.
      assert np.all(np.asarray(summary.value) > 0.5)
    # Q-values: white's node below B3 loses for white whatever it does, below every other
    # black move it wins (once a reply has been searched, i.e. two visits or more).
    qvalues = np.asarray(summary.qvalues)
    assert np.all(qvalues[:, b3] > 0.5)
    searched = visits >= 2
    searched[:, b3] = False
    assert searched.any()
    assert np.all(qvalues[searched] < 0.0)


# ---------------------------------------------------------------------------- subtree reuse

SIMS = 24


@functools.cache
def _puct():
  settings = helpers.search_config(algorithm="puct", num_simulations=SIMS,
                                   dirichlet_fraction=0.0)
  return jax.jit(lambda variables, states, key: search.run_search(
      GAME, helpers.fake_evaluator, variables, states, key, settings))


def _subtree(tree, b, node):
  """Nodes under `node` of batch element b, by walking children_index (a plain reference)."""
  children = np.asarray(tree.children_index[b])
  out, todo = [], [node]
  while todo:
    n = todo.pop()
    out.append(n)
    todo.extend(int(c) for c in children[n] if c >= 0)
  return sorted(out)


def _uneven_logits():
  """A prior that prefers a few moves, so that visits gather along one line."""
  logits = np.linspace(0.0, 0.5, A)
  for vertex, logit in (("B2", 4.0), ("D4", 3.5), ("B4", 3.0), ("D2", 2.5)):
    logits[_point(vertex)] = logit
  return logits


def test_reroot_keeps_the_subtree_of_the_move_played():
  states = stack([go.init(CFG), play(go.init(CFG), "C3")])
  variables = fake_variables(_uneven_logits())
  tree = _puct()(variables, states, jax.random.PRNGKey(0)).search_tree
  visits = np.asarray(tree.children_visits[:, 0])
  best = visits.argmax(axis=1)
  child = np.asarray(tree.children_index)[np.arange(BATCH), 0, best]
  new, kept = jax.jit(search.reroot, static_argnums=2)(tree, jnp.asarray(child, jnp.int32), 2 * SIMS + 1)
  for b in range(BATCH):
    old_nodes = _subtree(tree, b, int(child[b]))
    assert int(kept[b]) == len(old_nodes) > 1
    assert new.node_visits.shape[1] == 2 * SIMS + 1
    # Old node old_nodes[i] is new node i: statistics and positions move with it.
    for i, n in enumerate(old_nodes):
      assert int(new.node_visits[b, i]) == int(tree.node_visits[b, n])
      np.testing.assert_array_equal(new.children_visits[b, i], tree.children_visits[b, n])
      np.testing.assert_array_equal(new.embeddings.board[b, i], tree.embeddings.board[b, n])
      for a in np.flatnonzero(np.asarray(tree.children_index[b, n]) >= 0):
        assert old_nodes[int(new.children_index[b, i, a])] == int(tree.children_index[b, n, a])
      if i:
        assert old_nodes[int(new.parents[b, i])] == int(tree.parents[b, n])
    assert int(new.parents[b, 0]) == -1
    assert np.all(np.asarray(new.node_visits[b, len(old_nodes):]) == 0)
    after = play(jax.tree.map(lambda x: x[b], states), go.action_to_gtp(CFG, int(best[b])))
    np.testing.assert_array_equal(new.embeddings.board[b, 0], after.board)
