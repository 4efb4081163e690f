"""python -m agz_jax.export: a checkpoint's network and config, without its training state."""

import os

import jax
import numpy as np

from agz_jax import checkpoint, export, players

import helpers


def test_an_exported_network_plays_like_its_checkpoint(tmp_path, capsys):
  workdir = helpers.make_checkpoint(tmp_path / "run", size=5)
  out = tmp_path / "shipped"
  assert export.main([workdir, str(out)]) == 0
  assert sorted(os.listdir(out)) == ["_CHECKPOINT_METADATA", "config", "network"]
  config, variables = checkpoint.load_network(str(out))
  original_config, original = checkpoint.load_network(workdir)
  assert config.to_dict() == original_config.to_dict()
  jax.tree.map(np.testing.assert_array_equal, variables, original)
  assert players.load_player(str(out), simulations=2).name == "agz_jax-1x8"
  capsys.readouterr()
  assert export.main([workdir, str(out)]) == 2
  assert "exists: give a new folder" in capsys.readouterr().err
  assert export.main([str(tmp_path / "none"), str(tmp_path / "x")]) == 2
  assert "does not exist" in capsys.readouterr().err
  assert export.main([workdir, "gs://bucket/shipped"]) == 2
  assert "written to a local folder" in capsys.readouterr().err
  assert not os.path.exists("gs:")


def test_the_shipped_9x9_network_knows_some_go():
  """pretrained/zero-9x9 (its strength: BENCHMARKS.md): it opens away from the edges, and
  takes a group in atari in the middle of the board, winning on it."""
  from agz_jax import go  # pylint: disable=import-outside-toplevel
  player = players.load_player(players.pretrained_path("zero-9x9"), simulations=64, seed=0)
  cfg = go.GoConfig(size=9, komi=7.5)
  row, col = divmod(player.analyse(cfg, go.init(cfg))["action"], 9)
  assert min(row, col, 8 - row, 8 - col) >= 2, (row, col)
  # White's E5-E6 has one liberty, E4; black to play.
  moves = ("D5", "E5", "F5", "E6", "D6", "A1", "F6", "A9", "E7", "J1")
  out = player.analyse(cfg, go.play(cfg, [go.gtp_to_action(cfg, v) for v in moves]))
  assert go.action_to_gtp(cfg, out["action"]) == "E4"
  assert out["value"] > 0.5


def test_the_shipped_dots_network_plays_3x3_boxes():
  """pretrained/dots-3x3 (96-4 against the greedy player at PUCT 1,024: BENCHMARKS.md) is a
  3 x 3 Dots and Boxes player whose moves are legal lines."""
  from agz_jax import dots_and_boxes as dab  # pylint: disable=import-outside-toplevel
  player = players.load_player(players.pretrained_path("dots-3x3"), simulations=16, seed=0)
  cfg = player.game.cfg
  assert (cfg.rows, cfg.cols) == (3, 3)
  state = dab.init(cfg)
  for _ in range(6):
    line = player.analyse(cfg, state)["action"]
    assert bool(np.asarray(dab.legal_actions(cfg, state))[line])
    state = dab.step(cfg, state, line)
  assert int(state.move_count) == 6
