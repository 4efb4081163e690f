"""python -m agz_jax.web: the JSON API (Go and Dots and Boxes), its answers to bad requests, and a
real browser (headless Chromium) playing on the page."""

import json
import os
import shutil
import threading
import urllib.error
import urllib.request

import numpy as np
import pytest

from agz_jax import dots_and_boxes, go, players, web
from agz_jax.web.server import make_server

import helpers
from configs import dots_and_boxes_cpu


def _serve(session):
  server = make_server(session, "127.0.0.1", 0)
  threading.Thread(target=server.serve_forever, daemon=True).start()
  return server, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture(scope="module")
def dots(tmp_path_factory):
  config = dots_and_boxes_cpu.get_config()
  config.game.rows, config.game.cols = 2, 3
  workdir = helpers.make_checkpoint(tmp_path_factory.mktemp("dots"), config=config)
  session = web.make_session(workdir, seconds=0.1)
  session.player.simulations = 8
  server, url = _serve(session)
  yield session, url
  server.shutdown()


@pytest.fixture(scope="module")
def go_game(tmp_path_factory):
  workdir = helpers.make_checkpoint(tmp_path_factory.mktemp("go"), size=5)
  session = web.make_session(workdir, seconds=0.1, komi=0.5)
  server, url = _serve(session)
  yield session, url
  server.shutdown()


def call(url, path, body=None, method=None, raw=None, headers=None):
  """(status, JSON answer) of one request."""
  data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
  request = urllib.request.Request(url + path, data=data, method=method or (
      "GET" if data is None else "POST"), headers={"Content-Type": "application/json",
                                                   **(headers or {})})
  try:
    with urllib.request.urlopen(request, timeout=120) as response:
      text = response.read().decode()
      return response.status, (json.loads(text) if "json" in response.headers["Content-Type"]
                               else text)
  except urllib.error.HTTPError as e:
    return e.code, json.loads(e.read().decode())


def test_dots_and_boxes_over_the_api(dots):
  _, url = dots
  status, view = call(url, "/api/new", {"human": "first", "seconds": 0.1})
  assert status == 200 and view["game"] == "dots_and_boxes" and (view["rows"], view["cols"]) == (2, 3)
  assert not any(view["lines"]) and view["to_play"] == view["human"] == "first"
  status, view = call(url, "/api/move", {"move": "h(0,0)"})
  assert status == 200 and view["lines"][0]
  # The engine answered: its lines follow ours, until it is our turn (or the game ended).
  assert view["moves"][0] == {"player": "first", "line": 0, "name": "h(0,0)"}
  assert len(view["moves"]) >= 2 and all(m["player"] == "second" for m in view["moves"][1:])
  assert view["to_play"] == "first" and view["result"] is None
  engine = view["analysis"]
  assert 0 <= engine["win_rate"] <= 1 and abs(sum(engine["visits"]) - 1) < 1e-3
  assert len(engine["visits"]) == len(view["lines"]) == 17
  assert engine["visits"][0] == 0                      # a drawn line gets no visits
  # Undo goes back to before our line.
  status, view = call(url, "/api/undo", {})
  assert status == 200 and view["moves"] == [] and not any(view["lines"])
  # Moving second: the engine draws first.
  status, view = call(url, "/api/new", {"human": "second"})
  assert status == 200 and view["moves"][0]["player"] == "first" and view["to_play"] == "second"


def test_the_dots_engine_is_the_search_player_and_its_puct_search_plays_any_game(dots):
  """One player for every game: the page's Dots and Boxes engine is the SearchPlayer of its
  network, and the PUCT search under a clock (timed_search) grows trees of a Dots position."""
  session = dots[0]
  assert isinstance(session.player, players.SearchPlayer)
  game = session.player.game  # the network's game, with its training run's config
  assert game.module is dots_and_boxes and (game.cfg.rows, game.cfg.cols) == (2, 3)
  puct = players.SearchPlayer(session.player.network, simulations=4, algorithm="puct",
                              considered_actions=16, tree_nodes=32, trees=1)
  assert puct.timed_search
  cfg, state = session.cfg, dots_and_boxes.init(session.cfg)
  state = dots_and_boxes.step(cfg, state, 0)
  out = puct.analyse(cfg, state)
  assert sum(c["visits"] for c in out["candidates"]) == 4
  legal = np.asarray(dots_and_boxes.legal_actions(cfg, state))
  assert all(legal[c["action"]] for c in out["candidates"]) and legal[out["action"]]
  again = puct.analyse(cfg, state, seconds=0.05)  # the same position: its tree goes on
  assert sum(c["visits"] for c in again["candidates"]) > 4


def test_bad_requests_get_one_line_and_change_nothing(dots):
  _, url = dots
  call(url, "/api/new", {"human": "first", "seconds": 0.1})
  _, before = call(url, "/api/move", {"move": 3})
  drawn = next(m["line"] for m in before["moves"] if m["player"] == "second")
  cases = [
      ("/api/move", {"move": 3}, None, 400, "h(1,0) is already drawn"),
      ("/api/move", {"move": drawn}, None, 400, "is already drawn"),
      ("/api/move", {"move": "x9"}, None, 400, "is not a line"),
      ("/api/move", {"move": 99}, None, 400, "is not on a 2x3 board"),
      ("/api/move", {"move": True}, None, 400, 'give the move as {"move"'),
      ("/api/move", {"line": 3}, None, 400, 'give the move as {"move"'),
      ("/api/move", None, b"{not json", 400, "the body must be a JSON object"),
      ("/api/move", None, b"[1, 2]", 400, "the body must be a JSON object"),
      ("/api/move", None, b"x" * 5000, 413, "at most 4096"),
      ("/api/new", {"human": "purple"}, None, 400, "side must be first or second"),
      ("/api/new", {"seconds": "soon"}, None, 400, "seconds must be a number"),
      ("/api/new", {"seconds": 1e6}, None, 400, "seconds must be from 0.05 to 60"),
      ("/api/new", {"colour": "first"}, None, 400, "takes human and seconds, not colour"),
      ("/api/nothing", {}, None, 404, "no such page '/api/nothing'"),
      ("/api/sgf", None, None, 404, "dots_and_boxes has no SGF record"),
  ]
  for path, body, raw, status, message in cases:
    got, answer = call(url, path, body, raw=raw)
    assert got == status and message in answer["error"], (path, body, answer)
    assert "\n" not in answer["error"]
  status, answer = call(url, "/api/move", method="GET")
  assert status == 405 and "use POST" in answer["error"]
  for length, message in (("-5", "Content-Length is -5"), ("many", "not a number")):
    status, answer = call(url, "/api/move", method="POST", headers={"Content-Length": length})
    assert status == 400 and message in answer["error"], answer
  assert call(url, "/api/game")[1] == before              # nothing changed
  # Once the game is over, a move is refused until a new game.
  session = dots[0]
  while session.view()["result"] is None:
    free = [i for i, drawn in enumerate(session.view()["lines"]) if not drawn]
    session.play(free[0])
  status, answer = call(url, "/api/move", {"move": 0})
  assert status == 400 and "the game is over" in answer["error"]


def test_go_over_the_api(go_game):
  _, url = go_game
  status, view = call(url, "/api/new", {"human": "black", "seconds": 0.1})
  assert status == 200 and view["game"] == "go" and view["size"] == 5 and view["komi"] == 0.5
  assert view["star_points"] == go.star_points(5) == [12]   # a 5x5 board's one dot: C3
  status, view = call(url, "/api/move", {"move": "c3"})
  assert status == 200 and view["moves"][0] == {"colour": "black", "move": "C3"}
  assert view["board"][12] == 1 and len(view["moves"]) == 2 and view["to_play"] == "black"
  assert view["analysis"] is None or len(view["analysis"]["visits"]) == 26
  for move, message in (("C3", "illegal: occupied"), ("Z9", "(or 'resign')")):
    status, answer = call(url, "/api/move", {"move": move})
    assert status == 400 and message in answer["error"], answer
  status, sgf = call(url, "/api/sgf")
  assert status == 200 and sgf.startswith("(;") and ";B[cc]" in sgf and "SZ[5]" in sgf
  status, view = call(url, "/api/undo", {})
  assert status == 200 and view["moves"] == [] and not any(view["board"])
  status, view = call(url, "/api/move", {"move": "resign"})
  assert view["result"] == "W+R"
  status, answer = call(url, "/api/undo", {})   # our resignation is not a move on the board
  assert status == 400 and "nothing to undo" in answer["error"]
  status, view = call(url, "/api/new", {"human": "white"})
  assert status == 200 and view["moves"][0]["colour"] == "black" and view["to_play"] == "white"


def test_the_command_line_names_what_is_wrong(tmp_path):
  # In this process JAX already runs: its devices and compile cache stay as they are.
  here = ["--cpu-devices", "1", "--compile-cache", "none"]
  with pytest.raises(SystemExit, match="web: no pretrained network 'nothing'"):
    web.main(["--pretrained", "nothing", *here])
  with pytest.raises(SystemExit, match="web: .*checkpoint"):
    web.main(["--checkpoint", str(tmp_path / "none"), *here])
  with pytest.raises(SystemExit, match="web: the CPU devices .* must be at least 1, got 0"):
    web.main(["--pretrained", "nothing", "--cpu-devices", "0"])


# -- a real browser --------------------------------------------------------------------------------

def _browser():
  """Headless Chromium through selenium, or None where either is missing (CI installs both and
  sets AGZ_REQUIRE_BROWSER=1, so there a missing browser fails instead of skipping)."""
  chromium = shutil.which("chromium") or shutil.which("chromium-browser")
  driver = shutil.which("chromedriver")
  try:
    from selenium import webdriver  # pylint: disable=import-outside-toplevel
    from selenium.webdriver.chrome.service import Service  # pylint: disable=import-outside-toplevel
  except ImportError:
    webdriver = None
  if webdriver is None or chromium is None or driver is None:
    if os.environ.get("AGZ_REQUIRE_BROWSER") == "1":
      pytest.fail("AGZ_REQUIRE_BROWSER=1 but chromium, chromedriver or selenium is missing")
    pytest.skip("needs chromium, chromium-driver and selenium (installed by .ci/run)")
  options = webdriver.ChromeOptions()
  options.binary_location = chromium
  for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1000,900"):
    options.add_argument(arg)
  # The browser keeps its own allocator (the suite preloads jemalloc for Python processes).
  env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
  return webdriver.Chrome(service=Service(driver, env=env), options=options)


@pytest.mark.slow
@pytest.mark.browser
def test_a_browser_plays_dots_and_boxes_and_go_on_the_page(dots, go_game, tmp_path):
  from selenium.webdriver.common.by import By  # pylint: disable=import-outside-toplevel
  from selenium.webdriver.support.ui import WebDriverWait  # pylint: disable=import-outside-toplevel
  browser = _browser()
  try:
    wait = WebDriverWait(browser, 120)
    _, url = dots
    call(url, "/api/new", {"human": "first", "seconds": 0.1})
    browser.get(url + "/")
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#dots .ln-hit"))
    assert "Dots and Boxes 2\u00d73" in browser.find_element(By.ID, "title").text
    assert browser.find_element(By.ID, "status").text.startswith("Your move (first)")
    browser.find_element(By.CSS_SELECTOR, '#dots .ln-hit[data-line="4"]').click()
    # Our line and the engine's answer are drawn, and the page says it is our turn again.
    wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, "#dots line.drawn")) >= 2
               and b.find_element(By.ID, "status").text.startswith("Your move"))
    view = call(url, "/api/game")[1]
    drawn = {int(e.get_attribute("data-line"))
             for e in browser.find_elements(By.CSS_SELECTOR, "#dots line.drawn")}
    assert drawn == {i for i, d in enumerate(view["lines"]) if d} and 4 in drawn
    assert "win rate" in browser.find_element(By.ID, "winrate").text
    # A refusal from the server is shown in one line (here the engine's line, drawn already,
    # sent as the page would send a click).
    browser.execute_script(f"move({next(iter(drawn - {4}))})")
    wait.until(lambda b: "is already drawn" in b.find_element(By.ID, "error").text)
    browser.find_element(By.ID, "undo").click()
    wait.until(lambda b: not b.find_elements(By.CSS_SELECTOR, "#dots line.drawn"))
    browser.save_screenshot(str(tmp_path / "dots.png"))

    _, url = go_game
    call(url, "/api/new", {"human": "black", "seconds": 0.1})
    browser.get(url + "/")
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#goban .pt"))
    browser.find_element(By.CSS_SELECTOR, '#goban .pt[data-vertex="B2"]').click()
    wait.until(lambda b: b.find_element(By.ID, "status").text.startswith("Your move"))
    view = call(url, "/api/game")[1]
    assert view["moves"][0] == {"colour": "black", "move": "B2"} and len(view["moves"]) == 2
    stones = browser.find_elements(By.CSS_SELECTOR, "#goban .stone")
    assert len(stones) == sum(1 for x in view["board"] if x) >= 1    # the engine may pass
    # A click on an occupied point is refused by the page, which says why; a pass goes to the
    # server.
    browser.find_element(By.CSS_SELECTOR, '#goban .pt[data-vertex="B2"]').click()
    wait.until(lambda b: "B2 is taken" in b.find_element(By.ID, "error").text)
    assert len(call(url, "/api/game")[1]["moves"]) == 2
    browser.find_element(By.ID, "pass").click()
    wait.until(lambda b: len(call(url, "/api/game")[1]["moves"]) >= 3)
    browser.save_screenshot(str(tmp_path / "go.png"))
  finally:
    browser.quit()
  for name in ("dots.png", "go.png"):
    data = (tmp_path / name).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
