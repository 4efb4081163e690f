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
