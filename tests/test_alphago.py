"""AlphaGo's search: its selection rule, its leaf evaluation by rollouts, and its GTP player."""

import functools
import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import struct as flax_struct

from agz_jax import alphago, checkpoint, go, gtp, nets, players, search
from agz_jax.game import Game
from agz_jax.alphago import patterns
from agz_jax.players import timed_search

import helpers
from test_rollout import EYES

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
from configs import rollout_policy as rollout_config, sl_policy_cpu  # noqa: E402  pylint: disable=wrong-import-position


def alphago_settings(simulations, c_puct=5.0):
  return helpers.search_config(algorithm="alphago", num_simulations=simulations, c_puct=c_puct)


def test_root_visits_follow_alphagos_formula():
  # With every value 0, Q is 0 throughout and each simulation goes to the root child with the
  # largest c_puct P sqrt(max(sum N, 1)) / (1 + N): a Python replay of the rule gives the counts.
  cfg = go.GoConfig(size=5, komi=0.5)
  state = go.play(cfg, [go.gtp_to_action(cfg, v) for v in ("C3", "B2", "D4")])
  rng = np.random.default_rng(0)
  logits = rng.normal(0, 1.5, cfg.num_actions).astype(np.float32)
  logits[cfg.pass_action] = -30.0
  variables = helpers.fake_variables(cfg.num_actions, logits, 0.0)
  game = Game(go, cfg)
  simulations = 40
  out = jax.jit(functools.partial(search.run_search, game, helpers.fake_evaluator,
                                  search=alphago_settings(simulations)))(
      variables, jax.tree.map(lambda x: x[None], state), jax.random.PRNGKey(0))
  visits = np.asarray(out.search_tree.summary().visit_counts[0])
  legal = np.asarray(go.legal_actions(cfg, state))
  prior = np.exp(logits - logits.max()) * legal
  prior /= prior.sum()
  n = np.zeros(cfg.num_actions)
  for _ in range(simulations):
    score = 5.0 * prior * np.sqrt(max(n.sum(), 1)) / (1 + n)
    n[np.argmax(np.where(legal, score, -np.inf))] += 1
  np.testing.assert_array_equal(visits, n)
  assert int(out.action[0]) == int(np.argmax(n))
  assert visits[~legal].sum() == 0


def test_illegal_children_are_never_chosen_when_every_legal_one_looks_bad():
  # Values of -1 everywhere make Q + u negative for visited legal children: an illegal child
  # (prior 0, Q 0) would win if it were not masked.
  cfg = go.GoConfig(size=5, komi=0.5)
  state = go.play(cfg, [go.gtp_to_action(cfg, v) for v in ("C3", "B2", "D4", "B4")])
  variables = helpers.fake_variables(cfg.num_actions, None, 1.0)
  game = Game(go, cfg)
  out = jax.jit(functools.partial(search.run_search, game, helpers.fake_evaluator,
                                  search=alphago_settings(64)))(
      variables, jax.tree.map(lambda x: x[None], state), jax.random.PRNGKey(1))
  tree = out.search_tree
  legal = np.asarray(go.legal_actions(cfg, state))
  assert np.asarray(tree.summary().visit_counts[0])[~legal].sum() == 0
  # Inside the tree too: every expanded node's children were legal where chosen.
  embeddings = tree.embeddings
  children = np.asarray(tree.children_index[0])
  for node in range(children.shape[0]):
    if np.asarray(tree.node_visits[0, node]) == 0:
      continue
    node_state = jax.tree.map(lambda x: x[0, node], embeddings)
    node_legal = np.asarray(go.legal_actions(cfg, node_state))
    chosen = np.flatnonzero(children[node] >= 0)
    assert node_legal[chosen].all(), (node, chosen)


def _fast_policy(tables):
  model = nets.FastPolicy(num_features=patterns.num_features(tables, patterns.ROLLOUT_GROUPS))
  params = model.init(jax.random.PRNGKey(0), jnp.zeros((1, 25, 1), jnp.int32))["params"]
  return model, {"params": params, "tables": tables}


EMPTY_TABLES = {k: np.full((4, 2), -1, np.int32) for k in ("3x3", "response")}


def test_leaf_value_is_the_rollouts_mean_outcome_for_the_player_to_move():
  size, black, white = go.parse_board(EYES)
  cfg = go.GoConfig(size=size, komi=0.5)
  model, rollout_vars = _fast_policy(patterns.make_tables(EMPTY_TABLES))
  evaluate = alphago.evaluator(cfg, alphago.LeafSettings(prior="uniform", rollouts_per_leaf=4),
                               rollout_model=model, rollout_groups=patterns.ROLLOUT_GROUPS)
  states = jax.tree.map(lambda *x: jnp.stack(x), *[
      go.init(cfg, black=black, white=white, to_play=c) for c in (go.BLACK, go.WHITE)])
  logits, value = jax.jit(evaluate)({"rollout": rollout_vars}, states, jax.random.PRNGKey(0))
  np.testing.assert_array_equal(np.asarray(value), [-1.0, 1.0])  # white owns more of the board
  np.testing.assert_array_equal(np.asarray(logits), 0.0)  # the uniform prior


@pytest.mark.slow
def test_the_sl_prior_is_the_policy_network_at_temperature_beta():
  cfg = go.GoConfig(size=9, komi=7.5)
  net = nets.PolicyNet(layers=2, filters=8)
  state = go.play(cfg, [40, 41])
  planes = helpers.planes(cfg, jax.tree.map(lambda x: x[None], state), "alphago48")
  variables = net.init(jax.random.PRNGKey(3), planes)
  model, rollout_vars = _fast_policy(patterns.make_tables(EMPTY_TABLES))
  evaluate = alphago.evaluator(cfg, alphago.LeafSettings(prior="sl", beta=0.5, rollouts_per_leaf=2),
                               rollout_model=model, rollout_groups=patterns.ROLLOUT_GROUPS,
                               prior_model=net)
  logits, value = jax.jit(evaluate)({"rollout": rollout_vars, "prior": variables},
                                    jax.tree.map(lambda x: x[None], state), jax.random.PRNGKey(0))
  np.testing.assert_allclose(np.asarray(logits), np.asarray(net.apply(variables, planes)) / 0.5,
                             rtol=1e-5)
  assert float(value[0]) in (-1.0, -0.0, 0.0, 1.0)


@pytest.mark.slow
def test_lambda_mixes_the_value_network_with_the_rollouts():
  """V = (1 - lambda) v(s) + lambda z; lambda 0 plays no rollout at all."""
  size, black, white = go.parse_board(EYES)
  cfg = go.GoConfig(size=size, komi=0.5)
  model, rollout_vars = _fast_policy(patterns.make_tables(EMPTY_TABLES))
  value_net = nets.ValueNet(layers=2, filters=4, hidden=8)
  states = jax.tree.map(lambda *x: jnp.stack(x), *[
      go.init(cfg, black=black, white=white, to_play=c) for c in (go.BLACK, go.WHITE)])
  planes = helpers.planes(cfg, states, "alphago49")
  value_vars = value_net.init(jax.random.PRNGKey(1), planes)
  v = np.asarray(value_net.apply(value_vars, planes))
  z = np.asarray([-1.0, 1.0])   # the rollouts' outcome here (white owns more of the board)
  variables = {"rollout": rollout_vars, "value": value_vars}
  for lam in (0.0, 0.25, 1.0):
    evaluate = alphago.evaluator(cfg, alphago.LeafSettings(prior="uniform", mixing=lam,
                                                           rollouts_per_leaf=2),
                                 rollout_model=model, rollout_groups=patterns.ROLLOUT_GROUPS,
                                 value_model=value_net)
    _, value = jax.jit(evaluate)(variables, states, jax.random.PRNGKey(0))
    np.testing.assert_allclose(np.asarray(value), (1 - lam) * v + lam * z, rtol=1e-5, atol=1e-6)
  # lambda 0: no rollout policy at all.
  evaluate = alphago.evaluator(cfg, alphago.LeafSettings(prior="uniform", mixing=0.0),
                               rollout_model=None, rollout_groups=None, value_model=value_net)
  _, value = jax.jit(evaluate)({"value": value_vars}, states, jax.random.PRNGKey(0))
  np.testing.assert_allclose(np.asarray(value), v, rtol=1e-5)
  with pytest.raises(ValueError, match="lambda 0.5 values leaves by rollouts: give a rollout"):
    alphago.evaluator(cfg, alphago.LeafSettings(prior="uniform", mixing=0.5), rollout_model=None,
                      rollout_groups=None, value_model=value_net)


@pytest.mark.slow
def test_lambda_from_a_move_number_switches_the_leaf_value_from_the_network_to_rollouts():
  """Before lambda_from_move a leaf is the value network's alone; from it on, the mix."""
  size, black, white = go.parse_board(EYES)
  cfg = go.GoConfig(size=size, komi=0.5)
  model, rollout_vars = _fast_policy(patterns.make_tables(EMPTY_TABLES))
  value_net = nets.ValueNet(layers=2, filters=4, hidden=8)
  start = go.init(cfg, black=black, white=white, to_play=go.WHITE)
  moves = np.asarray([0, 149, 150, 151, 300], np.int32)  # the games' move numbers
  states = jax.tree.map(lambda x: jnp.repeat(x[None], len(moves), 0), start)
  states = states.replace(move_count=jnp.asarray(moves))
  planes = helpers.planes(cfg, states, "alphago49")
  value_vars = value_net.init(jax.random.PRNGKey(1), planes)
  v = np.asarray(value_net.apply(value_vars, planes))
  z = 1.0   # the rollouts' outcome for white, who owns more of the board
  variables = {"rollout": rollout_vars, "value": value_vars}
  for lam in (1.0, 0.5):
    evaluate = alphago.evaluator(
        cfg, alphago.LeafSettings(prior="uniform", mixing=lam, rollouts_per_leaf=2,
                                  lambda_from_move=150),
        rollout_model=model, rollout_groups=patterns.ROLLOUT_GROUPS, value_model=value_net)
    _, value = jax.jit(evaluate)(variables, states, jax.random.PRNGKey(0))
    want = np.where(moves >= 150, (1 - lam) * v + lam * z, v)
    np.testing.assert_allclose(np.asarray(value), want, rtol=1e-5, atol=1e-6)
    assert np.all(np.abs(v - z) > 1e-3)  # the two judges differ: the switch shows
  # The early leaves need a value network.
  with pytest.raises(ValueError, match="lambda_from_move 150: the leaves before it are valued "
                                       "by a value network: give one"):
    alphago.evaluator(cfg, alphago.LeafSettings(prior="uniform", lambda_from_move=150),
                      rollout_model=model, rollout_groups=patterns.ROLLOUT_GROUPS)
  with pytest.raises(ValueError, match="lambda_from_move must be a move number"):
    alphago.LeafSettings(lambda_from_move=-1)


def test_a_dual_networks_policy_head_is_the_prior_and_its_value_head_the_value():
  cfg = go.GoConfig(size=9, komi=7.5, history=8)
  model = nets.AlphaZeroNet(blocks=1, channels=8, value_hidden=8, num_actions=cfg.num_actions)
  states = jax.tree.map(lambda *x: jnp.stack(x), go.play(cfg, [40, 41]), go.play(cfg, [10]))
  planes = helpers.planes(cfg, states, "agz17")
  variables = model.init(jax.random.PRNGKey(3), planes)
  want_logits, want_value = model.apply(variables, planes)[:2]
  evaluate = alphago.evaluator(cfg, alphago.LeafSettings(prior="sl", mixing=0.0, beta=0.5),
                               rollout_model=None, rollout_groups=None,
                               prior_model=alphago.DualPolicy(model), prior_encoding="agz17",
                               value_model="prior")
  logits, value = jax.jit(evaluate)({"prior": variables}, states, jax.random.PRNGKey(0))
  np.testing.assert_allclose(np.asarray(logits), np.asarray(want_logits) / 0.5, rtol=1e-5,
                             atol=1e-5)
  np.testing.assert_allclose(np.asarray(value), np.asarray(want_value), rtol=1e-5, atol=1e-6)
  with pytest.raises(ValueError, match="only when the prior is a dual network"):
    alphago.evaluator(cfg, alphago.LeafSettings(prior="uniform", mixing=0.0), rollout_model=None,
                      rollout_groups=None, value_model="prior")


def test_the_prior_and_the_value_network_read_the_same_planes():
  """With both networks the 48 planes are computed once: the prior gets them, the value
  network them and the colour to play, exactly as each network's own encoding."""
  size, black, white = go.parse_board(EYES)
  cfg = go.GoConfig(size=size, komi=0.5)
  states = jax.tree.map(lambda *x: jnp.stack(x), *[
      go.init(cfg, black=black, white=white, to_play=c) for c in (go.BLACK, go.WHITE)])
  policy_net = nets.PolicyNet(layers=2, filters=4)
  value_net = nets.ValueNet(layers=2, filters=4, hidden=8)
  planes48, planes49 = (helpers.planes(cfg, states, e) for e in ("alphago48", "alphago49"))
  variables = {"prior": policy_net.init(jax.random.PRNGKey(2), planes48),
               "value": value_net.init(jax.random.PRNGKey(1), planes49)}
  evaluate = alphago.evaluator(cfg, alphago.LeafSettings(prior="sl", mixing=0.0, beta=0.5),
                               rollout_model=None, rollout_groups=None, prior_model=policy_net,
                               value_model=value_net)
  logits, value = jax.jit(evaluate)(variables, states, jax.random.PRNGKey(0))
  np.testing.assert_allclose(np.asarray(logits),
                             np.asarray(policy_net.apply(variables["prior"], planes48)) / 0.5,
                             rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(np.asarray(value),
                             np.asarray(value_net.apply(variables["value"], planes49)),
                             rtol=1e-5, atol=1e-6)


def test_leaf_settings_refuse_what_they_cannot_do():
  with pytest.raises(ValueError, match="prior must be one of sl, uniform"):
    alphago.LeafSettings(prior="tau")
  with pytest.raises(ValueError, match=r"lambda \(mixing\) must be in \[0, 1\]"):
    alphago.LeafSettings(mixing=1.5)
  model, _ = _fast_policy(patterns.make_tables(EMPTY_TABLES))
  with pytest.raises(ValueError, match="lambda 0.5 mixes in a value network: give one"):
    alphago.evaluator(go.GoConfig(size=9), alphago.LeafSettings(prior="uniform", mixing=0.5),
                      rollout_model=model, rollout_groups=patterns.ROLLOUT_GROUPS)
  with pytest.raises(ValueError, match="rollouts per leaf must be a positive integer"):
    alphago.LeafSettings(rollouts_per_leaf=0)


# -- the player ---------------------------------------------------------------------------------

@flax_struct.dataclass
class FastNetwork:
  """What a rollout_policy checkpoint's `network` item holds."""
  params: dict
  batch_stats: dict
  patterns: dict


def make_rollout_checkpoint(workdir, seed=0):
  """A fast rollout policy saved as training would (random weights, dictionaries from random play)."""
  config = rollout_config.get_config()
  config.game.size = 9
  config.model.num_3x3, config.model.num_response = 64, 32
  cfg = go.GoConfig(size=9)
  states = jax.tree.map(lambda *x: jnp.stack(x), *[go.play(cfg, list(range(s, 81, 7))[:9])
                                                   for s in range(5)])
  counter = patterns.PatternCounter()
  counter.add(jax.jit(jax.vmap(functools.partial(patterns.harvest_codes, cfg)))(states))
  codes = {"3x3": counter.dictionary("3x3", 64, 1), "response": counter.dictionary("response", 32, 1)}
  rng = np.random.default_rng(seed)
  params = {"weights": rng.normal(0, 0.5, config.model.num_features).astype(np.float32),
            "pass_logit": np.float32(0)}

  saver = checkpoint.Checkpointer(str(workdir), keep=1)
  saver.save(1, FastNetwork(params, {}, codes), config)
  saver.close()
  return str(workdir)


def make_sl_checkpoint(workdir, size=9):
  config = sl_policy_cpu.get_config()
  config.game.size = size
  config.model.layers, config.model.filters = 2, 8
  net = nets.make(config.model)
  variables = net.init(jax.random.PRNGKey(0), jnp.zeros((1, size, size, 48)))
  saver = checkpoint.Checkpointer(str(workdir), keep=1)
  saver.save(1, helpers.Network(variables["params"], {}), config)
  saver.close()
  return str(workdir)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
  folder = tmp_path_factory.mktemp("bundle")
  make_rollout_checkpoint(folder / "rollout")
  make_sl_checkpoint(folder / "sl")
  (folder / "alphago.json").write_text(json.dumps(
      {"prior": "sl", "rollout": "rollout", "rollouts_per_leaf": 4, "max_rollout_moves": 40,
       "tree_nodes": 128}))  # small trees and short rollouts: what the tests check needs no more
  return str(folder)


@pytest.mark.slow
def test_a_dual_networks_value_head_values_the_leaves(bundle, tmp_path):
  dual = helpers.make_checkpoint(tmp_path / "dual")   # AlphaGo Zero's resnet, 9x9
  config, variables = checkpoint.load_network(dual)
  player = players.load_player(f"alphago:prior={bundle}/sl,value={dual},lambda=0,tree_nodes=64",
                               simulations=4)
  model, encoding = player.value
  assert isinstance(model, alphago.DualValue) and encoding == config.model.encoding
  assert set(player.variables["value"]) == set(variables)   # its batch statistics too
  # A leaf's value is the value head's, on the dual network's own planes.
  engine = gtp.Engine(player, simulations=4)
  states = jax.tree.map(lambda x: x[None], go.play(engine.cfg, [40, 41]))
  evaluate = alphago.evaluator(engine.cfg, player.leaf, rollout_model=None, rollout_groups=None,
                               prior_model=player.prior.model, prior_encoding=player.prior.encoding,
                               value_model=model, value_encoding=encoding)
  _, value = jax.jit(evaluate)(player.variables, states, jax.random.PRNGKey(0))
  _, want = nets.make(config.model).apply(jax.tree.map(jnp.asarray, variables),
                                          helpers.planes(engine.cfg, states, encoding))
  assert np.all(np.abs(np.asarray(want)) > 1e-4)
  np.testing.assert_allclose(np.asarray(value), np.asarray(want), rtol=1e-5, atol=1e-6)
  _, ok, move = engine.handle("genmove b")
  assert ok and move != "resign"


@pytest.mark.slow
def test_one_dual_network_as_prior_and_value_with_rollouts_from_a_move(bundle, tmp_path):
  dual = helpers.make_checkpoint(tmp_path / "dual")
  spec = (f"alphago:prior={dual},value={dual},rollout={bundle}/rollout,lambda=1,"
          f"lambda_from_move=30,rollouts_per_leaf=1,max_rollout_moves=40,tree_nodes=64")
  player = players.load_player(spec, simulations=4)
  assert player.value == ("prior", "agz17") and set(player.variables) == {"prior", "rollout"}
  assert player.name == "agz_jax-alphago-1x8-value-then-rollouts1-from30"
  assert player.leaf == alphago.LeafSettings(prior="sl", mixing=1.0, rollouts_per_leaf=1,
                                             max_rollout_moves=40, lambda_from_move=30)
  engine = gtp.Engine(player, simulations=4)
  _, ok, move = engine.handle("genmove b")
  assert ok and move != "resign"
  prior, _ = player.policy(engine.cfg, engine.state)
  assert prior.shape == (82,) and abs(prior.sum() - 1) < 1e-5


@pytest.mark.slow
def test_a_puct_player_values_its_leaves_by_rollouts_from_a_move_on(bundle, tmp_path):
  """AlphaGo Zero's PUCT player with players.Rollouts: before `from_move` the value head alone
  (the plain player's search, visit for visit), from it on one rollout's outcome a leaf."""
  network = players.Network.from_checkpoint(helpers.make_checkpoint(tmp_path / "dual"))
  cfg = go.GoConfig(size=9, komi=7.5, **network.planes)

  def player(rollouts=None):
    return players.SearchPlayer(network, simulations=12, algorithm="puct", considered_actions=16,
                                tree_nodes=32, trees=1, rollouts=rollouts)

  plain, rolling = player(), player(players.Rollouts(f"{bundle}/rollout", from_move=30))
  assert rolling.name == "agz_jax-1x8-rollouts1-from30"
  early = go.play(cfg, [40, 41])
  want, got = plain.analyse(cfg, early), rolling.analyse(cfg, early)
  assert [(c["action"], c["visits"]) for c in got["candidates"]] == [
      (c["action"], c["visits"]) for c in want["candidates"]]
  np.testing.assert_allclose([c["value"] for c in got["candidates"]],
                             [c["value"] for c in want["candidates"]], rtol=1e-5, atol=1e-6)
  assert all(abs(c["value"]) < 0.999 for c in want["candidates"] if c["visits"])
  late = early.replace(move_count=jnp.asarray(30, early.move_count.dtype))
  once = [c["value"] for c in rolling.analyse(cfg, late)["candidates"] if c["visits"] == 1]
  assert once and all(abs(abs(v) - 1.0) < 1e-6 for v in once)  # a won or lost rollout
  with pytest.raises(ValueError, match="a setting of the PUCT search, not of 'gumbel'"):
    players.SearchPlayer(network, simulations=4, algorithm="gumbel", considered_actions=16,
                         rollouts=players.Rollouts(f"{bundle}/rollout"))
  with pytest.raises(ValueError, match="not a fast rollout policy"):
    player(players.Rollouts(f"{bundle}/sl"))
  with pytest.raises(ValueError, match=r"lambda \(mixing\) must be in \[0, 1\]"):
    player(players.Rollouts(f"{bundle}/rollout", mixing=2.0))
  with pytest.raises(ValueError, match="an AlphaGo player's rollouts are its own settings"):
    players.load_player(bundle, rollouts=players.Rollouts(f"{bundle}/rollout"))
  with pytest.raises(ValueError, match=r"search settings \(rollouts\) are for a player"):
    players.load_player(helpers.make_checkpoint(tmp_path / "dual2"), policy_only=True,
                        rollouts=players.Rollouts(f"{bundle}/rollout"))


def test_a_prior_that_cannot_be_one_is_refused_in_one_line(bundle, tmp_path):
  from configs import dots_and_boxes_cpu  # pylint: disable=import-outside-toplevel
  dots = helpers.make_checkpoint(tmp_path / "dots", config=dots_and_boxes_cpu.get_config())
  with pytest.raises(ValueError, match=r"plays dots_and_boxes, not Go: give a Go network as "
                                       r"prior=DIR$"):
    players.load_player(f"alphago:prior={dots},rollout={bundle}/rollout", simulations=4)
  with pytest.raises(ValueError, match=r"is an SL policy network, with no value head to value "
                                       r"the leaves as value=DIR too"):
    players.load_player(f"alphago:prior={bundle}/sl,value={bundle}/sl,lambda=0", simulations=4)


def test_a_value_network_of_another_game_is_refused_in_one_line(bundle, tmp_path):
  from configs import dots_and_boxes_cpu  # pylint: disable=import-outside-toplevel
  dots = helpers.make_checkpoint(tmp_path / "dots", config=dots_and_boxes_cpu.get_config())
  with pytest.raises(ValueError, match=r"plays dots_and_boxes, not Go: give a Go network as "
                                       r"value=DIR$"):
    players.load_player(f"alphago:prior={bundle}/sl,value={dots},lambda=0", simulations=4)


def test_a_bundle_takes_c_puct_from_the_command_line_and_refuses_other_search_settings(bundle):
  """--c-puct sets the 2016 search's exploration constant; the PUCT-only settings are refused
  in one line, not ignored."""
  plain = players.load_player(bundle, simulations=4)
  wider = players.load_player(bundle, simulations=4, search_settings={"pb_c_init": 2.5})
  assert plain.settings.c_puct == 5.0 and wider.settings.c_puct == 2.5
  with pytest.raises(ValueError, match=r"search \(the 2016 paper's\) has no algorithm; drop"):
    players.load_player(bundle, simulations=4, algorithm="puct")
  with pytest.raises(ValueError, match=r"has no first_play, q_transform; drop them"):
    players.load_player(bundle, simulations=4, q_transform="bounded",
                        search_settings={"first_play": "parent", "pb_c_init": 1.0})


@pytest.mark.slow
def test_bundle_player_searches_and_answers_lz_analyze(bundle):
  player = players.load_player(bundle, simulations=8)
  assert isinstance(player, players.AlphaGoPlayer)
  assert player.sizes == (9,) and player.name == "agz_jax-alphago-sl-2x8-rollouts4"
  engine = gtp.Engine(player, simulations=8)
  _, ok, move = engine.handle("genmove b")
  assert ok and move != "resign"
  cfg = engine.cfg
  out = player.analyse(cfg, engine.history[-1], 8)
  assert sum(c["visits"] for c in out["candidates"]) >= 8  # the reused subtree adds visits
  legal = np.asarray(go.legal_actions(cfg, engine.history[-1]))
  assert all(legal[c["action"]] for c in out["candidates"])
  assert -1.0 <= out["value"] <= 1.0


@pytest.mark.slow
def test_one_compiled_search_serves_every_count_time_and_move(bundle):
  player = players.load_player(bundle, simulations=4)
  cfg = gtp.Engine(player).cfg  # the engine's game, as the other tests': one compile serves all
  player.prepare(cfg)
  compiled = (timed_search._start._cache_size(), timed_search._grow._cache_size())
  state = go.init(cfg)
  first = player.analyse(cfg, state, 3)
  assert sum(c["visits"] for c in first["candidates"]) == 3
  state = go.play(cfg, [first["action"], first["candidates"][0]["pv"][-1]], state) if len(
      first["candidates"][0]["pv"]) > 1 else go.play(cfg, [first["action"]], state)
  for kwargs in ({"seconds": 1e-6}, {"simulations": 5}, {"seconds": 0.05}):
    before = player.analyse(cfg, state, 1)
    visits = sum(c["visits"] for c in before["candidates"])
    out = player.analyse(cfg, state, **kwargs)
    # The same position again: its tree goes on, with at least one more simulation.
    assert sum(c["visits"] for c in out["candidates"]) >= visits + 1, kwargs
  assert player.seconds_per_simulation > 0
  assert (timed_search._start._cache_size(), timed_search._grow._cache_size()) == compiled


@pytest.mark.slow
def test_a_full_tree_ends_the_search(bundle):
  settings = players.read_bundle(bundle)  # as the other tests': their compiled search serves
  assert settings["tree_nodes"] == 128
  player = players.AlphaGoPlayer(settings, simulations=500)
  cfg = gtp.Engine(player).cfg
  out = player.analyse(cfg, go.init(cfg))
  assert sum(c["visits"] for c in out["candidates"]) == 127  # 128 nodes: the root and 127 more
  assert player.analyse(cfg, go.init(cfg), seconds=0.01)["candidates"] == out["candidates"]


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_uniform_prior_player_from_a_spec_plays_any_size_with_a_tree_on_each_cpu_device(bundle):
  # One GTP process for all three: a player given by a spec, on a board of another size than
  # the rollout policy saw, and the engine splitting the CPU into 2 devices, each with a tree
  # whose leaves are evaluated 2 at a time (search.leaf_batch).
  rollout = os.path.join(bundle, "rollout")
  replies = helpers.gtp_on_cpu_devices(
      ["--player", f"alphago:rollout={rollout},prior=uniform,max_rollout_moves=40,tree_nodes=128,"
       "leaves=2", "--simulations", "4"], 2,
      "version\nboardsize 7\nclear_board\ngenmove b\ngenmove w\nversion\nquit\n")
  assert len(replies) == 7 and all(r.startswith("=") for r in replies), replies
  assert replies[0].endswith("-trees2-leaves2)") and "alphago-uniform" in replies[5], replies


def test_merged_trees_sum_visits_and_weigh_values_by_them():
  def arrays(visits, q, value):
    a = len(visits)
    return {"best": np.asarray([int(np.argmax(visits))]), "visits": np.asarray([visits]),
            "qvalues": np.asarray([q], np.float32), "value": np.asarray([value], np.float32),
            "prior": np.full((1, a), 1.0 / a, np.float32),
            "children_index": np.full((1, 2, a), -1), "children_visits": np.zeros((1, 2, a))}
  merged = timed_search.merge_trees([arrays([3, 1, 0], [0.5, -1.0, 0.0], 0.2),
                                       arrays([0, 2, 1], [0.0, 0.5, 1.0], -0.4)])
  np.testing.assert_array_equal(merged["visits"], [[3, 3, 1]])
  np.testing.assert_allclose(merged["qvalues"], [[0.5, 0.0, 1.0]])
  np.testing.assert_allclose(merged["value"], [(5 * 0.2 + 4 * -0.4) / 9])
  assert int(merged["best"][0]) == 0  # a tie goes to the first


@pytest.mark.subprocess
@pytest.mark.parametrize("spec,message", [
    ("alphago:prior=uniform", "no rollout policy given"),
    ("alphago:rollout=x,lamda=1", "unknown setting 'lamda'"),
    ("alphago:rollout=x,rollouts_per_leaf=many", "rollouts_per_leaf must be an integer"),
    ("alphago:rollout", "is not key=value"),
    ("alphago:rollout=x,tree_nodes=1", "tree_nodes must be at least 2"),
    ("alphago:rollout=x,leaves=some", "leaves must be an integer"),
])
def test_bad_specs_get_one_clear_line(spec, message):
  proc = subprocess.run([sys.executable, "-m", "agz_jax.gtp", "--player", spec], input="quit\n",
                        capture_output=True, text=True, timeout=300, cwd=REPO, check=False)
  assert proc.returncode != 0
  last = proc.stderr.strip().splitlines()[-1]
  assert message in last and "Traceback" not in proc.stderr, proc.stderr[-1000:]


@pytest.mark.subprocess
@pytest.mark.parametrize("args,message", [
    (["--random", "--lambda-from-move", "150"], "set the rollouts of --rollout DIR: add it"),
    (["--pretrained", "human-19x19", "--rollout", "no-such-policy"], "no-such-policy"),
    (["--random", "--rollout", "pretrained/alphago-19x19/rollout_policy"],
     "search settings (rollouts) are for a network that searches, not the random player"),
    (["--random", "--algorithm", "puct", "--q-transform", "bounded"],
     "search settings (algorithm, q_transform) are for a network that searches"),
])
def test_bad_rollout_flags_get_one_clear_line(args, message):
  proc = subprocess.run([sys.executable, "-m", "agz_jax.gtp", *args], input="quit\n",
                        capture_output=True, text=True, timeout=300, cwd=REPO, check=False)
  assert proc.returncode != 0
  last = proc.stderr.strip().splitlines()[-1]
  assert last.startswith("gtp: ") and message in last, proc.stderr[-1000:]
  assert "Traceback" not in proc.stderr, proc.stderr[-1000:]


def test_pretrained_names_what_there_is():
  with pytest.raises(FileNotFoundError, match="no pretrained network 'nothing-here'"):
    players.pretrained_path("nothing-here")


@pytest.mark.slow
def test_the_shipped_bundle_holds_policies_that_know_some_go():
  """pretrained/alphago-19x19: its search's prior is human-19x19's policy head, its SL policy
  likes the third and fourth lines on the empty board, and the rollout policy captures a stone
  in atari."""
  bundle = players.pretrained_path("alphago-19x19")
  settings = players.read_bundle(bundle)
  assert settings["lambda"] == 1.0 and settings["value"] == "none"
  assert os.path.samefile(settings["prior"], players.pretrained_path("human-19x19"))
  cfg = go.GoConfig(size=19, komi=7.5)

  sl_config, sl_vars = checkpoint.load_network(os.path.join(bundle, "sl_policy"))
  assert sl_config.task == "sl_policy"
  logits = nets.make(sl_config.model).apply(
      {"params": sl_vars["params"]}, helpers.planes(cfg, go.init(cfg), sl_config.model.encoding)[None])
  for point in np.argsort(-np.asarray(logits[0, :cfg.num_points]))[:4]:
    row, col = divmod(int(point), 19)
    assert min(row, col, 18 - row, 18 - col) + 1 in (3, 4), go.action_to_gtp(cfg, int(point))

  fast_config, fast_vars = checkpoint.load_network(settings["rollout"])
  assert fast_config.task == "rollout_policy"
  tables = patterns.make_tables(fast_vars["patterns"])
  # White's last move K10 has one liberty, L10: black (to move) should take it.
  state = go.play(cfg, [go.gtp_to_action(cfg, v) for v in ("J10", "Q16", "K11", "D4", "K9", "K10")])
  idx = jax.jit(patterns.indices, static_argnums=(0, 3))(  # compiled: cheaper than op by op
      cfg, tables, state, alphago.patterns.groups_of(fast_config.model))
  weights = nets.make(fast_config.model).apply({"params": fast_vars["params"]}, idx[None])[0]
  legal = np.asarray(jax.jit(go.sensible_moves, static_argnums=0)(cfg, state))[:cfg.num_points]
  best = int(np.argmax(np.where(legal, np.asarray(weights[:cfg.num_points]), -np.inf)))
  assert go.action_to_gtp(cfg, best) == "L10"


def test_the_shipped_17_plane_sl_policy_knows_the_opening_and_serves_as_a_prior():
  """pretrained/alphago-19x19/sl_policy_agz17: an SL policy on AlphaGo Zero's 17 planes (no
  ladder reading at a leaf) that likes the third and fourth lines on the empty board, and
  that the AlphaGo player takes as its prior."""
  bundle = players.pretrained_path("alphago-19x19")
  config, variables = checkpoint.load_network(os.path.join(bundle, "sl_policy_agz17"))
  assert config.task == "sl_policy" and config.model.encoding == "agz17"
  cfg = go.GoConfig(size=19, komi=7.5)
  logits = nets.make(config.model).apply(
      {"params": variables["params"]}, helpers.planes(cfg, go.init(cfg), "agz17")[None])
  for point in np.argsort(-np.asarray(logits[0, :cfg.num_points]))[:4]:
    row, col = divmod(int(point), 19)
    assert min(row, col, 18 - row, 18 - col) + 1 in (3, 4), go.action_to_gtp(cfg, int(point))
  player = players.load_player(
      f"alphago:prior={os.path.join(bundle, 'sl_policy_agz17')},"
      f"rollout={os.path.join(bundle, 'rollout_policy')},rollouts_per_leaf=1", simulations=1)
  assert player.prior.encoding == "agz17"


def test_the_shipped_rl_policy_is_its_sl_policy_trained_further():
  """pretrained/alphago-19x19/rl_policy: the RL stage's network, the SL policy's shape and
  planes, its weights moved by the policy gradient."""
  bundle = players.pretrained_path("alphago-19x19")
  sl_config, sl_vars = checkpoint.load_network(os.path.join(bundle, "sl_policy"))
  rl_config, rl_vars = checkpoint.load_network(os.path.join(bundle, "rl_policy"))
  assert rl_config.task == "rl_policy" and rl_config.rl.init_from.endswith("sl_policy")
  for key in ("kind", "encoding", "layers", "filters"):
    assert rl_config.model[key] == sl_config.model[key]
  moved = jax.tree.map(lambda a, b: float(np.abs(np.asarray(a) - np.asarray(b)).max()),
                       sl_vars["params"], rl_vars["params"])
  # Every weight but the pass head's: the RL games sample among sensible moves and pass only
  # when none is left, so no pass is ever sampled and differentiated.
  assert moved.pop("pass") == {"bias": 0.0, "kernel": 0.0}
  assert all(v > 0 for v in jax.tree.leaves(moved))


@pytest.mark.slow
def test_the_shipped_value_network_sees_who_is_ahead():
  """pretrained/alphago-19x19/value_net: with black's wall on the fifth line and white's on the
  second (black owns most of the board), black to move is ahead and white to move behind."""
  config, variables = checkpoint.load_network(
      os.path.join(players.pretrained_path("alphago-19x19"), "value_net"))
  assert config.task == "value" and config.model.encoding == "alphago49"
  cfg = go.GoConfig(size=19, komi=7.5)
  moves = [go.gtp_to_action(cfg, f"{col}{row}") for col in "ABCDEFGHJKLMNOPQRST" for row in (5, 2)]
  black_to_move = go.play(cfg, moves)
  white_to_move = go.play(cfg, moves + [go.gtp_to_action(cfg, "K10")])
  batch = jax.tree.map(lambda *x: jnp.stack(x), black_to_move, white_to_move)
  value = nets.make(config.model).apply({"params": variables["params"]},
                                        helpers.planes(cfg, batch, config.model.encoding))
  assert value[0] > 0.1 and value[1] < -0.1, value


@pytest.mark.slow
def test_a_bundle_with_a_value_network_mixes_its_leaves(bundle, tmp_path):
  from configs import value_cpu  # pylint: disable=import-outside-toplevel
  config = value_cpu.get_config()
  config.game.size = 9
  config.model.layers, config.model.filters, config.model.hidden = 2, 8, 16  # the mixing is the point
  value = helpers.make_checkpoint(tmp_path / "value", config=config)
  small = "max_rollout_moves=40,tree_nodes=128"
  # Three trees of the position searched at once (root parallelism): one compiled search
  # for the mixing and the tree count.
  spec = (f"alphago:prior={bundle}/sl,rollout={bundle}/rollout,value={value},lambda=0.5,"
          f"rollouts_per_leaf=2,trees=3,{small}")
  player = players.load_player(spec, simulations=4)
  assert player.trees == 3
  assert player.name == "agz_jax-alphago-sl-2x8-value-rollouts2-lambda0.5-trees3"
  engine = gtp.Engine(player, simulations=4)
  out = player.analyse(engine.cfg, go.init(engine.cfg))
  assert sum(c["visits"] for c in out["candidates"]) == 3 * 4  # the trees add up at the root
  visits = [c["visits"] for c in out["candidates"]]
  assert visits == sorted(visits, reverse=True) and out["action"] == out["candidates"][0]["action"]
  _, ok, move = engine.handle("genmove b")
  assert ok and move != "resign"
  # lambda 0 needs no rollout policy; a value network with no lambda mixes at the paper's 0.5;
  # rollouts only (lambda 1) do not load the value network they would not use.
  only = players.load_player(f"alphago:value={value},lambda=0,{small}", simulations=4)
  assert only.name == "agz_jax-alphago-uniform-value" and "rollout" not in only.variables
  _, ok, move = gtp.Engine(only, simulations=4).handle("genmove w")
  assert ok and move != "resign"
  mixed = players.load_player(f"alphago:prior={bundle}/sl,rollout={bundle}/rollout,value={value}",
                              simulations=4)
  assert mixed.leaf.mixing == 0.5 and "value" in mixed.variables
  rollouts = players.load_player(
      f"alphago:prior={bundle}/sl,rollout={bundle}/rollout,value={value},lambda=1", simulations=4)
  assert rollouts.value is None and "value" not in rollouts.variables
  big_prior = make_sl_checkpoint(tmp_path / "sl19", size=19)
  with pytest.raises(ValueError, match="the value network plays 9x9 and the SL policy 19x19"):
    players.load_player(f"alphago:prior={big_prior},rollout={bundle}/rollout,value={value}",
                        simulations=4)
  for bad, message in ((f"alphago:rollout={bundle}/rollout,lambda=0.5", "mixes in a value network"),
                       (f"alphago:rollout={bundle}/rollout,value={bundle}/sl,lambda=0.5",
                        "not a value network"),
                       (f"alphago:rollout={bundle}/rollout,lambda=1,lambda_from_move=100",
                        "lambda_from_move 100 leaves the positions before it to a value network")):
    with pytest.raises(ValueError, match=message):
      players.load_player(bad, simulations=4)
