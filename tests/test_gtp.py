"""`python -m agz_jax.gtp` driven the way Sabaki, GoGui or a match runner drive it.

Two engines run as subprocesses for the whole module: `--random` and `--checkpoint` on a small
random 9x9 network (saved with the real Checkpointer, `--simulations 8`). A scripted client
plays full games through the protocol, checking every move on its own replica of the board
(agz_jax.go) and the final score against the pure-Python reference scorer (tests/reference.py),
then sends a few hundred hostile and random lines, each of which must get exactly one
well-formed response. Known bugs have their own tests at the end, run in-process on
agz_jax.gtp.Engine / serve so that a crash does not take the shared engines down.
"""

import os
import queue
import random
import re
import subprocess
import sys
import threading
import time

import jax
import numpy as np
import pytest

from agz_jax import go, gtp, sgf
from agz_jax.players import RandomPlayer

import helpers

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import ReferenceGo  # noqa: E402  pylint: disable=wrong-import-position

ENV = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=REPO)
TIMEOUT = 120  # seconds for one response; the first genmove of the network compiles the search
COLUMNS = "ABCDEFGHJKLMNOPQRST"  # GTP skips I
MAX_PLIES = 300  # below the engine's own move limit (4 * 81), which ends its game
# Our replica never ends a game by the move limit: only two passes end it.
CFG = go.GoConfig(size=9, komi=7.5, max_moves=1000)
_legal_actions = jax.jit(go.legal_actions, static_argnums=0)


# ----------------------------------------------------------------------------- the network


make_checkpoint = helpers.make_checkpoint


# ----------------------------------------------------------------------------- the client


class Response:
  """One GTP response: ok ('=' or '?'), id (digits or ''), text (lines after the marker)."""

  FIRST_LINE = re.compile(r"([=?])(\d*)(?: (.*))?")

  def __init__(self, lines: list[str]):
    assert lines, "empty response"
    match = self.FIRST_LINE.fullmatch(lines[0])
    assert match, f"malformed first line of a response: {lines[0]!r}"
    self.ok = match.group(1) == "="
    self.id = match.group(2)
    self.lines = [match.group(3) or ""] + lines[1:]
    self.text = "\n".join(self.lines).strip()

  def __repr__(self):
    return f"{'=' if self.ok else '?'}{self.id} {self.text!r}"


class Client:
  """A GTP controller on a subprocess; a thread reads its stdout into a queue."""

  def __init__(self, args, workdir):
    self.args = args
    self.stderr_path = os.path.join(workdir, "stderr.txt")
    with open(self.stderr_path, "wb") as stderr:
      self.proc = subprocess.Popen([sys.executable, "-m", "agz_jax.gtp", *args], cwd=workdir,
                                   env=ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=stderr)
    self._lines = queue.Queue()
    threading.Thread(target=self._read, daemon=True).start()

  def _read(self):
    for raw in iter(self.proc.stdout.readline, b""):
      self._lines.put(raw.decode("utf-8", errors="replace").rstrip("\n"))
    self._lines.put(None)

  def stderr(self) -> str:
    with open(self.stderr_path, encoding="utf-8", errors="replace") as f:
      return f.read()[-3000:]

  def send(self, line):
    data = line.encode() if isinstance(line, str) else line
    assert b"\n" not in data
    self.proc.stdin.write(data + b"\n")
    self.proc.stdin.flush()

  def read_line(self, timeout=TIMEOUT) -> str:
    try:
      line = self._lines.get(timeout=timeout)
    except queue.Empty:
      raise AssertionError(f"no answer from {self.args} within {timeout}s") from None
    if line is None:
      raise AssertionError(f"engine {self.args} exited ({self.proc.poll()}):\n{self.stderr()}")
    return line

  def read_block(self, timeout=TIMEOUT) -> list[str]:
    """Lines up to the blank line that ends a response."""
    lines = []
    while True:
      line = self.read_line(timeout)
      if line == "":
        return lines
      lines.append(line)

  def ask(self, command) -> Response:
    self.send(command)
    return Response(self.read_block())


def vertex_to_action(size, vertex):
  """Our own reading of a GTP vertex (independent of go.gtp_to_action)."""
  text = vertex.strip().upper()
  if text == "PASS":
    return size * size
  assert re.fullmatch(r"[A-HJ-T]\d{1,2}", text), f"not a vertex: {vertex!r}"
  col, number = COLUMNS.index(text[0]), int(text[1:])
  assert col < size and 1 <= number <= size, f"{vertex} is off the {size}x{size} board"
  return (size - number) * size + col


def action_to_vertex(size, action):
  if action == size * size:
    return "pass"
  row, col = divmod(action, size)
  return f"{COLUMNS[col]}{size - row}"


def random_move(state, rng) -> int:
  """A random legal move that does not fill one of the mover's own eyes; pass if none."""
  legal = np.asarray(_legal_actions(CFG, state))[:-1]
  board = np.asarray(state.board).reshape(9, 9)
  own = np.pad(board == int(state.to_play), 1, constant_values=True)
  eye = own[:-2, 1:-1] & own[2:, 1:-1] & own[1:-1, :-2] & own[1:-1, 2:]
  moves = np.flatnonzero(legal & ~eye.reshape(-1))
  return int(rng.choice(moves)) if len(moves) else CFG.pass_action


def tromp_taylor(board, komi) -> float:
  board = [int(x) for x in board]
  ref = ReferenceGo(9, komi, 1000, black=[p for p, v in enumerate(board) if v == 1],
                    white=[p for p, v in enumerate(board) if v == -1])
  return ref.score()


def parse_score(text) -> float:
  match = re.fullmatch(r"([BW])\+(\d+(?:\.\d+)?)|0", text)
  assert match, f"final_score {text!r} is not B+x, W+x or 0"
  if text == "0":
    return 0.0
  return float(match.group(2)) * (1 if match.group(1) == "B" else -1)


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def engines(tmp_path_factory):
  """Both engines, started together so that their start-up overlaps."""
  network = make_checkpoint(tmp_path_factory.mktemp("network9"))
  clients = {
      "random": Client(["--random", "--seed", "0"], str(tmp_path_factory.mktemp("random"))),
      "network": Client(["--checkpoint", network, "--simulations", "8"],
                        str(tmp_path_factory.mktemp("network"))),
  }
  yield clients
  for client in clients.values():
    if client.proc.poll() is None:
      client.proc.kill()
      client.proc.wait()


@pytest.fixture(scope="module")
def sgf_files(tmp_path_factory):
  folder = tmp_path_factory.mktemp("sgf")
  files = {
      "good": b"(;GM[1]FF[4]SZ[9]KM[7.5];B[ee];W[cc];B[gg])",
      "malformed": b"(;GM[1]FF[4]SZ[9];B[ee];W[",
      "not_sgf": b"\x00\xff garbage \xfe",
      "illegal": b"(;GM[1]FF[4]SZ[9]KM[7.5];B[ee];W[ee])",
      "too_big": b"(;GM[1]FF[4]SZ[25]KM[7.5];B[ee])",
  }
  return helpers.write_files(folder, files)


# ----------------------------------------------------------------------------- (a) full games


def play_game(client, opponent_rng=None):
  """Plays one game through the protocol; with `opponent_rng`, white's moves are ours (play w).

  Returns:
    (replica state, number of plies, how it ended).
  """
  for command in ("boardsize 9", "komi 7.5", "clear_board"):
    response = client.ask(command)
    assert response.ok and response.text == "", (command, response)
  state, passes, colour = go.init(CFG), 0, go.BLACK
  for ply in range(MAX_PLIES):
    name = "b" if colour == go.BLACK else "w"
    if opponent_rng is not None and colour == go.WHITE:
      action = random_move(state, opponent_rng)
      response = client.ask(f"play w {action_to_vertex(9, action)}")
      assert response.ok and response.text == "", (ply, response)
    else:
      response = client.ask(f"genmove {name}")
      assert response.ok, (ply, response)
      if response.text.lower() == "resign":
        return state, ply, "resign"
      action = vertex_to_action(9, response.text)
      reason = go.illegal_reason(CFG, state, action)
      assert reason is None, f"ply {ply}: genmove {name} answered {response.text}: {reason}"
    state = go.play(CFG, [action], state)
    passes = passes + 1 if action == CFG.pass_action else 0
    if passes == 2:
      return state, ply + 1, "two passes"
    colour = -colour
  return state, MAX_PLIES, "move limit of the test"


def check_score_and_record(client, state):
  response = client.ask("final_score")
  assert response.ok
  assert parse_score(response.text) == tromp_taylor(np.asarray(state.board), 7.5)
  response = client.ask("printsgf")
  assert response.ok
  record = sgf.read(response.text)
  assert record.size == 9 and record.komi == 7.5
  replayed = sgf.replay(record)[-1]
  np.testing.assert_array_equal(np.asarray(replayed.board), np.asarray(state.board))


@pytest.mark.subprocess
def test_random_engine_plays_a_full_game(engines):
  client = engines["random"]
  state, plies, end = play_game(client)
  assert end == "two passes", (plies, end)
  assert plies > 40
  check_score_and_record(client, state)


@pytest.mark.subprocess
def test_network_engine_plays_a_full_game_against_our_random_player(engines):
  client = engines["network"]
  state, plies, end = play_game(client, opponent_rng=np.random.default_rng(0))
  assert plies > 10, (plies, end)
  check_score_and_record(client, state)


# ----------------------------------------------------------------------------- (b) hostile input


def expected_responses(raw: bytes) -> int:
  """0 if GTP preprocessing leaves nothing of the line (control characters removed, text after
  '#' dropped, empty or white-space only), else 1."""
  text = raw.decode("utf-8", errors="replace").split("#", 1)[0]
  text = "".join(ch for ch in text if ch == "\t" or (ord(ch) >= 32 and ord(ch) != 127))
  return 1 if text.split() else 0


def leading_id(raw: bytes) -> str:
  text = raw.decode("utf-8", errors="replace").split("#", 1)[0]
  text = "".join(ch for ch in text if ch == "\t" or ord(ch) >= 32)
  words = text.split()
  return words[0] if words and re.fullmatch(r"[0-9]+", words[0]) else ""


def check_one_response_each(client, lines):
  """Sends each line followed by a numbered `name`; between two names exactly the expected
  number of well-formed responses must come back."""
  for number, raw in enumerate(lines):
    raw = raw.encode() if isinstance(raw, str) else raw
    sentinel = str(900000 + number)
    client.send(raw)
    client.send(f"{sentinel} name")
    responses = []
    while True:
      block = client.read_block()
      response = Response(block)
      if response.id == sentinel:
        assert response.ok and response.text == "agz_jax", (raw, response)
        break
      responses.append(response)
    assert len(responses) == expected_responses(raw), (raw, responses)
    for response in responses:
      assert response.id == leading_id(raw), (raw, response)
      assert response.ok or response.text, f"{raw!r}: an error reply without a reason"
      # Only an lz-analyze answer has info lines, and then only info lines after the '='.
      if any(line.startswith("info ") for line in response.lines):
        assert response.ok and response.lines[0] == "", (raw, response)
        assert all(line.startswith("info move ") for line in response.lines[1:]), (raw, response)


BAD_VERTEX = "? syntax error: bad vertex"
BAD_COLOUR = "? syntax error: colour must be b, w, black or white"
HOSTILE = [
    ("boardsize 9", "="), ("clear_board", "="), ("undo", "? cannot undo"),
    ("12 name", "=12 agz_jax"), ("0 protocol_version", "=0 2"),
    ("123456789012345678901234567890 name", "=123456789012345678901234567890 agz_jax"),
    ("7", "?7 syntax error: no command"), ("frobnicate", "? unknown command"),
    ("PLAY b A1", "? unknown command"),
    ("play b Z99", BAD_VERTEX), ("play b I5", BAD_VERTEX), ("play b A0", BAD_VERTEX),
    ("play b A10", BAD_VERTEX), ("play b J-1", BAD_VERTEX),
    ("play b", "? syntax error: usage: play COLOUR VERTEX"),
    ("play", "? syntax error: usage: play COLOUR VERTEX"), ("play x A1", BAD_COLOUR),
    ("play b 99999999999999999999", BAD_VERTEX),
    ("genmove", "? syntax error: usage: genmove COLOUR"), ("genmove purple", BAD_COLOUR),
    ("komi nan", "? syntax error: komi must be a number from -1000 to 1000, got 'nan'"),
    ("komi inf", "? syntax error: komi must be a number from -1000 to 1000, got 'inf'"),
    ("komi -inf", "? syntax error: komi must be a number from -1000 to 1000, got '-inf'"),
    ("komi 1e400", "? syntax error: komi must be a number from -1000 to 1000, got '1e400'"),
    ("komi abc", "? syntax error: komi must be a number from -1000 to 1000, got 'abc'"),
    ("komi", "? syntax error: usage: komi KOMI"),
    ("boardsize -3", "? unacceptable size"), ("boardsize 0", "? unacceptable size"),
    ("boardsize 1", "? unacceptable size"), ("boardsize 20", "? unacceptable size"),
    ("boardsize 99999999999999999999999", "? unacceptable size"),
    ("boardsize abc", "? syntax error: board size must be an integer"),
    ("boardsize", "? syntax error: usage: boardsize SIZE"), ("known_command play", "= true"),
    ("known_command frob", "= false"), ("known_command quit", "= true"),
    ("protocol_version", "= 2"),
    ("time_settings nan nan nan",
     "? syntax error: main time must be a number from 0 to 1e+09, got 'nan'"),
    ("time_left b 10", "? syntax error: usage: time_left COLOUR TIME STONES"),
    ("loadsgf", "? syntax error: usage: loadsgf FILE [MOVE_NUMBER]"),
    ("undo", "? cannot undo"), ("name", "= agz_jax"),
]


def check_hostile_answers(client, sgf_files):
  for command, expected in HOSTILE:
    response = client.ask(command)
    assert repr_response(response).startswith(expected), (command, response)
  response = client.ask(f"loadsgf {sgf_files['good']}.missing")
  assert not response.ok and response.text.startswith("cannot load file"), response
  for name in ("malformed", "not_sgf"):
    response = client.ask(f"loadsgf {sgf_files[name]}")
    assert not response.ok and response.text.startswith("cannot load file: bad SGF"), response
  response = client.ask(f"loadsgf {sgf_files['illegal']}")
  assert not response.ok and "occupied" in response.text, response
  response = client.ask(f"loadsgf {sgf_files['good']}")
  assert response.ok, response
  assert "white to play, move 3" in client.ask("showboard").text


def repr_response(response) -> str:
  return f"{'=' if response.ok else '?'}{response.id}" + (f" {response.text}" if response.text
                                                          else "")


def check_illegal_move_reasons(client):
  """Occupied, suicide and superko (a ko recapture), on positions built with play."""
  assert client.ask("boardsize 9").ok and client.ask("komi 7.5").ok
  assert client.ask("clear_board").ok
  # Top left: black B9 A8 B7, white C9 B8 D8 C7. Black C8 takes B8 (a ko).
  for colour, vertex in [("b", "B9"), ("w", "C9"), ("b", "A8"), ("w", "B8"), ("b", "B7"),
                         ("w", "C7"), ("b", "G5"), ("w", "D8"), ("b", "C8")]:
    response = client.ask(f"play {colour} {vertex}")
    assert response.ok, (colour, vertex, response)
  expectations = [("play w B8", "superko"),   # retaking the ko at once repeats a position
                  ("play w A9", "suicide"),   # no liberty, captures nothing
                  ("play w C8", "occupied"),
                  ("play b G5", "occupied")]  # black is not to move: a pass would come first
  for command, reason in expectations:
    response = client.ask(command)
    assert not response.ok and response.text == f"illegal move: {reason}", (command, response)
  # Nothing of the refused moves stayed behind: white to move, 9 moves, B8 still empty.
  board = client.ask("showboard").text
  assert "white to play, move 9" in board
  assert client.ask("play w E5").ok
  assert client.ask("undo").ok and client.ask("undo").ok  # E5, then black's C8
  assert client.ask("play b C8").ok  # the capture can be replayed


def fuzz_lines(seed, count, sgf_files):
  """Random lines: known commands with odd arguments, ids, unknown words, garbage bytes,
  blank and comment lines. Valid komi and board sizes other than 7.5 and 9 are left out so
  that the engine does not compile for new rules; 'quit' is left out."""
  rng = random.Random(seed)
  commands = [c for c in gtp.COMMANDS if c != "quit"] + [
      "foo", "PLAY", "Genmove", "kgs-genmove_cleanup", "lz-genmove_analyze", "-", "\u00e9"]
  args_for = {
      "komi": ["7.5", "nan", "inf", "-inf", "1e400", "abc", "7,5", "0x10"],
      "boardsize": ["9", "-3", "0", "1", "20", "1e3", "abc", "99999999999999999999", "٩٩"],
      "loadsgf": [sgf_files["good"], sgf_files["malformed"], sgf_files["not_sgf"],
                  sgf_files["illegal"], sgf_files["too_big"], "/", "missing.sgf", ""],
      "lz-analyze": ["10", "0", "5", "interval", "x", "-1"],
  }
  common = ["b", "w", "B", "white", "black", "x", "pass", "PASS", "A1", "J9", "e5", "Z99", "I5",
            "A0", "A10", "T19", "-1", "0", "1", "7", "20", "99999999999999999999999", "nan",
            "inf", "-5", "0.5", "ß", "日本", "\t", "%s", "{}", "\x00", "\x1b[31m", "\u200b"]
  lines = []
  for _ in range(count):
    r = rng.random()
    if r < 0.7:
      command = rng.choice(commands)
      pool = args_for.get(command, common)
      if command in ("play", "genmove", "reg_genmove") and rng.random() < 0.7:
        words = [command, rng.choice(["b", "w"]),
                 rng.choice(["pass"] + [f"{c}{n}" for c in COLUMNS[:9] for n in range(1, 10)])]
      else:
        words = [command] + [rng.choice(pool) for _ in range(rng.randrange(4))]
      if rng.random() < 0.2:
        words.insert(0, str(rng.randrange(10 ** rng.randrange(1, 25))))
      lines.append(" ".join(words))
    elif r < 0.8:
      alphabet = "abcxyz019 -+#=?_\t\u00e9\u4e2d\U0001f600"
      lines.append("".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 30))))
    elif r < 0.9:
      data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
      # Newlines would split the line; DEL is covered by its own test below.
      lines.append(data.replace(b"\n", b" ").replace(b"\x7f", b" "))
    else:
      lines.append(rng.choice(["", "   ", "\t", "# a comment", "  # play b A1", "\r", "\x00",
                               "\x01\x02", "#"]))
  return lines


@pytest.mark.subprocess
def test_hostile_lines_get_one_well_formed_response_each(engines, sgf_files):
  client = engines["random"]
  check_hostile_answers(client, sgf_files)
  check_illegal_move_reasons(client)
  # The random player takes any size; a 9x9 network takes only 9x9.
  assert repr_response(client.ask("boardsize 7")) == "="
  assert repr_response(client.ask("boardsize 9")) == "="
  lines = [raw for raw, _ in HOSTILE] + fuzz_lines(0, 300, sgf_files)
  check_one_response_each(client, lines)
  assert repr_response(client.ask("name")) == "= agz_jax"


@pytest.mark.subprocess
def test_network_engine_refuses_other_sizes_and_illegal_moves(engines, sgf_files):
  client = engines["network"]
  assert repr_response(client.ask("boardsize 7")) == "? unacceptable size"
  assert repr_response(client.ask("boardsize 19")) == "? unacceptable size"
  check_hostile_answers(client, sgf_files)
  check_illegal_move_reasons(client)
  check_one_response_each(client, fuzz_lines(1, 60, sgf_files))
  assert repr_response(client.ask("name")) == "= agz_jax"


# ----------------------------------------------------------------------------- lz-analyze

INFO = re.compile(
    r"info move (\S+) visits (\d+) winrate (\d+) prior (\d+) order (\d+) pv((?: \S+)+)")


def analyse(client, command):
  """Sends an lz-analyze command, reads '=' and the first info line, then sends `name`: the
  analysis must end with a blank line and `name` must be answered after it."""
  client.send(command)
  assert client.read_line() == "="
  first = client.read_line()
  client.send("name")
  rest = client.read_block()
  assert all(line.startswith("info ") for line in rest), rest
  assert Response(client.read_block()).text == "agz_jax"
  return first


def parse_info(line):
  items = ["info " + item for item in line.split("info ")[1:]]
  parsed = []
  for item in items:
    match = INFO.fullmatch(item.strip())
    assert match, f"bad lz-analyze item: {item!r}"
    move, visits, winrate, prior, order, pv = match.groups()
    parsed.append(dict(move=move, visits=int(visits), winrate=int(winrate), prior=int(prior),
                       order=int(order), pv=pv.split()))
  return parsed


def check_info(line, state):
  items = parse_info(line)
  assert items
  assert [i["order"] for i in items] == list(range(len(items)))
  legal = np.asarray(_legal_actions(CFG, state))
  for item in items:
    assert legal[vertex_to_action(9, item["move"])], item
    assert item["visits"] >= 1 and 0 <= item["winrate"] <= 10000 and 0 <= item["prior"] <= 10000
    assert item["pv"][0] == item["move"]
    for vertex in item["pv"]:
      vertex_to_action(9, vertex)
  visits = [i["visits"] for i in items]
  assert visits == sorted(visits, reverse=True)
  return items


@pytest.mark.subprocess
def test_lz_analyze_stream(engines):
  for name, client in engines.items():
    for command in ("boardsize 9", "komi 7.5", "clear_board", "play b E5", "play w C3"):
      assert client.ask(command).ok
    state = go.play(CFG, [vertex_to_action(9, "E5"), vertex_to_action(9, "C3")])
    items = check_info(analyse(client, "lz-analyze 1000"), state)
    assert len({i["move"] for i in items}) == len(items)
    if name == "network":
      assert sum(i["visits"] for i in items) == 8  # --simulations 8, all at the root's children
    # With an id and a colour; then the engine carries on normally.
    client.send("7 lz-analyze b 1000")
    assert client.read_line() == "=7"
    check_info(client.read_line(), state)
    client.send("8 name")
    assert all(line.startswith("info ") for line in client.read_block())
    assert repr_response(Response(client.read_block())) == "=8 agz_jax"
    assert client.ask("genmove b").ok


@pytest.mark.subprocess
def test_name_and_quit(engines):
  for client in engines.values():
    assert repr_response(client.ask("name")) == "= agz_jax"
    assert repr_response(client.ask("quit")) == "="
    assert client.proc.wait(timeout=30) == 0


# ----------------------------------------------------------------------------- known bugs
# In-process on Engine / serve: a crash here must not take the shared engines down.


class _Output:
  """A stdout for serve(): collects what it writes."""

  def __init__(self):
    self.text = ""
    self._lock = threading.Lock()

  def write(self, data):
    with self._lock:
      self.text += data

  def flush(self):
    pass


def serve_in_thread(engine):
  read_fd, write_fd = os.pipe()
  out, errors = _Output(), []

  def target():
    try:
      with os.fdopen(read_fd, "rb") as stream:
        gtp.serve(engine, stream, out)
    except Exception as e:  # pylint: disable=broad-exception-caught
      errors.append(e)

  thread = threading.Thread(target=target, daemon=True)
  thread.start()
  return write_fd, out, thread, errors


def wait_for(predicate, timeout=60):
  deadline = time.time() + timeout
  while time.time() < deadline:
    if predicate():
      return True
    time.sleep(0.02)
  return False


@pytest.mark.parametrize("setup, command", [
    # An interval that is a digit to str.isdigit but not to int(): ValueError in serve.
    ([], "lz-analyze \u00b2"),
    # An interval too large for select(): OverflowError once the engine waits for input.
    ([], "lz-analyze 99999999999999999999999"),
    # Analysis for the colour not to move after two passes: go.play refuses the pass.
    (["play b pass", "play w pass"], "lz-analyze w 10"),
])
def test_lz_analyze_odd_requests_do_not_kill_the_engine(setup, command):
  engine = gtp.Engine(RandomPlayer(0))
  write_fd, out, thread, errors = serve_in_thread(engine)
  try:
    os.write(write_fd, ("\n".join(["boardsize 9"] + setup + [command]) + "\n").encode())
    # Every command so far has begun its answer (or the engine died); then let the engine wait
    # for input, as it does between commands.
    wait_for(lambda: errors or len(re.findall(r"^[=?]", out.text, re.M)) >= 2 + len(setup))
    time.sleep(0.3)
    os.write(write_fd, b"name\nquit\n")
  except BrokenPipeError:
    pass  # serve is gone
  finally:
    os.close(write_fd)
  thread.join(timeout=60)
  assert not errors, f"{command!r} killed the engine: {errors[0]!r}"
  assert out.text.endswith("= agz_jax\n\n=\n\n"), out.text


def test_moves_after_two_passes_are_accepted():
  # A controller may play on after two passes (e.g. to settle dead stones); GTP allows it.
  engine = gtp.Engine(RandomPlayer(0))
  for command in ("boardsize 9", "play b pass", "play w pass"):
    assert engine.handle(command)[1], command
  for command in ("play b pass", "genmove w", "play b E5", "genmove w"):
    ident, ok, text = engine.handle(command)
    assert ok, f"{command!r} after the end of the game: ? {text}"


class _FirstLegalPlayer:
  """A stand-in for a player (players.Player): plays the first legal point, whatever its
  simulations or seconds."""

  name = "first-legal"
  sizes = (9,)
  planes = {"history": 8}
  simulations = 1
  timed_search = False

  def prepare(self, cfg):
    del cfg

  def analyse(self, cfg, state, simulations=None, *, seconds=None):
    action = int(np.argmax(np.asarray(_legal_actions(cfg, state))))
    return {"action": action, "value": 0.0,
            "candidates": [{"action": action, "visits": 1, "value": 0.0, "prior": 1.0,
                            "pv": [action]}]}


class _PassingPlayer(_FirstLegalPlayer):
  """A stand-in for a player whose search prefers pass, then the given vertices."""

  name = "passing"

  def __init__(self, *vertices):
    self.vertices = vertices

  def analyse(self, cfg, state, simulations=None, *, seconds=None):
    actions = [cfg.pass_action] + [go.gtp_to_action(cfg, v) for v in self.vertices]
    return {"action": cfg.pass_action, "value": 0.0,
            "candidates": [{"action": a, "visits": 10 - i, "value": 0.0, "prior": 0.1,
                            "pv": [a]} for i, a in enumerate(actions)]}


def test_no_pass_while_the_score_is_against_us():
  # Empty board, komi 7.5: black is behind, so its pass could lose at once.
  engine = gtp.Engine(_PassingPlayer("E5", "D4"), resign_threshold=0.0)
  assert engine.handle("boardsize 9")[1] and engine.handle("komi 7.5")[1]
  assert engine.handle("genmove b")[2] == "E5"       # the best candidate other than pass
  # Black's lone stone reaches every empty point (B+73.5): now white must not pass.
  assert engine.handle("genmove w")[2] == "D4"
  # With the score in its favour black still takes a neutral point before passing: on the
  # empty board, a pass would let white's first stone own it all.
  engine = gtp.Engine(_PassingPlayer("E5"), resign_threshold=0.0)
  engine.handle("komi -10")
  assert engine.handle("genmove b")[2] == "E5"
  # White leads by komi and every empty point is black's: no neutral point, the pass stands.
  engine = gtp.Engine(_PassingPlayer("D4"), resign_threshold=0.0)
  assert engine.handle("komi 100")[1] and engine.handle("play b E5")[1]
  assert engine.handle("genmove w")[2] == "pass"
  # Behind, and the only other candidate fills its own eye: a neutral point instead.
  engine = gtp.Engine(_PassingPlayer("A1"), resign_threshold=0.0)
  for command in ("komi 7.5", "play b B1", "play w H8", "play b A2", "play w H7", "play b B2",
                  "play w H6"):
    assert engine.handle(command)[1], command
  move = engine.handle("genmove b")[2]
  assert move not in ("A1", "pass")
  assert int(go.ownership(engine.cfg, engine.history[-2])[go.gtp_to_action(engine.cfg, move)]) == 0


@pytest.mark.parametrize("seconds", ["nan", "inf"])
def test_odd_time_left_does_not_break_genmove(seconds):
  engine = gtp.Engine(_FirstLegalPlayer(), simulations=8)
  assert engine.handle("genmove b")[1]  # the engine now knows its seconds per simulation
  engine.handle(f"time_left w {seconds} 0")  # accepted or refused, but it must not stick
  ident, ok, text = engine.handle("genmove w")
  assert ok, f"genmove after time_left w {seconds}: ? {text}"


def test_loadsgf_of_a_folder_is_a_clean_error():
  engine = gtp.Engine(RandomPlayer(0))
  ident, ok, text = engine.handle(f"loadsgf {os.path.dirname(os.path.abspath(__file__))}")
  assert not ok and text.startswith("cannot load file"), text


def test_delete_character_is_removed_like_other_control_characters():
  # GTP 2, 3.1: control characters (0-31 and 127) other than HT and LF are removed.
  engine = gtp.Engine(RandomPlayer(0))
  assert engine.handle("\x7f") is None
  assert engine.handle("na\x7fme") == ("", True, "agz_jax")


def test_puct_player_reuses_the_subtree_of_the_position_reached(tmp_path):
  from agz_jax.players import load_player  # pylint: disable=import-outside-toplevel
  network = make_checkpoint(tmp_path)
  cfg = go.GoConfig(size=9, komi=7.5, max_moves=4 * 81)
  sims = 160

  def visits_after_two_plies(reuse_tree):
    player = load_player(network, simulations=sims, algorithm="puct", reuse_tree=reuse_tree)
    state = go.init(cfg)
    first = player.analyse(cfg, state)
    # The most visited line two plies deep: a move and the answer the search expected.
    line = next(c["pv"][:2] for c in first["candidates"] if len(c["pv"]) >= 2)
    state = go.play(cfg, line, state)
    second = player.analyse(cfg, state)
    assert go.legal_actions(cfg, state)[second["action"]]
    return sum(c["visits"] for c in second["candidates"])

  fresh = visits_after_two_plies(False)
  assert fresh == sims
  assert visits_after_two_plies(True) > sims           # the expected line's visits were kept


def test_puct_player_searches_for_its_time_in_one_compiled_program(tmp_path):
  from agz_jax.players import load_player, timed_search  # pylint: disable=import-outside-toplevel
  network = make_checkpoint(tmp_path)
  cfg = go.GoConfig(size=9, komi=7.5, max_moves=4 * 81)
  player = load_player(network, simulations=8, algorithm="puct")
  assert player.timed_search and not load_player(network, algorithm="gumbel").timed_search
  first = player.analyse(cfg, go.init(cfg), seconds=0.05)
  assert sum(c["visits"] for c in first["candidates"]) >= 1
  compiled = (timed_search._start._cache_size(), timed_search._grow._cache_size())
  state = go.play(cfg, [first["action"]], go.init(cfg))
  for kwargs in ({"simulations": 5}, {"seconds": 0.02}, {"simulations": 11}):
    out = player.analyse(cfg, state, **kwargs)
    assert go.legal_actions(cfg, state)[out["action"]]
  assert (timed_search._start._cache_size(), timed_search._grow._cache_size()) == compiled


def test_a_refusal_without_a_message_still_gives_a_reason():
  class Terse(gtp.Engine):
    def cmd_undo(self, args):
      raise gtp.GtpError()

  assert Terse(RandomPlayer(0)).handle("undo") == ("", False, "undo failed")
  assert gtp.Engine(RandomPlayer(0)).handle("3") == ("3", False, "syntax error: no command")


def test_the_value_scale_of_the_command_line_is_a_list_of_numbers():
  import argparse  # pylint: disable=import-outside-toplevel
  from agz_jax.gtp import cli  # pylint: disable=import-outside-toplevel
  assert cli._scales("1,1,0.8, 0.5") == (1.0, 1.0, 0.8, 0.5)  # pylint: disable=protected-access
  assert cli._scales("none") == ()  # pylint: disable=protected-access
  with pytest.raises(argparse.ArgumentTypeError, match="'1;0.5' is not a comma-separated list"):
    cli._scales("1;0.5")  # pylint: disable=protected-access
