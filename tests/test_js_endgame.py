"""The page's Go endgame rules (agz_jax/web/static/go_endgame.js) against the GTP engine's
(agz_jax.players.move_policy): positions of random games of sensible moves, where eyes, neutral
points and lost groups abound, replayed in Node by tests/js/go_endgame_check.mjs."""

import functools
import json
import subprocess

import jax
import numpy as np
import pytest

from agz_jax import go, players
from agz_jax.players import move_policy
from agz_jax.players.network import candidates
from test_js_rules import ROOT, node  # noqa: F401  pylint: disable=unused-import

CHECK_JS = ROOT / "tests" / "js" / "go_endgame_check.mjs"
# Boards -> (games, every how many moves a position is taken).
BOARDS = {go.GoConfig(9, komi=7.5): (3, 12), go.GoConfig(5, komi=0.5): (6, 5)}

pytestmark = pytest.mark.subprocess


@functools.partial(jax.jit, static_argnums=0)
def _advance(cfg, states, actions):
  states = jax.vmap(functools.partial(go.step, cfg))(states, actions)
  return states, jax.vmap(functools.partial(go.sensible_moves, cfg))(states)


def positions(cfg: go.GoConfig, games: int, every: int, seed: int) -> list[tuple[list, go.GoState]]:
  """(moves, state) every `every` moves of `games` games of uniformly random sensible moves (a
  pass where none is left), until each game ends."""
  rng = np.random.default_rng(seed)
  states = jax.vmap(lambda _: go.init(cfg))(np.arange(games))
  sensible = np.asarray(jax.vmap(functools.partial(go.sensible_moves, cfg))(states))
  moves = [[] for _ in range(games)]
  out = []
  for move in range(1, cfg.max_moves):
    actions = np.array([rng.choice(np.flatnonzero(row)) if row.any() else cfg.pass_action
                        for row in sensible], np.int32)
    before = np.asarray(states.terminated)
    states, sensible = _advance(cfg, states, actions)
    sensible = np.asarray(sensible)
    for g in range(games):
      if not before[g]:
        moves[g].append(int(actions[g]))
    if move % every == 0:
      for g in np.flatnonzero(~np.asarray(states.terminated)):
        out.append((list(moves[g]), jax.tree.map(lambda x, g=g: x[g], states)))
    if np.asarray(states.terminated).all():
      break
  return out


class _Proposes(players.Player):
  """A player whose search proposes a given move with given visits."""

  def __init__(self, action, visits):
    self.out = candidates({
        "visits": np.asarray(visits)[None], "qvalues": np.zeros((1, len(visits))),
        "prior": np.zeros((1, len(visits))), "best": np.asarray([action]),
        "value": np.zeros(1), "children_index": np.full((1, 1, len(visits)), -1),
        "children_visits": np.zeros((1, 1, len(visits)))})

  def analyse(self, cfg, state, simulations=None, seconds=None):
    return self.out


def proposals(cfg: go.GoConfig, state: go.GoState, rng) -> list[dict]:
  """Searches' results for `state`: a pass, one of the mover's own eyes where there is one,
  and a random legal point, each with a few other visited actions."""
  legal = np.flatnonzero(np.asarray(go.legal_actions(cfg, state)))
  eyes = np.flatnonzero(np.asarray(move_policy.sensible(cfg, state))[:cfg.num_points]
                        != np.asarray(go.legal_actions(cfg, state))[:cfg.num_points])
  chosen = [cfg.pass_action, rng.choice(eyes) if eyes.size else rng.choice(legal),
            rng.choice(legal)]
  out = []
  for action in chosen:
    visits = np.zeros(cfg.num_actions, np.int32)
    others = rng.choice(legal, size=min(3, legal.size), replace=False)
    visits[others] = rng.integers(1, 6, size=others.size)
    visits[action] = rng.integers(1, 6)
    out.append({"action": int(action), "visits": visits.tolist(),
                "opponent_passed": bool(rng.random() < 0.5)})
  return out


@pytest.fixture(scope="module")
def cases():
  """[(position for Node, what the Python engine decides there)]."""
  rng = np.random.default_rng(0)
  out = []
  for seed, (cfg, (games, every)) in enumerate(BOARDS.items()):
    never = move_policy.EngineSettings(resign_threshold=0.0)
    for moves, state in positions(cfg, games, every, seed):
      found = proposals(cfg, state, rng)
      prefer = [int(a) for a in rng.permutation(cfg.num_points)[:4]]
      position = {"size": cfg.size, "komi": cfg.komi, "max_moves": cfg.max_moves,
                  "moves": moves, "prefer": prefer, "proposals": found}
      want = {
          "sensible": np.flatnonzero(move_policy.sensible(cfg, state)).tolist(),
          "dame": move_policy.dame_to_fill(cfg, state),
          "dame_prefer": move_policy.dame_to_fill(cfg, state, prefer),
          "press": move_policy.pressing_move(cfg, state),
          "settled": [move_policy.choose_move(never, _Proposes(f["action"], f["visits"]), cfg,
                                              state, opponent_passed=f["opponent_passed"])
                      for f in found],
          "playout_wins": move_policy.playout_wins(cfg, state),
          "moves": len(moves), "points": cfg.num_points}
      out.append((position, want))
  return out


@pytest.fixture(scope="module")
def answers(node, cases):  # noqa: F811
  done = subprocess.run([node, str(CHECK_JS)], input=json.dumps([p for p, _ in cases]),
                        capture_output=True, text=True, timeout=300, check=False)
  assert done.returncode == 0, done.stderr
  return json.loads(done.stdout)


@pytest.mark.parametrize("key", ["sensible", "dame", "dame_prefer", "press", "settled"])
def test_js_endgame_decides_as_the_engine(cases, answers, key):
  assert len(answers) == len(cases)
  for index, ((position, want), got) in enumerate(zip(cases, answers)):
    assert got[key] == want[key], (f"position {index} ({position['size']}x{position['size']}, "
                                   f"moves {position['moves']}): {key}")


def test_the_positions_exercise_every_rule(cases, answers):
  """The positions are not all alike: the rules change some proposals, fill some neutral
  points, press some groups, and some own eyes are proposed."""
  changed = sum(a != p["action"] for (position, want) in cases
                for a, p in zip(want["settled"], position["proposals"]))
  assert changed >= 20
  assert sum(want["dame"] is not None for _, want in cases) >= 5
  assert sum(want["press"] is not None for _, want in cases) >= 5
  assert sum(want["dame_prefer"] != want["dame"] for _, want in cases) >= 1


def test_js_resigns_where_the_engines_count_agrees(cases, answers):
  # Both counts are 64 random playouts: where the engine's is far from the 25% line, the
  # page's falls on the same side of it; a win rate of 50% never resigns, nor a lost position
  # before half the points' moves (the same board, its move number set on both sides of that
  # line).
  lost = won = unweighed = 0
  for (_, want), got in zip(cases, answers):
    assert not got["resigns_even"]
    # A scaled value is read un-scaled; with a scale of 0 the page's own count (the same
    # playouts) is the win rate, against the 5% threshold.
    assert got["resigns_lost_scaled"] == got["resigns_lost"]
    late_here = want["moves"] >= want["points"] // 2
    assert got["resigns_unweighed"] == (late_here and got["playout_wins"] < 0.05)
    unweighed += got["resigns_unweighed"]
    assert abs(got["playout_wins"] - want["playout_wins"]) < 0.35
    late = want["moves"] >= want["points"] // 2
    if want["playout_wins"] < 0.05 and late:
      assert got["resigns_lost"] and got["resigns_around_half"] == [False, True]
      lost += 1
    elif want["playout_wins"] > 0.5 or not late:
      assert not got["resigns_lost"]
      won += late
  assert lost >= 3 and won >= 3 and unweighed >= 1
