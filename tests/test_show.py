"""`python -m agz_jax.show`: the picture of a position with the network's policy or search visits.

The pure parts (which moves get a label, how a probability is written, where the star points
are) are tested directly; the command runs in subprocesses on a small random network saved with
the real Checkpointer, several at once to keep the module fast.
"""

import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from agz_jax import show

import helpers

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ENV = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=REPO)
EXPECTED_PNG = (round(show.FIGSIZE[0] * show.DPI), round(show.FIGSIZE[1] * show.DPI))

# 9x9, white to play after move 3; move 4 (W C3) and 5 follow.
GAME = b"(;GM[1]FF[4]CA[UTF-8]SZ[9]KM[7.5];B[ee];W[cc];B[gc];W[cg];B[gg])"


make_checkpoint = helpers.make_checkpoint


@pytest.fixture(scope="module")
def network(tmp_path_factory):
  return make_checkpoint(tmp_path_factory.mktemp("network9"))


@pytest.fixture(scope="module")
def game_file(tmp_path_factory):
  path = tmp_path_factory.mktemp("sgf") / "game.sgf"
  path.write_bytes(GAME)
  return str(path)


def png_size(path):
  with open(path, "rb") as f:
    header = f.read(24)
  assert header[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
  return struct.unpack(">II", header[16:24])


def run_all(commands, timeout=240):
  """Runs `python -m agz_jax.show ARGS` for every ARGS at once; returns CompletedProcess-likes."""
  procs = [subprocess.Popen([sys.executable, "-m", "agz_jax.show", *args], cwd=REPO, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
           for args in commands]
  results = []
  for args, proc in zip(commands, procs):
    out, err = proc.communicate(timeout=timeout)
    results.append((args, proc.returncode, out, err))
  return results


# ----------------------------------------------------------------------------- pure functions


def test_top_moves_are_the_largest_probabilities_in_order():
  rng = np.random.default_rng(1)
  for size in (5, 9, 19):
    for _ in range(20):
      p = rng.dirichlet(np.full(size * size + 1, 0.3))
      p[rng.random(size * size + 1) < 0.3] = 0.0  # illegal points
      p /= p.sum()
      labels = show.top_moves(p, size)
      points = p[:-1]
      expected = sorted((a for a in range(size * size) if points[a] > 0),
                        key=lambda a: (-points[a], a))[:5]
      assert [l.action for l in labels] == expected
      assert all(l.probability == points[l.action] for l in labels)
      # Nothing left out is more likely than the last label.
      rest = np.delete(points, [l.action for l in labels])
      assert not labels or rest.max() <= labels[-1].probability


def test_top_moves_labels_vertices_and_percentages():
  size = 9
  p = np.zeros(size * size + 1)
  p[0] = 0.42       # A9, top left
  p[8] = 0.075      # J9, top right
  p[80] = 0.003     # J1, bottom right
  p[72] = 0.0004    # A1
  p[40] = 0.075     # E5, ties with J9 and comes after it (higher index)
  p[-1] = 0.4246    # pass: the most likely action, but never labelled on the board
  labels = show.top_moves(p, size)
  assert [(l.vertex, l.text) for l in labels] == [
      ("A9", "42%"), ("J9", "7.5%"), ("E5", "7.5%"), ("J1", "0.3%"), ("A1", "<0.1%")]
  assert show.top_moves(p, size, k=2) == labels[:2]
  # Fewer legal points than labels: only those.
  q = np.zeros(size * size + 1)
  q[[3, 4]] = 0.5
  assert [l.vertex for l in show.top_moves(q, size)] == ["D9", "E9"]
  assert show.top_moves(np.eye(size * size + 1)[-1], size) == []  # only pass
  with pytest.raises(ValueError, match="82 probabilities"):
    show.top_moves(np.ones(81) / 81, size)


def test_percent():
  assert [show.percent(x) for x in (1.0, 0.42, 0.0995, 0.075, 0.0005, 0.00049, 0.0)] == [
      "100%", "42%", "10%", "7.5%", "0.1%", "<0.1%", "0%"]


def test_draw_writes_a_png_and_returns_the_labels(tmp_path):
  board = np.zeros((9, 9), np.int8)
  board[4, 4], board[2, 6] = 1, -1
  p = np.zeros(82)
  legal = np.flatnonzero(board.reshape(-1) == 0)
  p[legal] = np.linspace(1, 2, len(legal))
  p /= p.sum()
  position = show.Position(board=board, last_move=24, title="test: White to play")
  out = tmp_path / "sub" / "picture.png"
  labels = show.draw(position, p, subtitle="s", caption="c", scale_label="%", out=str(out))
  assert labels == show.top_moves(p, 9)
  assert png_size(out) == EXPECTED_PNG


# ----------------------------------------------------------------------------- the command


def test_command_writes_pictures_of_the_expected_size(network, game_file, tmp_path):
  outs = {name: str(tmp_path / f"{name}.png") for name in ("empty", "move", "search")}
  results = run_all([
      ["--checkpoint", network, "--empty", "9", "--out", outs["empty"]],
      ["--checkpoint", network, "--sgf", game_file, "--move", "3", "--out", outs["move"]],
      ["--checkpoint", network, "--sgf", game_file, "--move", "3", "--search", "8",
       "--out", outs["search"]],
  ])
  for args, code, out, err in results:
    assert code == 0, f"{args}: {err}"
    assert out.strip() == args[-1]
  for path in outs.values():
    assert png_size(path) == EXPECTED_PNG, path
  pictures = {name: open(path, "rb").read() for name, path in outs.items()}
  assert len(set(pictures.values())) == 3  # three different positions / kinds


def test_command_errors_are_one_line(network, game_file, tmp_path):
  garbage = tmp_path / "garbage.sgf"
  garbage.write_bytes(b"this is not SGF\x00\xff")
  small = tmp_path / "small.sgf"
  small.write_bytes(b"(;GM[1]FF[4]SZ[5];B[cc])")
  out = str(tmp_path / "never.png")
  cases = [
      (["--checkpoint", str(tmp_path / "missing"), "--empty", "9"], "checkpoint"),
      (["--checkpoint", network, "--sgf", str(tmp_path / "missing.sgf")], "no such file"),
      (["--checkpoint", network, "--sgf", str(garbage)], "cannot read SGF"),
      (["--checkpoint", network, "--sgf", game_file, "--move", "6"], "beyond the end"),
      (["--checkpoint", network, "--sgf", game_file, "--move", "-1"], "--move"),
      (["--checkpoint", network, "--empty", "5"], "plays 9x9, not 5x5"),
      (["--checkpoint", network, "--sgf", str(small)], "plays 9x9, not 5x5"),
      (["--checkpoint", network, "--empty", "25"], "board size"),
  ]
  results = run_all([args + ["--out", out] for args, _ in cases])
  for (args, expected), (_, code, stdout, stderr) in zip(cases, results):
    lines = stderr.strip().splitlines()
    assert code != 0, args
    assert len(lines) == 1, f"{args}: {stderr}"
    assert lines[0].startswith("show: ") and expected in lines[0], f"{args}: {lines[0]}"
    assert stdout == ""
  assert not os.path.exists(out)
