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

from agz_jax import dots_and_boxes as db
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


def test_the_page_plays_a_whole_game_in_headless_chromium(tmp_path, dots_checkpoint,
                                                          onnxruntime_web):
  site = tmp_path / "site"
  assert standalone.main(["--checkpoint", dots_checkpoint, "--out", str(site), "--simulations",
                          "16", "--onnxruntime-web", onnxruntime_web]) == 0
  assert sorted(os.listdir(site)) == ["boxes_rules.js", "index.html", "network.onnx", "ort",
                                      "puct.js", "settings.json", "standalone.js"]
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
      free = browser.find_elements("css selector", "rect.line.free")
      free[len(free) // 2].click()  # a line in the middle of those left
      clicks += 1
      wait.until(lambda _: status() in ("your-move", "over", "error"))
    moves = browser.execute_script("return window.agzGame.moves")
    score = browser.find_element("id", "score")
    you, engine = int(score.get_attribute("data-you")), int(score.get_attribute("data-engine"))
    text = browser.find_element("id", "status").text
  finally:
    browser.quit()
    server.terminate()
    server.wait(timeout=30)
  # Every line drawn once, each legal by the Python rules, the engine's and ours alike.
  cfg = db.DotsConfig(2, 3)
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


def test_bad_input_is_refused_in_one_line(tmp_path, dots_checkpoint, capsys):
  go_checkpoint = helpers.make_checkpoint(tmp_path / "go", config=cpu_9x9.get_config())
  cases = [
      (["--checkpoint", go_checkpoint], "holds a go network; the page plays Dots and Boxes"),
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
