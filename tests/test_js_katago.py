"""KataGo's planes in JavaScript (agz_jax/web/static/go_katago.js) against the JAX encoding
"katago_noladders" and Benson's pass-alive areas against go.pass_alive: random boards, and
games of mostly sensible moves replayed in Node."""

import functools
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import go
from test_js_rules import ROOT, _js_planes, _node, node  # pylint: disable=unused-import

KATAGO_JS = ROOT / "agz_jax" / "web" / "static" / "go_katago.js"
NUM_SPATIAL = 22

pytestmark = pytest.mark.subprocess


def _js_pass_alive(node_path, cases: list[dict]) -> list[list[int]]:
  script = f"""
    import {{passAlive}} from {json.dumps(KATAGO_JS.as_uri())};
    import {{readFileSync}} from "node:fs";
    const cases = JSON.parse(readFileSync(0, "utf8"));
    console.log(JSON.stringify(cases.map((c) => passAlive(c.size, c.board))));
  """
  done = _node(node_path, ["--input-type=module", "-e", script], json.dumps(cases))
  assert done.returncode == 0, done.stderr
  return json.loads(done.stdout)


@functools.cache
def _pass_alive(size):
  return jax.jit(jax.vmap(lambda board: go.pass_alive(go.GoConfig(size), board)))


def test_js_pass_alive_agrees_with_jax_on_arbitrary_boards(node):
  """Random stones, legal or not (chains without liberties, regions without empty points)."""
  cases, want = [], []
  for size in (2, 3, 4, 5):
    rng = np.random.default_rng(size)
    boards = rng.choice(np.array([-1, 0, 0, 1], np.int8), size=(150, size * size))
    want += np.asarray(_pass_alive(size)(boards)).tolist()
    cases += [{"size": size, "board": board.tolist()} for board in boards]
  assert any(1 in w for w in want) and any(-1 in w for w in want)
  got = _js_pass_alive(node, cases)
  for case, g, w in zip(cases, got, want):
    assert g == w, case


@functools.partial(jax.jit, static_argnums=(0, 2))
def _sensible_game(cfg, key, moves):
  """[moves] actions of one game: sensible moves (no own eye filled) but for one in ten any
  legal one, and a pass one in a hundred for the first moves, one in ten after (the opponent's
  pass answered by one a third of the time), so that groups live with two eyes, kos are banned
  and games end by two passes."""

  def turn(state, key):
    pick, draw, stop = jax.random.split(key, 3)
    legal = go.legal_actions(cfg, state)
    sensible = go.sensible_moves(cfg, state)
    allowed = jnp.where((jax.random.uniform(pick) < 0.9) & jnp.any(sensible), sensible, legal)
    action = jax.random.categorical(draw, jnp.where(allowed, 0.0, -jnp.inf))
    last_passed = jnp.all(state.board == state.previous_boards[0]) & (state.move_count > 0)
    chance = jnp.where(state.move_count < cfg.num_points, 0.01, 0.1)
    passes = jax.random.uniform(stop) < jnp.where(last_passed, 0.33, chance)
    action = jnp.where(passes | ~jnp.any(allowed[:-1]), cfg.pass_action, action)
    action = jnp.where(state.terminated, cfg.pass_action, action)
    return go.step(cfg, state, action), (action, state.terminated)

  return jax.lax.scan(turn, go.init(cfg), jax.random.split(key, moves))[1]


def _cases(cfg, games, seed):
  """Each game's moves (until it ends) and its katago_noladders planes after every move."""
  features = jax.jit(lambda states: go.features(cfg, states, "katago_noladders"))
  cases = []
  for key in jax.random.split(jax.random.PRNGKey(seed), games):
    actions, over = jax.device_get(_sensible_game(cfg, key, cfg.max_moves))
    moves = actions[~over].tolist()
    states, state = [], go.init(cfg)
    for action in moves:
      state = go.step(cfg, state, action)
      states.append(state)
    stacked = jax.tree.map(lambda *x: np.stack(x), *states)
    planes = np.asarray(features(stacked)).reshape(len(states), cfg.num_points, -1)
    cases.append({"moves": moves, "planes": planes})
  return cases


@pytest.mark.parametrize("size, komi, games", [(9, 7.5, 3), (5, 2.0, 20)])
def test_js_katago_planes_agree_with_jax(node, size, komi, games):
  """After every move of the games: stones, liberties, superko bans, the last five moves,
  the areas with Benson's pass-alive regions, the globals (passes, komi, its parity wave)."""
  cfg = go.GoConfig(size, komi=komi, max_moves=3 * size * size)
  cases = _cases(cfg, games, seed=size)
  planes = np.concatenate([c["planes"] for c in cases])
  # The positions exercise what the planes say: superko bans, passes, and Benson's
  # pass-alive areas (on the games' last boards).
  assert planes[:, :, 6].any() and planes[:, 0, NUM_SPATIAL].any()
  last = np.stack([np.asarray(go.play(cfg, c["moves"]).board) for c in cases])
  assert (np.asarray(_pass_alive(size)(last)) != 0).any()
  jsonable = [{"moves": c["moves"], "planes": c["planes"].reshape(len(c["moves"]), -1).tolist()}
              for c in cases]
  count, worst = _js_planes(node, KATAGO_JS.parent / "go_rules.js",
                            f"newGame({size}, {komi}, {cfg.max_moves})", "katagoPlanes", jsonable,
                            planes_js=KATAGO_JS)
  assert count == len(planes) and worst < 1e-6
