"""colab/agz_jax.ipynb, run end to end in a Jupyter kernel as a person would run it.

The notebook reads AGZ_JAX_NOTEBOOK_TEST=1 in its parameters cell: small sizes, the
person's moves from a list instead of typed, the Colab-only cells (install, apt-get)
skipped. It trains into AGZ_JAX_NOTEBOOK_WORKDIR, plays a scripted game and a two-game
match against GNU Go (installed by .ci/run, as for tests/test_match.py).
"""

import json
import os
import re
import time

import nbformat
import pytest
from nbclient import NotebookClient

from agz_jax import players

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOK = os.path.join(REPO, "colab", "agz_jax.ipynb")


def _text(cell) -> str:
  """A code cell's printed text and the text of what it displayed."""
  parts = []
  for output in cell.outputs:
    if output.output_type == "stream":
      parts.append(output.text)
    elif output.output_type in ("display_data", "execute_result"):
      parts.append(output.data.get("text/html", "") or output.data.get("text/plain", ""))
  return "".join(parts)


def _images(cell) -> int:
  return sum("image/png" in output.get("data", {}) for output in cell.outputs)


def test_the_notebook_is_committed_without_outputs():
  notebook = nbformat.read(NOTEBOOK, as_version=4)
  nbformat.validate(notebook)
  code = [c for c in notebook.cells if c.cell_type == "code"]
  assert code and all(not c.outputs and c.execution_count is None for c in code)


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.gnugo
def test_the_notebook_runs_end_to_end(tmp_path, monkeypatch):
  workdir = tmp_path / "run"
  monkeypatch.setenv("AGZ_JAX_NOTEBOOK_TEST", "1")
  monkeypatch.setenv("AGZ_JAX_NOTEBOOK_WORKDIR", str(workdir))
  notebook = nbformat.read(NOTEBOOK, as_version=4)
  client = NotebookClient(notebook, kernel_name="python3", timeout=600,
                          resources={"metadata": {"path": REPO}})
  start = time.monotonic()
  client.execute()  # raises CellExecutionError, with the cell and its traceback, on any error
  seconds = time.monotonic() - start
  cells = {c.source.split("\n", 1)[0]: c for c in notebook.cells if c.cell_type == "code"}
  texts = [_text(c) for c in notebook.cells if c.cell_type == "code"]
  everything = "\n".join(texts)

  assert "backend cpu" in everything or "backend gpu" in everything or "backend tpu" in everything
  # Training: the bar reached the last iteration, checkpoints and metrics are on disk.
  assert '<progress value="4" max="4"' in everything and "it 4/4" in everything
  assert sorted(os.listdir(workdir / "checkpoints"), key=int) == ["0", "2", "4"]
  rows = [json.loads(line) for line in open(workdir / "metrics.jsonl", encoding="utf-8")]
  assert [r["iteration"] for r in rows] == [1, 2, 3, 4] and "loss_policy" in rows[-1]
  # Curves and the two heatmaps are shown inline.
  assert _images(cells["from agz_jax import plot"]) >= 2
  assert _images(cells["from agz_jax import go, players, show"]) == 2
  assert os.path.getsize(workdir / "pictures" / "visits.png") > 10_000
  # The games are played against the network the repository ships.
  # (Its PUCT search grows a tree per device: the name says how many the kernel has.)
  shipped = players.load_player(players.pretrained_path("zero-9x9"), simulations=4).network.name
  assert re.search(rf"the pretrained network {re.escape(shipped)}(-trees\d+)? from "
                   "pretrained/zero-9x9",
                   _text(cells["NETWORK = PRETRAINED if os.path.isdir(PRETRAINED) else WORKDIR"]))
  # The game: refusals explained, the board drawn after the moves, the script's resignation.
  game = _text(cells["from agz_jax import interactive"])
  assert "E5 is illegal: occupied; try again" in game
  assert "bad vertex 'Z9'" in game and game.count("plays ") == 2
  assert game.rstrip().endswith("game over: W+R")
  assert _images(cells["from agz_jax import interactive"]) == 1  # one picture, redrawn
  # The match: both games played and the summary with its interval.
  summary = _text(cells["import shlex"])
  assert "[2/2] game" in summary and "95% interval" in summary
  assert len(open(workdir / "vs_gnugo" / "results.jsonl", encoding="utf-8").readlines()) == 2
  print(f"notebook ran in {seconds:.0f} s")
