"""The JavaScript rules of Dots and Boxes (agz_jax/web/static/boxes_rules.js) and of Go
(go_rules.js) against the JAX ones: random games played by agz_jax.dots_and_boxes and agz_jax.go,
replayed in Node by tests/js/boxes_rules_check.mjs and go_rules_check.mjs."""

import functools
import json
import os
import pathlib
import shutil
import subprocess

import jax
import numpy as np
import pytest

from agz_jax import dots_and_boxes as db
from agz_jax import go

ROOT = pathlib.Path(__file__).resolve().parent.parent
RULES_JS = ROOT / "agz_jax" / "web" / "static" / "boxes_rules.js"
CHECK_JS = ROOT / "tests" / "js" / "boxes_rules_check.mjs"
# (rows, cols) -> random games.
GAMES = {(3, 3): 200, (2, 4): 50, (5, 5): 50}
GO_RULES_JS = ROOT / "agz_jax" / "web" / "static" / "go_rules.js"
GO_CHECK_JS = ROOT / "tests" / "js" / "go_rules_check.mjs"
# Go configs -> random games. Small boards make captures, kos and superko frequent; an integer
# komi makes draws possible.
GO_GAMES = {go.GoConfig(9, komi=7.5): 100, go.GoConfig(5, komi=0.0, max_moves=80): 50}
# The chance that a random player passes (and after the opponent's pass), so that some games
# end by two passes and the others at max_moves.
PASS_PROBABILITY = 0.04
PASS_REPLY_PROBABILITY = 0.3

pytestmark = pytest.mark.subprocess


@pytest.fixture(scope="module")
def node():
  """The node binary; skipped where there is none, except where AGZ_REQUIRE_NODE=1 (then a
  missing Node fails)."""
  path = shutil.which("node")
  if path is None:
    if os.environ.get("AGZ_REQUIRE_NODE") == "1":
      pytest.fail("AGZ_REQUIRE_NODE=1 but node is not on the PATH")
    pytest.skip("node is not on the PATH")
  return path


@functools.partial(jax.jit, static_argnums=0)
def _advance(cfg, states, lines):
  """[B] games after one line each, with what the check compares: legal [B, L], to_play [B],
  boxes [B, N], terminated [B], result [B]."""
  states = jax.vmap(functools.partial(db.step, cfg))(states, lines)
  return (states, jax.vmap(functools.partial(db.legal_actions, cfg))(states), states.to_play,
          states.boxes, states.terminated, jax.vmap(functools.partial(db.result, cfg))(states))


def random_games(cfg: db.DotsConfig, count: int, seed: int) -> list[dict]:
  """`count` games of uniformly random legal lines, recorded after every line."""
  rng = np.random.default_rng(seed)
  states = jax.vmap(lambda _: db.init(cfg))(np.arange(count))
  legal = np.ones((count, cfg.num_lines), bool)
  games = [{"rows": cfg.rows, "cols": cfg.cols, "moves": [], "after": []} for _ in range(count)]
  for _ in range(db.max_length(cfg)):
    lines = np.array([rng.choice(np.flatnonzero(row)) for row in legal], np.int32)
    states, legal, to_play, boxes, over, result = jax.device_get(_advance(cfg, states, lines))
    for g, game in enumerate(games):
      game["moves"].append(int(lines[g]))
      record = {"legal": np.flatnonzero(legal[g]).tolist(), "to_play": int(to_play[g]),
                "scores": {"first": int((boxes[g] == 1).sum()),
                           "second": int((boxes[g] == -1).sum())},
                "over": bool(over[g])}
      if over[g]:
        record["result"] = int(result[g])
      game["after"].append(record)
  assert all(game["after"][-1]["over"] for game in games)
  return games


def _node(node, args, stdin=""):
  return subprocess.run([node, *args], input=stdin, capture_output=True, text=True, timeout=60,
                        check=False)


def test_js_rules_agree_with_jax(node):
  games = [game for seed, ((rows, cols), count) in enumerate(GAMES.items())
           for game in random_games(db.DotsConfig(rows, cols), count, seed)]
  # The games exercise the extra move: lines that complete a box (one or two at once) and keep
  # the mover.
  gains = np.concatenate([np.diff([0] + [sum(a["scores"].values()) for a in game["after"]])
                          for game in games])
  assert {0, 1, 2} <= set(gains.tolist())

  done = _node(node, [str(CHECK_JS)], json.dumps(games))
  assert done.returncode == 0, done.stderr + done.stdout
  assert done.stdout.strip() == f"ok {len(games)} games"


def test_js_rules_reject_illegal_lines(node):
  script = f"""
    import {{newGame, play}} from {json.dumps(RULES_JS.as_uri())};
    const attempt = (state, line) => {{
      try {{ play(state, line); return "no error"; }} catch (error) {{ return error.message; }}
    }};
    let state = play(newGame(1, 1), 0);
    const before = JSON.stringify(state);
    const drawn = attempt(state, 0);
    if (JSON.stringify(state) !== before) throw new Error("play changed its input");
    const offBoard = attempt(state, 4);
    for (const line of [1, 2, 3]) state = play(state, line);
    console.log(JSON.stringify([drawn, offBoard, attempt(state, 0)]));
  """
  done = _node(node, ["--input-type=module", "-e", script])
  assert done.returncode == 0, done.stderr
  drawn, off_board, over = json.loads(done.stdout)
  assert drawn == "illegal line 0 (h(0,0)): it is already drawn"
  assert off_board == "illegal line 4: a 1x1 board has lines 0..3"
  assert over == "illegal line 0: the game is over"


def _js_planes(node, rules_js, new_game: str, planes: str, cases: list[dict], planes_js=None):
  """(positions compared, largest difference) of the planes that `rules_js`'s function `planes`
  (or `planes_js`'s, given) gives after each move of each case ({moves, planes: one row per
  move, ...}), the game started by the JavaScript expression `new_game` (of the case `c`),
  against the cases' planes."""
  script = f"""
    import {{newGame, play}} from {json.dumps(rules_js.as_uri())};
    import {{{planes}}} from {json.dumps((planes_js or rules_js).as_uri())};
    import {{readFileSync}} from "node:fs";
    const cases = JSON.parse(readFileSync(0, "utf8"));
    let worst = 0, count = 0;
    for (const c of cases) {{
      let state = {new_game};
      c.moves.forEach((action, move) => {{
        state = play(state, action);
        const got = {planes}(state);
        if (got.length !== c.planes[move].length) throw new Error("planes of the wrong size");
        got.forEach((x, i) => {{ worst = Math.max(worst, Math.abs(x - c.planes[move][i])); }});
        count += 1;
      }});
    }}
    console.log(JSON.stringify([count, worst]));
  """
  done = _node(node, ["--input-type=module", "-e", script], json.dumps(cases))
  assert done.returncode == 0, done.stderr
  return json.loads(done.stdout)


def test_js_planes_agree_with_jax(node):
  """The network's input planes in JavaScript (boxes_rules.planes) are agz_jax.dots_and_boxes's,
  after every move of random games on two boards."""
  cases = []
  for (rows, cols), seed in (((3, 3), 7), ((2, 4), 8)):
    cfg = db.DotsConfig(rows, cols)
    features = jax.jit(lambda states, cfg=cfg: db.features(cfg, states))
    for game in random_games(cfg, 4, seed):
      # The planes after each move of the game (the finished position included).
      states, state = [], db.init(cfg)
      for line in game["moves"]:
        state = db.step(cfg, state, line)
        states.append(state)
      stacked = jax.tree.map(lambda *x: np.stack(x), *states)
      cases.append({"rows": rows, "cols": cols, "moves": game["moves"],
                    "planes": np.asarray(features(stacked)).reshape(len(states), -1).tolist()})
  count, worst = _js_planes(node, RULES_JS, "newGame(c.rows, c.cols)", "planes", cases)
  assert count == sum(len(c["moves"]) for c in cases) and worst < 1e-6


@functools.partial(jax.jit, static_argnums=0)
def _go_advance(cfg, states, actions):
  """[B] Go games after one action each, with what the check compares and what the test counts:
  legal [B, P+1], ko_banned [B, P], to_play [B], score [B], terminated [B], stones [B]."""
  states = jax.vmap(functools.partial(go.step, cfg))(states, actions)
  return (states, jax.vmap(functools.partial(go.legal_actions, cfg))(states),
          jax.vmap(functools.partial(go.ko_banned, cfg))(states), states.to_play,
          jax.vmap(functools.partial(go.score, cfg))(states), states.terminated,
          (states.board != go.EMPTY).sum(axis=-1))


def random_go_games(cfg: go.GoConfig, count: int, seed: int) -> tuple[list[dict], dict]:
  """`count` games of random legal actions (a pass with PASS_PROBABILITY, or
  PASS_REPLY_PROBABILITY after a pass; else a uniform legal point), recorded after every move,
  and counts of what they exercised: captures, superko bans (points empty and not suicide but
  illegal), games ended by two passes."""
  rng = np.random.default_rng(seed)
  pass_action = cfg.pass_action
  states = jax.vmap(lambda _: go.init(cfg))(np.arange(count))
  legal = np.ones((count, cfg.num_actions), bool)
  stones = np.zeros(count, int)
  passed = np.zeros(count, bool)
  finished = np.zeros(count, bool)
  seen = {"captures": 0, "superko_bans": 0, "two_passes": 0}
  games = [{"size": cfg.size, "komi": cfg.komi, "max_moves": cfg.max_moves, "moves": [],
            "after": []} for _ in range(count)]
  for _ in range(cfg.max_moves):
    actions = np.full(count, pass_action, np.int32)
    for g in range(count):
      points = np.flatnonzero(legal[g, :pass_action])
      chance = PASS_REPLY_PROBABILITY if passed[g] else PASS_PROBABILITY
      if not finished[g] and points.size and rng.random() >= chance:
        actions[g] = rng.choice(points)
    states, legal, banned, to_play, score, over, now = jax.device_get(
        _go_advance(cfg, states, actions))
    for g, game in enumerate(games):
      if finished[g]:
        continue
      action = int(actions[g])
      game["moves"].append(action)
      if action != pass_action and now[g] < stones[g] + 1:
        seen["captures"] += 1
      seen["superko_bans"] += int(banned[g].sum())
      if over[g]:
        # legal_actions still allows a pass (that changes nothing) on a finished game; the page
        # offers nothing.
        assert np.flatnonzero(legal[g]).tolist() == [pass_action]
        seen["two_passes"] += int(action == pass_action and passed[g])
      game["after"].append({"legal": [] if over[g] else np.flatnonzero(legal[g]).tolist(),
                            "to_play": int(to_play[g]), "score": float(score[g]),
                            "over": bool(over[g])})
      passed[g] = action == pass_action
      stones[g] = now[g]
      finished[g] = over[g]
  assert finished.all()
  return games, seen


def test_js_go_rules_agree_with_jax(node):
  games, seen = [], {}
  for seed, (cfg, count) in enumerate(GO_GAMES.items()):
    played, counts = random_go_games(cfg, count, seed)
    games += played
    for key, value in counts.items():
      seen[key] = seen.get(key, 0) + value
  # The games exercise captures, positional superko (a point empty and not suicide, illegal
  # only because the board would repeat) and both ends of a game.
  assert seen["captures"] > 0 and seen["superko_bans"] > 0, seen
  assert 0 < seen["two_passes"] < len(games), seen

  done = _node(node, [str(GO_CHECK_JS)], json.dumps(games))
  assert done.returncode == 0, done.stderr + done.stdout
  assert done.stdout.strip() == f"ok {len(games)} games"


# A ko on 5x5: black 1, 11, 5 and white 2, 12, 8 around points 6 and 7; white plays 6, black
# takes it at 7, and white's retake at 6 would bring back the board before black's take.
KO_MOVES = [1, 2, 11, 12, 5, 8, 24, 6, 7]


def test_js_go_rules_reject_illegal_moves(node):
  script = f"""
    import {{newGame, play, legalMoves}} from {json.dumps(GO_RULES_JS.as_uri())};
    const attempt = (state, action) => {{
      try {{ play(state, action); return "no error"; }} catch (error) {{ return error.message; }}
    }};
    const replay = (moves) => moves.reduce(play, newGame(5, 0));
    const centre = replay([12]);
    const before = JSON.stringify(centre);
    const occupied = attempt(centre, 12);
    if (JSON.stringify(centre) !== before) throw new Error("play changed its input");
    const suicide = attempt(replay([1, 24, 5]), 0);
    const beforeTake = replay({json.dumps(KO_MOVES[:-1])});
    const ko = play(beforeTake, 7);
    const superko = attempt(ko, 6);
    // A line of play sees only its own positions: the state before the take still may take, and
    // the second take (a copy of the shared positions) bans the retake again.
    const branch = legalMoves(beforeTake).includes(7) &&
                   attempt(play(beforeTake, 7), 6) === superko;
    const over = attempt(replay([25, 25]), 0);
    console.log(JSON.stringify([occupied, suicide, superko, branch, over,
                                attempt(centre, 26), legalMoves(ko).includes(6)]));
  """
  done = _node(node, ["--input-type=module", "-e", script])
  assert done.returncode == 0, done.stderr
  occupied, suicide, superko, branch, over, off_board, ko_legal = json.loads(done.stdout)
  assert occupied == "illegal move 12 (W C3): the point is occupied"
  assert suicide == "illegal move 0 (W A5): suicide, the stone would have no liberty"
  assert superko == ("illegal move 6 (W B4): superko, the board would repeat an earlier "
                     "position")
  assert branch and not ko_legal
  assert over == "illegal move 0 (B A5): the game is over"
  assert off_board == "illegal move 26: a 5x5 board has actions 0..25 (25 passes)"
  # The JAX rules give the same reasons.
  cfg = go.GoConfig(5, komi=0.0)
  for moves, reason in (([12, 12], "occupied"), ([1, 24, 5, 0], "suicide"),
                        ([*KO_MOVES, 6], "superko"), ([25, 25, 0], "game over")):
    with pytest.raises(ValueError, match=f"is illegal: {reason}$"):
      go.play(cfg, moves)


def test_js_go_planes_agree_with_jax(node):
  """AlphaGo Zero's 17 planes in JavaScript (go_rules.agzPlanes) are go.features' "agz17" after
  every move of random 5x5 games (passes, captures and the history's start included)."""
  cfg = go.GoConfig(5, komi=0.5, max_moves=40)
  games, _ = random_go_games(cfg, 4, seed=11)
  features = jax.jit(lambda states: go.features(cfg, states, "agz17"))
  cases = []
  for game in games:
    states, state = [], go.init(cfg)
    for action in game["moves"]:
      state = go.step(cfg, state, action)
      states.append(state)
    stacked = jax.tree.map(lambda *x: np.stack(x), *states)
    cases.append({"moves": game["moves"],
                  "planes": np.asarray(features(stacked)).reshape(len(states), -1).tolist()})
  count, worst = _js_planes(node, GO_RULES_JS, "newGame(5, 0.5, 40)", "agzPlanes", cases)
  assert count == sum(len(c["moves"]) for c in cases) > 40 and worst == 0
