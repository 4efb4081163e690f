"""python -m agz_jax.web.standalone: a folder that plays Dots and Boxes in the browser with no
Python behind it. Headless Chromium opens it through a plain static server and plays a whole
game by clicks; the moves and the score are checked with agz_jax.dots_and_boxes. And the
export's one-line refusals."""

import os
import shutil
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from agz_jax import dots_and_boxes as db, go
from agz_jax.web import standalone

import helpers
from configs import cpu_9x9, dots_and_boxes_cpu
from test_web import _browser

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]


@pytest.fixture(scope="module")
def onnxruntime_web(tmp_path_factory):
  """The onnxruntime-web package, packed by npm once for the module (skipped without npm,
  except where AGZ_REQUIRE_NODE=1: CI)."""
  npm = shutil.which("npm")
  if npm is None:
    if os.environ.get("AGZ_REQUIRE_NODE") == "1":
      pytest.fail("AGZ_REQUIRE_NODE=1 but npm is not on the PATH")
    pytest.skip("npm is not on the PATH")
  folder = tmp_path_factory.mktemp("ort")
  done = subprocess.run([npm, "pack", standalone.ORT_WEB, "--silent"], cwd=folder,
                        capture_output=True, text=True, timeout=600, check=False)
  assert done.returncode == 0, done.stderr
  return str(next(folder.glob("*.tgz")))


@pytest.fixture(scope="module")
def dots_checkpoint(tmp_path_factory):
  config = dots_and_boxes_cpu.get_config()
  config.game.rows, config.game.cols = 2, 3
  return helpers.make_checkpoint(tmp_path_factory.mktemp("dots"), config=config, seed=4)


def _free_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def _play_by_clicks(site, free_selector, *, pass_after=None):
  """Serves `site` with python -m http.server, opens it in headless Chromium and plays a whole
  game by clicks on the middle free element of `free_selector` (after `pass_after` clicks, the
  Pass button); returns (moves, the page's score for us and the engine, its last status, our
  clicks)."""
  port = _free_port()
  server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind",
                             "127.0.0.1", "--directory", str(site)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  browser = _browser()
  try:
    from selenium.webdriver.support.ui import WebDriverWait  # pylint: disable=import-outside-toplevel
    wait = WebDriverWait(browser, 120)
    status = lambda: browser.execute_script("return window.agzGame && window.agzGame.status")
    for _ in range(50):  # the server starts
      try:
        browser.get(f"http://127.0.0.1:{port}/")
        break
      except Exception:  # pylint: disable=broad-exception-caught
        time.sleep(0.2)
    wait.until(lambda _: status() in ("your-move", "error"))
    assert status() == "your-move", browser.find_element("id", "status").text
    clicks = 0
    while status() != "over":
      assert status() == "your-move", browser.find_element("id", "status").text
      free = browser.find_elements("css selector", free_selector)
      if (pass_after is not None and clicks >= pass_after) or not free:
        browser.find_element("id", "pass").click()
      else:
        free[len(free) // 2].click()  # one in the middle of those left
      clicks += 1
      wait.until(lambda _: status() in ("your-move", "over", "error"))
    moves = browser.execute_script("return window.agzGame.moves")
    score = browser.find_element("id", "score")
    points = (float(score.get_attribute("data-you")), float(score.get_attribute("data-engine")))
    return moves, *points, browser.find_element("id", "status").text, clicks
  finally:
    browser.quit()
    server.terminate()
    server.wait(timeout=30)


def test_the_page_plays_a_whole_game_in_headless_chromium(tmp_path, onnxruntime_web):
  """The shipped Dots and Boxes network, exported as a user would, plays a whole game."""
  site = tmp_path / "site"
  assert standalone.main(["--pretrained", "dots-3x3", "--out", str(site), "--simulations",
                          "16", "--onnxruntime-web", onnxruntime_web]) == 0
  assert sorted(os.listdir(site)) == ["boxes_rules.js", "go_endgame.js", "go_katago.js",
                                      "go_rules.js", "index.html", "network.onnx", "ort",
                                      "puct.js", "settings.json", "standalone.js"]
  moves, you, engine, text, clicks = _play_by_clicks(site, "rect.line.free")
  # Every line drawn once, each legal by the Python rules, the engine's and ours alike.
  cfg = db.DotsConfig(3, 3)
  assert sorted(moves) == list(range(cfg.num_lines)) and 0 < clicks < len(moves)
  state = db.init(cfg)
  for line in moves:
    assert bool(np.asarray(db.legal_actions(cfg, state))[line]), (line, moves)
    state = db.step(cfg, state, line)
  assert bool(state.terminated)
  boxes = np.asarray(state.boxes)
  assert (you, engine) == (int((boxes == db.FIRST).sum()), int((boxes == db.SECOND).sum()))
  want = "you won" if you > engine else "the engine won" if engine > you else "a draw"
  assert want in text


@pytest.mark.parametrize("encoding", ["agz17", "katago_noladders"])
def test_the_page_plays_go_too(tmp_path, onnxruntime_web, encoding):
  """A 5x5 Go network on the 17 planes or KataGo's (its global features a bias of the first
  convolution): stones by clicks, then passes until the game ends; the moves legal by agz_jax.go
  and the page's areas (komi to white) the Tromp-Taylor count."""
  config = cpu_9x9.get_config()
  config.game.size, config.game.max_moves = 5, 30
  checkpoint = helpers.make_checkpoint(tmp_path / "go", size=5, config=config, seed=2,
                                       encoding=encoding)
  site = tmp_path / "site"
  assert standalone.main(["--checkpoint", checkpoint, "--out", str(site), "--simulations", "8",
                          "--onnxruntime-web", onnxruntime_web]) == 0
  moves, you, engine, text, clicks = _play_by_clicks(site, "circle.point.free", pass_after=6)
  cfg = go.GoConfig(size=5, komi=config.game.komi, max_moves=30)
  state = go.init(cfg)
  for action in moves:
    assert go.illegal_reason(cfg, state, action) is None, (action, moves)
    state = go.step(cfg, state, action)
  assert clicks >= 7 and cfg.pass_action in moves
  if "resigned" in text:  # the engine's endgame rules: a lost count may end it early
    assert not bool(state.terminated) and "the engine resigned, you won" in text
    return
  assert bool(state.terminated)
  owner = np.asarray(go.ownership(cfg, state))
  assert (you, engine) == (float((owner == go.BLACK).sum()),
                           float((owner == go.WHITE).sum()) + cfg.komi)
  want = "you won" if you > engine else "the engine won" if engine > you else "a draw"
  assert want in text


def test_bad_input_is_refused_in_one_line(tmp_path, dots_checkpoint, capsys):
  go_checkpoint = helpers.make_checkpoint(tmp_path / "go", config=cpu_9x9.get_config(),
                                          encoding="katago")
  cases = [
      (["--checkpoint", go_checkpoint], "reads katago planes; the page computes"),
      (["--checkpoint", dots_checkpoint, "--onnxruntime-web", str(tmp_path / "none.tgz")],
       "none.tgz: no such file"),
      (["--checkpoint", str(tmp_path / "missing")], "missing' does not exist"),
  ]
  (tmp_path / "junk.tgz").write_text("not a package")
  cases.append((["--checkpoint", dots_checkpoint, "--onnxruntime-web", str(tmp_path / "junk.tgz")],
                "junk.tgz is not an npm package"))
  for i, (args, message) in enumerate(cases):
    out = tmp_path / f"site{i}"
    assert standalone.main(args + ["--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("standalone: ") and message in err[0], err
    assert not out.exists()  # nothing half-written left behind
  full = tmp_path / "full"
  full.mkdir()
  (full / "keep.txt").write_text("mine")
  assert standalone.main(["--checkpoint", dots_checkpoint, "--out", str(full)]) == 2
  assert "exists and is not an empty folder" in capsys.readouterr().err
  assert os.listdir(full) == ["keep.txt"]
