"""The JavaScript rules of Dots and Boxes (agz_jax/web/static/boxes_rules.js) against the JAX ones:
random games played by agz_jax.dots_and_boxes, replayed in Node by tests/js/boxes_rules_check.mjs."""

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

ROOT = pathlib.Path(__file__).resolve().parent.parent
RULES_JS = ROOT / "agz_jax" / "web" / "static" / "boxes_rules.js"
CHECK_JS = ROOT / "tests" / "js" / "boxes_rules_check.mjs"
# (rows, cols) -> random games.
GAMES = {(3, 3): 200, (2, 4): 50, (5, 5): 50}

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
