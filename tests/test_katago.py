"""KataGo's training improvements, each a switch: global pooling, the ownership, score and
opponent's-reply heads (network, targets, loss, symmetries), playout cap randomization, and
forced playouts with policy target pruning.
"""

import functools

import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest

from agz_jax import go, replay, search, selfplay
from agz_jax.game import Game
from agz_jax.nets import AlphaZeroNet, resnet
from agz_jax.selfplay import StepRecord
from agz_jax.training import agz

import helpers
import toy_game
from configs import default  # noqa: E402  pylint: disable=wrong-import-position


ALL_HEADS = dict(ownership_head=True, score_head=True, opponent_policy_head=True)

# --------------------------------------------------------------------------- the network


def _init(model, size=5, planes=5):
  return model.init(jax.random.PRNGKey(0), jnp.zeros((1, size, size, planes)), train=False)


def test_global_pooling_reads_each_channels_mean_and_maximum_and_its_gradient_is_finite():
  x = jax.random.normal(jax.random.PRNGKey(1), (2, 3, 3, 4))
  x = x.at[:, :, :, 3].set(0.0)  # a channel ReLU left at 0 everywhere: every point is its max
  pooled = resnet.global_pool(x)
  np.testing.assert_allclose(pooled[:, :4], x.mean(axis=(1, 2)), rtol=1e-6)
  np.testing.assert_array_equal(pooled[:, 4:], x.max(axis=(1, 2)))
  grad = jax.grad(lambda x: resnet.global_pool(x)[:, 4:].sum())(x)
  # The maximum's gradient goes to one point per channel: its argmax, the first of ties.
  np.testing.assert_array_equal(grad.sum(axis=(1, 2)), np.ones((2, 4)))
  assert grad[:, 0, 0, 3].tolist() == [1.0, 1.0] and np.isfinite(grad).all()


def test_with_every_switch_off_the_network_is_alphago_zeros():
  plain = _init(AlphaZeroNet(blocks=2, channels=8, value_hidden=16))["params"]
  assert set(plain) == {"Conv_0", "Conv_1", "Conv_2", "Dense_0", "Dense_1", "Dense_2",
                        "BatchNorm_0", "BatchNorm_1", "BatchNorm_2", "ResidualBlock_0",
                        "ResidualBlock_1"}
  # The heads add layers; AlphaGo Zero's keep their names and shapes (older checkpoints load).
  full = _init(AlphaZeroNet(blocks=2, channels=8, value_hidden=16, **ALL_HEADS))["params"]
  shapes = lambda tree: jax.tree.map(lambda x: x.shape, tree)
  assert shapes({k: full[k] for k in plain}) == shapes(plain)
  assert set(full) - set(plain) == {"Conv_3", "Conv_4", "BatchNorm_3", "score",
                                    "opponent_policy"}


def test_aux_outputs_come_only_when_asked():
  model = AlphaZeroNet(blocks=1, channels=8, value_hidden=16, **ALL_HEADS)
  variables = _init(model)
  planes = jax.random.bernoulli(jax.random.PRNGKey(1), 0.3, (3, 5, 5, 5)).astype(jnp.float32)
  logits, value = model.apply(variables, planes)
  logits2, value2, aux = model.apply(variables, planes, aux=True)
  np.testing.assert_array_equal(logits, logits2)
  np.testing.assert_array_equal(value, value2)
  assert {k: v.shape for k, v in aux.items()} == {
      "ownership": (3, 25), "score": (3,), "opponent_policy": (3, 26)}
  assert not np.allclose(aux["opponent_policy"], logits)  # a head of its own


@pytest.mark.parametrize("pooling", [False, True])
def test_global_pooling_lets_a_point_see_beyond_its_receptive_field(pooling):
  # One block: three 3x3 convolutions, so the 1x1 ownership head at a corner of a 9x9 board sees
  # only the 7x7 around it. A stone in the far corner reaches it only through global pooling.
  model = AlphaZeroNet(blocks=1, channels=8, value_hidden=16, global_pooling=pooling,
                       ownership_head=True)
  variables = _init(model, size=9)
  empty = jnp.zeros((1, 9, 9, 5))
  far = empty.at[0, 8, 8, 0].set(1.0)
  near = empty.at[0, 1, 1, 0].set(1.0)
  own = lambda planes: model.apply(variables, planes, aux=True)[2]["ownership"][0, 0]
  assert own(near) != own(empty)
  assert (own(far) != own(empty)) == pooling


# --------------------------------------------------------------------------- loss and symmetries

N, P = 5, 25
A = P + 1


@pytest.fixture(scope="module")
def net():
  model = AlphaZeroNet(blocks=1, channels=4, value_hidden=8, **ALL_HEADS)
  variables = _init(model)
  return model, variables["params"], variables["batch_stats"]


WEIGHTS = agz.LossWeights(weight_decay=1e-3, ownership=1.5, score=0.5, opponent_policy=0.15)


@pytest.fixture(scope="module")
def loss(net):
  return jax.jit(functools.partial(agz.loss_fn, net[0]), static_argnums=0)


def _sample(seed, m=6):
  rng = np.random.default_rng(seed)
  f32 = lambda x: np.asarray(x, np.float32)
  return replay.Sample(
      planes=f32(rng.integers(0, 2, (m, N, N, 5))),
      policy=f32(rng.dirichlet(np.ones(A), m)),
      value_target=f32(rng.choice([-1.0, 1.0], m)),
      weight=f32([1, 1, 0, 1, 1, 1]),
      policy_weight=f32([1, 0, 1, 1, 0, 1]),
      ownership=f32(rng.choice([-1, 0, 1], (m, P))),
      score=f32(rng.normal(0, 8, m)),
      final_weight=f32([1, 1, 1, 0, 1, 0]),
      opponent_policy=f32(rng.dirichlet(np.ones(A), m)),
      opponent_weight=f32([0, 1, 1, 1, 0, 1]))


def _log_softmax(x):
  x = x - x.max(-1, keepdims=True)
  return x - np.log(np.exp(x).sum(-1, keepdims=True))


def test_loss_adds_katagos_terms_each_over_the_samples_with_its_target(net, loss):
  model, params, batch_stats = net
  batch = _sample(0)
  total, (aux, _) = loss(WEIGHTS, params, batch_stats, batch)
  (logits, v, out), _ = model.apply({"params": params, "batch_stats": batch_stats}, batch.planes,
                                    train=True, aux=True, mutable=["batch_stats"])
  d = lambda x: np.asarray(x, np.float64)
  logits, v, own, score, opp = (d(logits), d(v), d(out["ownership"]), d(out["score"]),
                                d(out["opponent_policy"]))
  w = d(batch.weight)
  mean = lambda x, mask: np.sum(w * mask * x) / np.sum(w * mask)
  value = mean((d(batch.value_target) - v) ** 2, 1.0)
  policy = mean(-np.sum(d(batch.policy) * _log_softmax(logits), -1), d(batch.policy_weight))
  p_own = (1 + np.tanh(own)) / 2                      # the probability that the mover owns it
  t = (1 + d(batch.ownership)) / 2
  bce = -(t * np.log(p_own) + (1 - t) * np.log(1 - p_own))
  ownership = mean(bce.mean(-1), d(batch.final_weight))
  score_loss = mean((d(batch.score) / N - score) ** 2, d(batch.final_weight))
  opponent = mean(-np.sum(d(batch.opponent_policy) * _log_softmax(opp), -1),
                  d(batch.opponent_weight))
  l2 = 1e-3 * sum(np.sum(d(p) ** 2) for p in jax.tree.leaves(params))
  for key, want in [("loss_value", value), ("loss_policy", policy), ("loss_ownership", ownership),
                    ("loss_score", score_loss), ("loss_opponent_policy", opponent)]:
    np.testing.assert_allclose(float(aux[key]), want, rtol=2e-5, err_msg=key)
  np.testing.assert_allclose(float(total), value + policy + l2 + 1.5 * ownership
                             + 0.5 * score_loss + 0.15 * opponent, rtol=2e-5)


def test_targets_without_their_weight_do_not_count(net, loss):
  _, params, batch_stats = net
  batch = _sample(1)
  wild = batch.replace(
      policy=np.where(batch.policy_weight[:, None] > 0, batch.policy, 1e6).astype(np.float32),
      ownership=np.where(batch.final_weight[:, None] > 0, batch.ownership, 1e6),
      score=np.where(batch.final_weight > 0, batch.score, -1e6).astype(np.float32),
      opponent_policy=np.where(batch.opponent_weight[:, None] > 0, batch.opponent_policy,
                               1e6).astype(np.float32))
  base, (base_aux, _) = loss(WEIGHTS, params, batch_stats, batch)
  out, (out_aux, _) = loss(WEIGHTS, params, batch_stats, wild)
  assert float(out) == float(base)
  assert {k: float(v) for k, v in out_aux.items()} == {k: float(v) for k, v in base_aux.items()}
  # Heads switched off in the weights: no such terms at all.
  _, (plain, _) = loss(agz.LossWeights(weight_decay=1e-3), params, batch_stats, batch)
  assert set(plain) == {"loss_value", "loss_policy", "loss_l2", "policy_entropy"}


def test_augment_moves_ownership_and_the_opponents_policy_with_the_planes():
  game = Game(go, go.GoConfig(size=N))
  m, p, q = 32, 1 * N + 3, 2 * N + 4                # points no symmetry of the board fixes
  planes = np.zeros((m, N, N, 5), np.float32)
  planes[:, 1, 3, 0] = 1.0
  ownership = np.zeros((m, P), np.float32)
  ownership[:, p] = 1.0
  opponent = np.zeros((m, A), np.float32)
  opponent[:, p] = 1.0
  policy = np.zeros((m, A), np.float32)
  policy[:, q] = 1.0
  batch = replay.Sample(planes=planes, policy=policy, value_target=np.zeros(m, np.float32),
                        weight=np.ones(m, np.float32), policy_weight=np.ones(m, np.float32),
                        ownership=ownership, score=np.zeros(m, np.float32),
                        final_weight=np.ones(m, np.float32), opponent_policy=opponent,
                        opponent_weight=np.ones(m, np.float32))
  out = jax.jit(lambda b, k: agz.augment(game, b, k))(batch, jax.random.PRNGKey(4))
  stones = np.asarray(out.planes)[..., 0].reshape(m, -1).argmax(-1)
  np.testing.assert_array_equal(np.asarray(out.ownership).argmax(-1), stones)
  np.testing.assert_array_equal(np.asarray(out.opponent_policy)[:, :P].argmax(-1), stones)
  assert len(set(stones.tolist())) > 1
  # The policy moved by the same symmetry: its point keeps its offset from the stone's.
  sym = np.asarray(out.policy)[:, :P].argmax(-1)
  dist = lambda a, b: (a // N - b // N) ** 2 + (a % N - b % N) ** 2
  assert all(dist(s, t) == dist(p, q) for s, t in zip(stones, sym))


def test_the_heads_need_what_the_game_provides():
  config = default.get_config()
  config.model.ownership_head = True
  with pytest.raises(ValueError, match="ownership_head needs the game's ownership"):
    agz.LossWeights.from_config(config, Game(toy_game, None))
  assert agz.LossWeights.from_config(config, Game(go, go.GoConfig(size=5))).ownership == 1.5
  config.model.ownership_head = False
  assert agz.LossWeights.from_config(config, Game(toy_game, None)).ownership == 0.0


# --------------------------------------------------------------------------- replay targets

CFG2 = go.GoConfig(size=2, history=1)
GAME2 = Game(go, CFG2)
A2, P2 = CFG2.num_actions, 4


def _records(ids, to_play, ended, scored, full, owner_sign):
  """[T, B] records of 2x2 positions: planes and policy[0] = id; a scored end leaves the
  ownership owner_sign * (+1, -1, 0, +1) for black and the score 7 * owner_sign."""
  ids, ended, scored = np.asarray(ids), np.asarray(ended), np.asarray(scored)
  t, b = ids.shape
  own = np.asarray(owner_sign)[..., None] * np.array([1, -1, 0, 1])
  return StepRecord(
      planes=jnp.asarray(np.broadcast_to(ids[..., None, None, None], (t, b, 2, 2, 3)), jnp.uint8),
      policy=jnp.asarray(np.concatenate([ids[..., None], np.zeros((t, b, A2 - 1))], -1),
                         jnp.float32),
      to_play=jnp.asarray(to_play, jnp.int8), action=jnp.zeros((t, b), jnp.int32),
      root_value=jnp.zeros((t, b), jnp.float32), ended=jnp.asarray(ended),
      result=jnp.asarray(np.sign(owner_sign) * ended, jnp.float32),
      length=jnp.zeros((t, b), jnp.int32), resigned=jnp.asarray(ended & ~scored),
      resign_checked=jnp.zeros((t, b), bool), false_resign=jnp.zeros((t, b), bool),
      root_evaluated=jnp.ones((t, b), bool), full_search=jnp.asarray(full),
      ownership=jnp.asarray(own * (ended & scored)[..., None], jnp.int8),
      score=jnp.asarray(7.0 * np.asarray(owner_sign) * (ended & scored), jnp.float32),
      scored=jnp.asarray(ended & scored))


def test_replay_keeps_final_ownership_and_score_from_the_movers_view_and_the_reply():
  # Slot 0: one game of positions 1, 2, 3, scored at 3 (black owns +1 -1 0 +1); positions 2 is a
  # cheap search. Slot 1: positions 11, 12 end by resignation at 12 (nothing scored), 13 starts a
  # new game that ends scored at 14 with the colours' ownership reversed.
  first = _records(ids=[[1, 11], [2, 12]], to_play=[[1, 1], [-1, -1]],
                   ended=[[False, False], [False, True]], scored=[[False, False], [False, False]],
                   full=[[True, True], [False, True]], owner_sign=[[1, -1], [1, -1]])
  second = _records(ids=[[3, 13], [4, 14]], to_play=[[1, 1], [-1, -1]],
                    ended=[[True, False], [False, True]], scored=[[True, False], [False, True]],
                    full=[[True, True], [True, True]], owner_sign=[[1, -1], [1, -1]])
  add = jax.jit(replay.add)
  buffer = add(add(replay.empty(GAME2, "agz17", 2, 6, final_targets=True), first), second)
  black = np.array([1, -1, 0, 1])
  own, score, scored = (np.asarray(buffer.ownership), np.asarray(buffer.score_target),
                        np.asarray(buffer.scored))
  # Slot 0, rows 0-2: black, white, black to move.
  for row, mover in enumerate([1, -1, 1]):
    np.testing.assert_array_equal(own[0, row], mover * black)
    assert score[0, row] == 7.0 * mover and scored[0, row]
  assert not scored[1, 0] and not scored[1, 1]                     # resigned: no final targets
  np.testing.assert_array_equal(own[1, 2], -black)                 # white owns, black to move
  np.testing.assert_array_equal(own[1, 3], black)
  assert score[1, 2] == -7.0 and score[1, 3] == 7.0

  # Sampling: the reply is the next row's policy unless the game ended there or the next
  # position got only a cheap search.
  keys = jax.random.split(jax.random.PRNGKey(0), 300)
  out = jax.jit(jax.vmap(lambda k: replay.sample(buffer, k, 2)))(keys)
  ids = np.asarray(out.planes)[..., 0, 0, 0].astype(int).ravel()
  reply = np.asarray(out.opponent_policy)[..., 0].astype(int).ravel()
  weight = np.asarray(out.opponent_weight).ravel()
  policy_weight = np.asarray(out.policy_weight).ravel()
  ownership = np.asarray(out.ownership).reshape(-1, P2)
  expected_reply = {1: (2, 0.0), 2: (3, 1.0), 3: (None, 0.0), 11: (12, 1.0), 12: (None, 0.0),
                    13: (14, 1.0)}
  assert set(ids) == {1, 2, 3, 11, 12, 13, 14}
  for i, r, w, pw, o in zip(ids, reply, weight, policy_weight, ownership):
    want_reply, want_weight = expected_reply.get(i, (None, 0.0))
    assert w == want_weight, i
    if want_weight:
      assert r == want_reply, i
    assert pw == (0.0 if i == 2 else 1.0), i
    if i in (1, 2, 3):
      np.testing.assert_array_equal(o, (1 if i != 2 else -1) * black)


# --------------------------------------------------------------------------- forced playouts

CFG = go.GoConfig(size=5, komi=0.5, history=2)
GAME = Game(go, CFG)
TOP = 12                                            # the centre


def _peaked_evaluator(variables, states, rng_key):
  """Prior 30% on the centre, the rest spread; the position after the centre is won for the
  player who took it, every other lost: PUCT alone hardly looks at other moves beyond what the
  root noise gives them."""
  del variables, rng_key
  batch = states.board.shape[0]
  logits = jnp.zeros((batch, CFG.num_actions)).at[:, TOP].set(jnp.log(0.3 * 25 / 0.7))
  taken = states.board.reshape(batch, -1)[:, TOP] != go.EMPTY
  # Value for the player to move: whoever took the centre is winning.
  centre_mine = states.board.reshape(batch, -1)[:, TOP] == states.to_play
  value = jnp.where(taken, jnp.where(centre_mine, 0.9, -0.9), 0.5)
  return logits, value


@functools.cache
def _search(forced):
  settings = helpers.search_config(algorithm="puct", num_simulations=200,
                                   dirichlet_fraction=0.25, dirichlet_alpha=0.3,
                                   forced_playouts=forced)

  def run(key):
    states = jax.tree.map(lambda x: x[None], go.init(CFG))
    return search.run_search(GAME, _peaked_evaluator, {}, states, key, settings)

  return jax.jit(run), settings


def test_forced_playouts_visit_every_visited_child_about_sqrt_2_p_n_times():
  plain = _search(False)[0](jax.random.PRNGKey(0))
  forced = _search(True)[0](jax.random.PRNGKey(0))
  prior = np.asarray(jax.nn.softmax(forced.search_tree.children_prior_logits[0, 0]))
  visits = np.asarray(forced.search_tree.summary().visit_counts[0])
  plain_visits = np.asarray(plain.search_tree.summary().visit_counts[0])
  need = np.floor(np.sqrt(2 * prior * visits.sum()))
  seen = visits > 0                                  # KataGo forces only visited children
  assert np.all(visits[seen] >= need[seen] - 1), (visits, need)
  # Without them the other moves get far fewer visits.
  others = np.arange(len(prior)) != TOP
  assert np.sum(plain_visits[others]) < np.sum(visits[others]) / 2, (plain_visits, visits)
  assert np.argmax(visits) == TOP


def test_policy_target_pruning_removes_the_forced_visits_puct_would_not_have_given():
  out = _search(True)[0](jax.random.PRNGKey(1))
  settings = _search(True)[1]
  tree = jax.tree.map(lambda x: x[0], out.search_tree)
  visits = np.asarray(tree.children_visits[0], np.float64)
  total = visits.sum()
  q = np.asarray(mctx.qtransform_by_parent_and_siblings(tree, 0), np.float64)
  prior = np.asarray(jax.nn.softmax(tree.children_prior_logits[0]), np.float64)
  node_visits = float(tree.node_visits[0])
  pb_c = settings.pb_c_init + np.log((node_visits + settings.pb_c_base + 1) / settings.pb_c_base)
  u = np.sqrt(node_visits) * pb_c * prior
  best = int(np.argmax(visits))
  best_score = q[best] + u[best] / (1 + visits[best])
  # The reference, child by child: the fewest visits (down to N - forced) at which PUCT would
  # still not prefer the child to the best one; one visit or none is dropped.
  kept = np.zeros_like(visits)
  for c in range(len(visits)):
    if c == best or visits[c] == 0:
      kept[c] = visits[c]
      continue
    n = visits[c]
    while n - 1 >= visits[c] - np.sqrt(2 * prior[c] * total) and \
        q[c] + u[c] / n <= best_score:              # n - 1 visits still score at most the best
      n -= 1
    kept[c] = 0 if n <= 1 else n
  target = np.asarray(out.action_weights[0], np.float64)
  np.testing.assert_allclose(target, kept / kept.sum(), atol=1e-6)
  assert np.sum(kept) < total                          # something was pruned
  assert target[best] > visits[best] / total


def test_forced_playouts_are_for_the_puct_search_only():
  with pytest.raises(ValueError, match="forced_playouts is for the PUCT search"):
    helpers.search_config(algorithm="gumbel", forced_playouts=True)


# --------------------------------------------------------------------------- self-play

SP_CFG = go.GoConfig(size=5, komi=0.5, history=2, max_moves=6)
SP_GAME = Game(go, SP_CFG)


@functools.cache
def _selfplay(cap: bool, final_targets: bool):
  search_settings = helpers.search_config(algorithm="puct", num_simulations=12,
                                          dirichlet_fraction=0.0)
  settings = selfplay.SelfPlayConfig(
      search=search_settings, encoding="agz17", temperature_moves=0, resign_threshold=-1.0,
      resign_min_moves=0, no_resign_fraction=0.0,
      cheap_search=search_settings.replace(num_simulations=3) if cap else None,
      full_search_prob=0.5, final_targets=final_targets)
  variables = helpers.fake_variables(SP_CFG.num_actions)

  def run(key):
    games = selfplay.new_games(SP_GAME, key, 4, no_resign_fraction=0.0)
    return selfplay.selfplay(SP_GAME, helpers.fake_evaluator, variables, games, key, 14,
                             settings)[1]

  return jax.jit(run)


def test_playout_cap_randomization_searches_some_steps_cheaply():
  records = _selfplay(True, False)(jax.random.PRNGKey(3))
  full = np.asarray(records.full_search)                      # [T, B]
  assert np.all(full == full[:, :1])                          # one draw per step
  assert 0 < full[:, 0].sum() < full.shape[0]
  # PUCT's policy is the visit distribution: multiples of 1/12 after a full search, of 1/3
  # after a cheap one.
  policy = np.asarray(records.policy)
  for t in range(full.shape[0]):
    n = 12 if full[t, 0] else 3
    np.testing.assert_allclose(policy[t] * n, np.round(policy[t] * n), atol=1e-4)
    assert np.all(np.sum(policy[t] > 0, -1) <= n)
  # Without it every step is a full search.
  assert np.all(np.asarray(_selfplay(False, False)(jax.random.PRNGKey(3)).full_search))


_ownership = jax.jit(functools.partial(go.ownership, SP_CFG))


def test_selfplay_records_the_final_ownership_and_score_of_games_that_end():
  records = _selfplay(False, True)(jax.random.PRNGKey(5))
  ended, scored = np.asarray(records.ended), np.asarray(records.scored)
  assert np.array_equal(ended, scored)                        # no resignation here
  actions = np.asarray(records.action)
  own, score = np.asarray(records.ownership), np.asarray(records.score)
  checked = 0
  for b in range(actions.shape[1]):
    moves = []
    for t in range(actions.shape[0]):
      moves.append(int(actions[t, b]))
      if ended[t, b]:
        state = go.play(SP_CFG, moves)
        np.testing.assert_array_equal(own[t, b], np.asarray(_ownership(state)))
        assert score[t, b] == float(go.host_score(SP_CFG, state)) == own[t, b].sum() - 0.5
        moves, checked = [], checked + 1
      else:
        assert not own[t, b].any() and score[t, b] == 0
  assert checked >= 8
  assert _selfplay(False, False)(jax.random.PRNGKey(5)).ownership is None


# --------------------------------------------------------------------------- the training task

EVERY_SWITCH = {
    "game.size": 5, "game.max_moves": 10, "game.history": 2, "model.blocks": 2,
    "model.channels": 8, "model.value_hidden": 16, "search.algorithm": "puct",
    "search.num_simulations": 6, "selfplay.num_games": 8, "selfplay.steps_per_iteration": 4,
    "selfplay.min_pass_moves": 40, "selfplay.resign_min_moves": 20,
    "replay.rows_per_game": 16, "replay.min_ready": 40, "train.batch_size": 8,
    "train.updates_per_iteration": 2, "eval.every": 0, "mesh.num_devices": 1,
    "model.global_pooling": True, "model.ownership_head": True, "model.score_head": True,
    "model.opponent_policy_head": True, "search.forced_playouts": True,
    "selfplay.playout_cap_randomization": True, "selfplay.cheap_simulations": 2,
}


def _config(**overrides):
  config = default.get_config()
  config.update_from_flattened_dict({**EVERY_SWITCH, **overrides})
  return config


def test_every_switch_on_trains_inside_the_one_iteration_and_reports_its_losses():
  from agz_jax.metrics import progress_line  # pylint: disable=import-outside-toplevel
  task = agz.AlphaZeroTask(_config())
  state = task.init(0)
  before = jax.tree.map(np.asarray, state.params)
  rows = []
  for _ in range(5):
    state, metrics, _ = task.iteration(state)
    rows.append({k: float(v) for k, v in metrics.items()})
  trained = [m for m in rows if m["trained"]]
  assert trained, "the buffer never filled"
  for m in trained:
    for key in ("loss_ownership", "loss_score", "loss_opponent_policy"):
      assert np.isfinite(m[key]) and m[key] > 0, key
  assert 0 < np.mean([m["full_search"] for m in rows]) < 1
  changed = jax.tree.map(lambda a, b: not np.array_equal(a, np.asarray(b)), before, state.params)
  assert changed["score"]["kernel"] and changed["opponent_policy"]["kernel"]
  assert changed["Conv_3"]["kernel"]                           # the ownership head
  line = progress_line(5, 5, {**trained[-1], "positions_per_s": 1.0}, 1.0, 0.0, min_ready=40,
                       compiled=False)
  assert "aux own" in line and "score" in line and "opp" in line


def test_playout_cap_settings_are_checked():
  with pytest.raises(ValueError, match="cheap_simulations .6. must be between 1 and"):
    agz.AlphaZeroTask(_config(**{"selfplay.cheap_simulations": 6}))


def test_a_head_with_weight_zero_still_trains():
  # The buffer keeps final targets whenever self-play records them (a head is on), whatever
  # the head's loss weight.
  task = agz.AlphaZeroTask(_config(**{"train.ownership_weight": 0.0, "train.score_weight": 0.0,
                                      "selfplay.playout_cap_randomization": False,
                                      "search.forced_playouts": False}))
  state, metrics, _ = task.iteration(task.init(0))
  assert state.buffer.ownership is not None
  assert "loss_ownership" not in metrics and "loss_opponent_policy" in metrics
