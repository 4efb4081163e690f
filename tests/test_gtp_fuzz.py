"""The GTP engine fed thousands of seeded random lines, every answer checked.

Lines mix good play with what a careless controller or a hostile person sends:
random bytes and Unicode, Unicode white space, overlong lines, wrong arities,
bad vertices, sizes and numbers, occupied / suicide / ko / superko moves, bad
`loadsgf` files, junk `time_settings` and `lz-analyze` arguments. Checked:

* in-process, after every line: one well-formed answer with the id echoed; an
  accepted play or genmove leaves the board a replay by the pure-Python
  reference rules (tests/reference.py) would give, an illegal move is refused
  for the reason the reference gives, and a refused command changes nothing;
* the same transcript through `serve`: exactly one response per command, in order;
* the real process, fed raw bytes: it answers every command and never dies or hangs.
"""

import copy
import io
import os
import random
import subprocess
import sys

import numpy as np
import pytest

from agz_jax import go, gtp, sgf
from agz_jax.players import RandomPlayer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import helpers  # noqa: E402  pylint: disable=wrong-import-position
from reference import ReferenceGo  # noqa: E402  pylint: disable=wrong-import-position

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLUMNS = "ABCDEFGHJKLMNOPQRST"
SIZES = (9, 5)  # the random player takes any size; only these two are compiled

@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)  # `printsgf WORD` writes a file named WORD


# -- a mirror of the engine's game on the reference rules -----------------------------------


class Mirror:
  """What the engine's game must be, by the reference rules and GTP's conventions.

  A move of the colour not to move is preceded by a pass that neither ends the
  game nor counts toward two passes; after the end (two passes, the move
  limit), a play goes on from the same position with a fresh superko history.
  """

  def __init__(self, size=19, komi=7.5, black=(), white=(), to_play=go.BLACK):
    self.size, self.komi = size, komi
    self.game = ReferenceGo(size, komi, 4 * size * size, black, white, to_play)
    self.undo_stack = []

  def _ready(self, colour):
    """(game, inserted): the game the next move of `colour` is played on."""
    game = copy.deepcopy(self.game)
    if game.terminated:
      black = [p for p, v in enumerate(game.board) if v == go.BLACK]
      white = [p for p, v in enumerate(game.board) if v == go.WHITE]
      game = ReferenceGo(self.size, self.komi, 4 * self.size * self.size, black, white,
                         game.to_play)
    if colour != game.to_play:
      game.play(game.pass_action)
      game.passes, game.terminated = 0, game.move_count >= game.max_moves
    return game

  def illegal_reason(self, colour, action):
    return self._ready(colour).illegal_reason(action)

  def play(self, colour, action):
    game = self._ready(colour)
    reason = game.illegal_reason(action)
    assert reason is None, f"the engine accepted an illegal move ({reason})"
    game.play(action)
    self.undo_stack.append(self.game)
    self.game = game

  def undo(self):
    self.game = self.undo_stack.pop()


def engine_view(engine):
  """What a refused command must leave as it was."""
  state = engine.state
  return (engine.size, engine.komi, np.asarray(state.board).tolist(), int(state.to_play),
          int(state.passes), bool(state.terminated), list(engine.moves), dict(engine.time_left))


def check_against_mirror(engine, mirror):
  assert engine.size == mirror.size and engine.komi == mirror.komi
  assert np.asarray(engine.state.board).tolist() == mirror.game.board
  assert int(engine.state.to_play) == mirror.game.to_play
  assert bool(engine.state.terminated) == mirror.game.terminated


# -- the lines ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sgf_files(tmp_path_factory):
  folder = tmp_path_factory.mktemp("sgf")
  files = {
      "good": b"(;GM[1]FF[4]SZ[9]KM[6.5];B[ee];W[cc];B[gg];B[dc])",
      "setup": b"(;GM[1]FF[4]SZ[9]KM[0.5]AB[aa][bb]AW[cc]PL[W];W[dd];B[ab])",
      "malformed": b"(;GM[1]FF[4]SZ[9];B[ee];W[",
      "not_sgf": b"\x00\xff garbage \xfe",
      "illegal": b"(;GM[1]FF[4]SZ[9]KM[7.5];B[ee];W[cc];B[dd];W[ee])",
      "suicide": b"(;GM[1]FF[4]SZ[9]KM[7.5];B[ba];W[cc];B[ab];W[aa])",
      "too_big": b"(;GM[1]FF[4]SZ[25]KM[7.5];B[ee])",
      "odd_komi": b"(;GM[1]FF[4]SZ[9]KM[nan];B[ee])",
  }
  paths = helpers.write_files(folder, files)
  paths["folder"] = str(folder)
  return paths


def random_word(rng):
  kinds = [
      lambda: "".join(rng.choice("abcxyz019 -+.#=?_\u00e9\u4e2d\U0001f600\u00a0\u3000\u2028\u0085")
                      for _ in range(rng.randrange(1, 12))),
      lambda: rng.choice(["nan", "inf", "-inf", "1e400", "1e-400", "-0", "+7", "0x10", "7,5",
                          "\u0669", "\u0667.5", "\u00b2", "\uff19", "1_000", "9" * 5000,
                          "-" + "9" * 30, "", "\x00", "\t"]),
      lambda: str(rng.randrange(-5, 400)),
      lambda: f"{rng.choice('ABCDEFGHIJKLMNOPQRSTZabc')}{rng.randrange(-1, 27)}",
  ]
  return rng.choice(kinds)()


def fuzz_lines(rng, mirror_game, sgf_files):
  """One random line (str or bytes); `mirror_game` supplies legal and capturing moves."""
  size = mirror_game.size
  r = rng.random()
  colour = rng.choice(["b", "w", "B", "White", "black"])
  if r < 0.45:  # play: mostly legal, else any point (occupied, suicide, ko, superko)
    legal = [p for p, ok in enumerate(mirror_game.legal_mask()[:-1]) if ok]
    if legal and rng.random() < 0.7:
      point = rng.choice(legal)
    else:
      point = rng.randrange(size * size)
    vertex = "pass" if rng.random() < 0.05 else f"{COLUMNS[point % size]}{size - point // size}"
    return f"play {colour} {vertex}"
  if r < 0.55:
    return rng.choice([f"genmove {colour}", f"reg_genmove {colour}", "undo", "showboard",
                       "final_score", "clear_board", "printsgf"])
  if r < 0.8:  # a known command with junk arguments, maybe an id
    name = rng.choice(gtp.COMMANDS[:-1] if rng.random() < 0.9 else ["Play", "kgs-genmove", "x"])
    if name == "quit":
      name = "name"
    args = {
        "boardsize": lambda: [rng.choice([str(s) for s in SIZES] + ["1", "20", "0", "-9", "9.0",
                                                                      "\u0669", "99" * 20])],
        "komi": lambda: [rng.choice(["7.5", "0", "-3.5", "nan", "inf", "1e400", "7,5", "\u0667.5",
                                     "1001"])],
        "loadsgf": lambda: [rng.choice(list(sgf_files.values()) + ["missing.sgf", "/"])]
                           + rng.choice([[], ["2"], ["0"], ["-1"], ["x"], ["9" * 40]]),
    }.get(name, lambda: [random_word(rng) for _ in range(rng.randrange(4))])()
    words = [name] + args
    if rng.random() < 0.3:
      words.insert(0, str(rng.randrange(10 ** rng.randrange(1, 20))))
    return " ".join(words)
  if r < 0.9:
    return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60))).replace(b"\n", b" ")
  return rng.choice(["", "   ", "\t", "# comment", "  # play b A1", "\r", "\x00", "\x7f",
                     "\u00a0", "\u3000", "\u2028", "\u0085", "\u00a0\u3000", "5 \u00a0"])


def as_text(line) -> str:
  return line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line


def expected_answer(line) -> bool:
  """Whether GTP 2 preprocessing leaves a command of the line (which must then be answered)."""
  return gtp.parse(as_text(line)) is not None


# -- in-process, line by line -----------------------------------------------------------------


def apply_to_mirror(mirror, command, ok, text, sgf_files):
  """Updates the mirror after an answer; checks a refused move's reason."""
  name, args = command.name, command.args
  if name == "play" and len(args) >= 2:
    colour = gtp.protocol.COLOURS.get(args[0].lower())
    try:
      action = go.gtp_to_action(go.GoConfig(size=mirror.size), args[1])
    except ValueError:
      action = None
    if colour is None or action is None:
      assert not ok and text.startswith("syntax error"), text
      return
    reason = mirror.illegal_reason(colour, action)
    if ok:
      mirror.play(colour, action)
    else:
      assert text == f"illegal move: {reason}", (reason, text)
  elif name == "genmove" and ok and text != "resign":
    colour = gtp.protocol.COLOURS[args[0].lower()]
    mirror.play(colour, go.gtp_to_action(go.GoConfig(size=mirror.size), text))
  elif name == "undo":
    assert ok == bool(mirror.undo_stack), text
    if ok:
      mirror.undo()
  elif name == "boardsize" and ok:
    mirror.__init__(int(args[0]), mirror.komi)
  elif name == "clear_board":
    mirror.__init__(mirror.size, mirror.komi)
  elif name == "komi" and ok:
    mirror.komi = float(args[0])
    mirror.game.komi = mirror.komi
  elif name == "loadsgf" and ok:
    record = sgf.read(args[0])
    stop = len(record.moves) if len(args) < 2 else max(0, int(args[1]) - 1)
    first = record.moves[0][0] if record.moves else record.first_to_play
    mirror.__init__(record.size, record.komi, record.black_setup, record.white_setup, first)
    for colour, action in record.moves[:stop]:
      mirror.play(colour, action)


@pytest.mark.parametrize("seed", [0, 1])
def test_every_line_gets_one_answer_and_the_game_stays_right(seed, sgf_files):
  rng = random.Random(seed)
  engine = gtp.Engine(RandomPlayer(seed))
  mirror = Mirror()
  for command in ("boardsize 9", "komi 7.5"):
    engine.handle(command)
  mirror.__init__(9, 7.5)
  answered = 0
  for _ in range(1500):
    line = fuzz_lines(rng, mirror.game, sgf_files)
    before = engine_view(engine)
    answer = engine.handle(as_text(line))
    command = gtp.parse(as_text(line))
    if command is None:
      assert answer is None
      assert engine_view(engine) == before
      continue
    answered += 1
    ident, ok, text = answer
    assert ident == command.ident
    assert isinstance(text, str) and (ok or text), answer
    assert "\n\n" not in text and not text.startswith("internal error"), (line, text)
    if not ok:
      assert engine_view(engine) == before, f"{line!r} was refused ({text}) but changed the game"
    apply_to_mirror(mirror, command, ok, text, sgf_files)
    check_against_mirror(engine, mirror)
  assert answered > 1000


def test_serve_answers_each_command_once_in_order(sgf_files):
  rng = random.Random(7)
  mirror = Mirror(9)
  lines = ["boardsize 9"]
  for _ in range(600):
    lines.append(fuzz_lines(rng, mirror.game, sgf_files))
  # Overlong lines: one answer each (the id still echoed), the next line read as usual.
  lines += [f"12 play b {'A1 ' * 30000}", "# " + "x" * 100000, " " * 70000 + "name",
            "13 name", "lz-analyze 1", "14 name"]
  data = b"\n".join(line if isinstance(line, bytes) else line.encode() for line in lines)
  out = io.StringIO()
  gtp.serve(gtp.Engine(RandomPlayer(0)), io.BytesIO(data + b"\nquit\n"), out)
  responses = out.getvalue().split("\n\n")
  assert responses[-1] == ""
  responses = responses[:-1]
  expected = []
  for line in lines + ["quit"]:
    text = as_text(line)
    command = gtp.parse(text)
    if len(text.encode()) > gtp.protocol.MAX_LINE_BYTES:
      cut = text.encode()[:gtp.protocol.MAX_LINE_BYTES].decode(errors="replace")
      command = gtp.parse(cut)
      if command is None and "#" in cut:
        continue
      command = command or gtp.Command("", "", [])
    if command is not None:
      expected.append(command.ident)
  assert len(responses) == len(expected)
  for response, ident in zip(responses, expected):
    first = response.split("\n")[0]
    assert first[:1] in "=?" and first[1:1 + len(ident)] == ident, (ident, response[:80])
    assert first[1 + len(ident):2 + len(ident)] in ("", " "), response[:80]
  assert responses[-6] == "?12 syntax error: line longer than 65536 bytes"
  assert responses[-5] == "? syntax error: line longer than 65536 bytes"
  assert responses[-4] == "=13 agz_jax" and responses[-2] == "=14 agz_jax"
  assert responses[-3].startswith("=\ninfo move ") and responses[-1] == "="


def test_the_process_survives_raw_bytes():
  rng = random.Random(3)
  chunks = [b"boardsize 9"]
  for _ in range(300):
    chunks.append(bytes(rng.randrange(256) for _ in range(rng.randrange(0, 80))).replace(
        b"\n", b"\r").replace(b"quit", b"qu_t"))
  chunks += [b"\xff\xfe" * 40000, b"lz-analyze " + b"9" * 5000, b"7 play b E5", b"8 genmove w", b"9 name", b""]
  process = subprocess.run(
      [sys.executable, "-m", "agz_jax.gtp", "--random"], input=b"\n".join(chunks),
      capture_output=True, timeout=300, env=dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=REPO),
      check=False)
  assert process.returncode == 0, process.stderr.decode()[-2000:]
  out = process.stdout.decode()
  assert "=7\n\n" in out and "=9 agz_jax\n\n" in out and "\n=8 " in "\n" + out
  expected = sum(expected_answer(c) for c in chunks)
  assert out.count("\n\n") == expected


# -- the cases that were found by hand --------------------------------------------------------


def answers(engine, *lines):
  return [engine.handle(line) for line in lines]


def test_an_inserted_pass_never_ends_the_game():
  engine = gtp.Engine(RandomPlayer(0))
  assert answers(engine, "boardsize 9", "clear_board", "play b pass", "play b D4") == [
      ("", True, "")] * 4
  assert not bool(engine.state.terminated) and int(engine.state.to_play) == go.WHITE
  # Two real passes end the game; a play after them goes on from the same position, and so
  # does genmove, as with GNU Go.
  assert answers(engine, "play w pass", "play b pass")[1][1]
  assert bool(engine.state.terminated)
  ident, ok, vertex = engine.handle("genmove w")
  assert ok and vertex != "resign"
  assert engine.handle("play b E5")[1] and engine.handle("undo")[1]


@pytest.mark.parametrize("line", ["\u00a0", "\u3000", "\u2028", "\u0085", "3 \u00a0", "\u00a0name"])
def test_a_line_of_unicode_white_space_is_answered(line):
  out = io.StringIO()
  gtp.serve(gtp.Engine(RandomPlayer(0)), io.BytesIO((line + "\nname\n").encode()), out)
  first, second, end = out.getvalue().split("\n\n")
  assert first.startswith("?") and second == "= agz_jax" and end == ""


@pytest.mark.parametrize("line", ["boardsize \u0669", "komi \u0667.5", "boardsize \uff19",
                                  "komi \u00b2", "time_left b \u0661\u0660 0", "lz-analyze \u00b2",
                                  "lz-analyze " + "9" * 5000, "loadsgf x.sgf " + "9" * 5000,
                                  "komi 1" + "0" * 5000])
def test_numbers_are_ascii_and_of_sane_size(line):
  engine = gtp.Engine(RandomPlayer(0))
  before = engine_view(engine)
  ident, ok, text = engine.handle(line)
  assert not ok and text.startswith(("syntax error", "cannot load")), text
  assert engine_view(engine) == before


def test_a_refused_loadsgf_changes_nothing(sgf_files):
  engine = gtp.Engine(RandomPlayer(0))
  answers(engine, "boardsize 9", "komi 0.5", "play b C3", "play w G7")
  before = engine_view(engine)
  for name in ("illegal", "suicide", "malformed", "not_sgf", "too_big", "folder"):
    ident, ok, text = engine.handle(f"loadsgf {sgf_files[name]}")
    assert not ok and text.startswith("cannot load file"), (name, text)
    assert engine_view(engine) == before, name
  assert engine.handle(f"loadsgf {sgf_files['good']} 3")[1]
  assert engine.komi == 6.5 and len(engine.moves) == 2
