"""The fast policies' features (agz_jax.alphago.patterns) against a slow pure-Python oracle.

Positions come from games of random sensible moves (many captures and ataris), on 7x7, 9x9
and 19x19, plus hand-drawn captures for the nakade feature. The dictionaries are harvested
from the same positions by the module; the oracle finds canonical patterns by transforming the
whole board, so a wrong point permutation, a wrong liberty count or a wrong lookup all show.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import go
from agz_jax.alphago import patterns

import reference_patterns as ref


@functools.cache
def _games(size, num_games, length, seed):
  cfg = go.GoConfig(size=size)

  def game(key):
    def body(state, k):
      sensible = go.sensible_moves(cfg, state)
      a = jax.random.categorical(k, jnp.where(sensible, 0.0, -1e9))
      a = jnp.where(jnp.any(sensible), a, cfg.pass_action)
      state = go.step(cfg, state, a)
      return state, state
    return jax.lax.scan(body, go.init(cfg), jax.random.split(key, length))[1]

  history = jax.jit(jax.vmap(game))(jax.random.split(jax.random.PRNGKey(seed), num_games))
  return cfg, jax.tree.map(lambda x: np.asarray(x).reshape((-1,) + x.shape[2:]), history)


def _pick(states, rows):
  return jax.tree.map(lambda x: x[np.asarray(rows)], states)


def _dictionaries(cfg, states, capacity):
  counter = patterns.PatternCounter()
  counter.add(jax.jit(jax.vmap(functools.partial(patterns.harvest_codes, cfg)))(states))
  return {k: counter.dictionary(k, capacity, 1) for k in patterns.KINDS}


@functools.cache
def _nakade():
  return ref.nakade_ids()


def _check_against_reference(cfg, states, codes):
  tables = patterns.make_tables(codes)
  ids = jax.jit(jax.vmap(lambda s: patterns.local_ids(cfg, tables, s, patterns.TREE_GROUPS)))(states)
  dictionaries = {k: [tuple(map(int, row)) for row in v] for k, v in codes.items()}
  hits = {g: 0 for g in patterns.TREE_GROUPS}
  for i in range(states.board.shape[0]):
    board = [int(x) for x in states.board[i]]
    before, before2 = ([int(x) for x in states.previous_boards[i, j]] for j in (0, 1))
    expected = ref.local_ids(board, before, before2, int(states.to_play[i]), cfg.size,
                             dictionaries, _nakade())
    for g in patterns.TREE_GROUPS:
      np.testing.assert_array_equal(np.asarray(ids[g][i]), expected[g],
                                    err_msg=f"group {g}, position {i}\n{go.to_ascii(cfg, _pick(states, i))}")
      hits[g] += sum(x >= 0 for x in expected[g])
  return hits


@pytest.mark.parametrize("size,rows", [(7, range(0, 400, 9)), (9, range(3, 600, 13)),
                                       (19, (40, 150, 333, 610))])
def test_features_equal_the_reference(size, rows):
  cfg, states = _games(size, 4 if size < 19 else 1, {7: 100, 9: 150, 19: 700}[size], size)
  rows = [r for r in rows if r < states.board.shape[0]]
  picked = _pick(states, rows)
  # A small capacity leaves out rare patterns, so both "found" and "not found" are checked.
  codes = _dictionaries(cfg, picked, capacity=60 if size < 19 else 400)
  hits = _check_against_reference(cfg, picked, codes)
  for g in ("response", "save_atari", "neighbour", "response_pattern", "pattern_3x3",
            "self_atari", "distance_1", "distance_2", "pattern_diamond"):
    assert hits[g] > 0, f"no position lit {g}: the test would not see it wrong"


NAKADE = """
. . . . . . .
X X X X X . .
X O O O X . .
X X X . X . .
. . . . . . .
. . . . . . .
. . . . . . .
"""


def test_nakade_lights_the_taken_points_with_their_shape():
  size, black, white = go.parse_board(NAKADE)
  cfg = go.GoConfig(size=size)
  state = go.init(cfg, black=black, white=white, to_play=go.BLACK)
  # Two moves away from the group, then black takes white's three stones on their last liberty.
  state = go.play(cfg, [6 * size + 6, 6 * size + 0, 3 * size + 3], state)
  taken = (np.asarray(state.previous_boards[0]) == go.WHITE) & (np.asarray(state.board) == 0)
  assert int(state.to_play) == go.WHITE and taken.sum() == 3
  tables = patterns.make_tables({k: np.full((4, 2), -1, np.int32) for k in patterns.KINDS})
  ids = np.asarray(jax.jit(lambda s: patterns.local_ids(cfg, tables, s, patterns.ROLLOUT_GROUPS))(
      state)["nakade"])
  np.testing.assert_array_equal(ids >= 0, taken)
  expected = ref.local_ids([int(x) for x in state.board], [int(x) for x in state.previous_boards[0]],
                           [int(x) for x in state.previous_boards[1]], int(state.to_play), size,
                           {k: [] for k in patterns.KINDS}, _nakade())
  np.testing.assert_array_equal(ids, expected["nakade"])
  # The middle point of a straight three (its vital point) differs from the two ends, which
  # are alike under the symmetries.
  assert ids[2 * size + 1] == ids[2 * size + 3] != ids[2 * size + 2]


def _transform_state(cfg, state, k):
  perm = go.symmetry_permutations(cfg.size)[k]
  inverse = np.argsort(perm)
  chain = np.asarray(state.chain)[..., perm]
  chain = np.where(chain < cfg.num_points, inverse[np.minimum(chain, cfg.num_points - 1)], chain)
  return state.replace(board=np.asarray(state.board)[..., perm],
                       previous_boards=np.asarray(state.previous_boards)[..., perm],
                       chain=chain.astype(np.int16)), perm


def test_features_are_invariant_under_the_board_symmetries():
  cfg, states = _games(9, 4, 150, 9)
  picked = _pick(states, range(5, 600, 23))
  tables = patterns.make_tables(_dictionaries(cfg, picked, capacity=200))
  features = jax.jit(jax.vmap(lambda s: patterns.indices(cfg, tables, s, patterns.TREE_GROUPS)))
  base = np.asarray(features(picked))
  assert (base < patterns.num_features(tables, patterns.TREE_GROUPS)).any()
  for k in range(1, 8):
    moved, perm = _transform_state(cfg, picked, k)
    np.testing.assert_array_equal(np.asarray(features(moved)), base[:, perm], err_msg=f"symmetry {k}")


def test_canonical_codes_are_the_smallest_over_the_symmetries():
  rng = np.random.default_rng(0)
  for kind in patterns.KINDS.values():
    states = rng.integers(0, patterns.NUM_STATES, (50, kind.num_points))
    slot = rng.integers(0, len(patterns.DIAMOND), 50)
    hi, lo = patterns.canonical(kind, states, slot)
    perm = patterns.point_permutations(kind)
    for g in range(8):
      moved = np.empty_like(states)
      moved[:, perm[g]] = states
      moved_slot = perm[g][slot] if kind.slot else slot
      h2, l2 = patterns.canonical(kind, moved, moved_slot)
      np.testing.assert_array_equal(h2, hi)
      np.testing.assert_array_equal(l2, lo)
      raw = patterns.pack(kind, moved, moved_slot)
      assert np.all((hi < raw[0]) | ((hi == raw[0]) & (lo <= raw[1])))
    # jax and numpy agree
    jh, jl = patterns.canonical(kind, jnp.asarray(states), jnp.asarray(slot))
    np.testing.assert_array_equal(np.asarray(jh), hi)
    np.testing.assert_array_equal(np.asarray(jl), lo)


def test_lookup_finds_every_symmetric_code_and_nothing_else():
  kind = patterns.KINDS["response"]
  rng = np.random.default_rng(1)
  states = rng.integers(0, patterns.NUM_STATES, (40, kind.num_points))
  slot = rng.integers(0, len(patterns.DIAMOND), 40)
  hi, lo = patterns.canonical(kind, states, slot)
  codes = np.full((64, 2), -1, np.int32)
  codes[:30] = np.stack([hi[:30], lo[:30]], axis=1)
  table = jax.tree.map(jnp.asarray, patterns.Dictionary.expand(kind, codes))
  perm = patterns.point_permutations(kind)
  for g in range(8):
    moved = np.empty_like(states)
    moved[:, perm[g]] = states
    raw = patterns.pack(kind, moved, perm[g][slot])
    ids = np.asarray(table.lookup(jnp.asarray(raw[0]), jnp.asarray(raw[1])))
    known = {(int(a), int(b)): i for i, (a, b) in enumerate(codes[:30])}
    expected = [known.get((int(a), int(b)), -1) for a, b in zip(hi, lo)]
    np.testing.assert_array_equal(ids, expected)


def test_liberties_capped_at_three_equal_flood_fill():
  cfg, states = _games(9, 4, 150, 3)
  picked = _pick(states, range(0, 600, 7))
  got = np.asarray(jax.jit(jax.vmap(lambda s: patterns.point_states(cfg, s)))(picked))
  for i in range(got.shape[0]):
    expected = ref.point_states([int(x) for x in picked.board[i]], 9, int(picked.to_play[i]))
    np.testing.assert_array_equal(got[i], expected)
