"""The PUCT search in JavaScript (agz_jax/web/static/puct.js) against the Python players' search
(search.anytime, what SearchPlayer runs with PUCT) on the same Dots and Boxes positions, the
same evaluator and settings: the same root visits and move, in Node."""

import functools
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import dots_and_boxes as db, search
from agz_jax.game import Game

import helpers
from test_js_rules import ROOT, _node, node  # noqa: F401  pylint: disable=unused-import

CHECK_JS = ROOT / "tests" / "js" / "puct_check.mjs"
CFG = db.DotsConfig(3, 3)
GAME = Game(db, CFG)
SIMULATIONS = 48
# (q_transform, first_play, prior_temperature, value_scale): the Python players' settings the
# page may be given (the value scale's entries cover 4 moves each).
SETTINGS = [("siblings", "loss", 1.0, ()), ("bounded", "parent", 1.0, ()),
            ("bounded", "reduction", 1.0, ()), ("bounded", "parent", 1.5, ()),
            ("bounded", "parent", 1.0, (1.0, 0.6, 0.2))]
SCALE_MOVES = 4

pytestmark = pytest.mark.subprocess


def fake_evaluator(variables, states, rng_key):
  """Distinct prior logits that move with the position, and a value that reads the boxes."""
  del variables, rng_key
  actions = jnp.arange(CFG.num_lines, dtype=jnp.float32)
  count = states.move_count.astype(jnp.float32)[:, None]
  logits = 2.0 * jnp.sin(1.3 * actions[None] + 0.7 * count)
  balance = jnp.sum(states.boxes, axis=-1).astype(jnp.float32)
  value = jnp.tanh(0.35 * states.to_play.astype(jnp.float32) * balance
                   + 0.1 * jnp.cos(states.move_count.astype(jnp.float32)))
  return logits, value


@functools.cache
def _search(q_transform, first_play, prior_temperature=1.0, value_scale=()):
  settings = helpers.search_config(algorithm="puct", num_simulations=SIMULATIONS,
                                   dirichlet_fraction=0.0, q_transform=q_transform,
                                   first_play=first_play, prior_temperature=prior_temperature,
                                   value_scale=value_scale, value_scale_moves=SCALE_MOVES)

  def run(states, key):
    tree = search.anytime.start(GAME, fake_evaluator, {}, states, key, settings,
                                num_nodes=SIMULATIONS + 1)
    tree = search.anytime.grow(GAME, fake_evaluator, {}, tree, jax.random.fold_in(key, 1),
                               settings, jnp.int32(SIMULATIONS))
    summary = tree.summary()
    return summary.visit_counts, summary.value
  return jax.jit(run)


def positions(count, seed):
  """Unfinished positions of random 3x3 games, from the first move to near the end."""
  rng = np.random.default_rng(seed)
  out = []
  for i in range(count):
    state, moves = db.init(CFG), []
    for _ in range(int(rng.integers(0, CFG.num_lines - 3))):
      legal = np.flatnonzero(np.asarray(db.legal_actions(CFG, state)))
      moves.append(int(rng.choice(legal)))
      state = db.step(CFG, state, moves[-1])
    out.append((moves, state))
    del i
  return out


@pytest.mark.parametrize("q_transform, first_play, prior_temperature, value_scale", SETTINGS)
def test_js_search_matches_the_python_search(node, q_transform, first_play,  # noqa: F811
                                             prior_temperature, value_scale):
  found = positions(12, seed=len(q_transform) + len(first_play))
  states = jax.tree.map(lambda *x: jnp.stack(x), *[s for _, s in found])
  key = jax.random.PRNGKey(0)
  visits, value = jax.device_get(
      _search(q_transform, first_play, prior_temperature, value_scale)(states, key))
  if prior_temperature != 1.0 or value_scale:  # they change the Python search's visits
    plain, _ = jax.device_get(_search(q_transform, first_play)(states, key))
    assert (plain != visits).any()
  request = {"simulations": SIMULATIONS,
             "settings": {"qTransform": q_transform, "firstPlay": first_play,
                          "fpuReduction": 0.2, "pbCInit": 1.25, "pbCBase": 19652.0,
                          "priorTemperature": prior_temperature, "valueScale": list(value_scale),
                          "valueScaleMoves": SCALE_MOVES},
             "positions": [{"rows": 3, "cols": 3, "moves": moves} for moves, _ in found]}
  done = _node(node, [str(CHECK_JS)], json.dumps(request))
  assert done.returncode == 0, done.stderr
  js = json.loads(done.stdout)
  for i, (python_visits, python_value, theirs) in enumerate(zip(visits, value, js)):
    assert theirs["visits"] == python_visits.tolist(), (i, found[i][0])
    assert theirs["action"] == int(np.argmax(python_visits))
    assert theirs["value"] == pytest.approx(float(python_value), abs=1e-4)
