"""A dual network exported to ONNX (agz_jax.onnx_export) gives the JAX network's policy and value:
ONNX Runtime against flax on the same planes, for Go on AlphaGo Zero's and KataGo's planes
(KataGo's global pooling and global inputs) and for Dots and Boxes, batch statistics folded."""

import jax
import jax.numpy as jnp
import numpy as np
import onnxruntime as ort
import pytest

from agz_jax import dots_and_boxes as db, go, nets, onnx_export
from agz_jax.game import Game


def _network(config, planes_shape, num_actions, seed):
  """A network with random parameters and random running statistics (so that the folding of
  batch normalisation is exercised, not the identity it starts as)."""
  model = nets.make(config, num_actions=num_actions)
  variables = model.init(jax.random.PRNGKey(seed), jnp.zeros((1,) + planes_shape))
  rng = np.random.default_rng(seed)
  stats = jax.tree.map(lambda x: rng.uniform(0.5, 2.0, x.shape).astype(np.float32),
                       variables["batch_stats"])
  stats = jax.tree_util.tree_map_with_path(
      lambda path, x: x - 1.2 if path[-1].key == "mean" else x, stats)
  params = jax.tree.map(lambda x: x + rng.normal(0, 0.05, x.shape).astype(np.float32),
                        variables["params"])
  return model, {"params": params, "batch_stats": stats}


def _compare(config, planes, num_actions, seed=0):
  model, variables = _network(config, planes.shape[1:], num_actions, seed)
  logits, value = model.apply(variables, jnp.asarray(planes))
  onnx_model = onnx_export.resnet_to_onnx(config, variables, planes.shape[1:], num_actions)
  session = ort.InferenceSession(onnx_model.SerializeToString(),
                                 providers=["CPUExecutionProvider"])
  got_logits, got_value = session.run(["logits", "value"], {"planes": planes})
  assert got_logits.shape == (len(planes), num_actions) and got_value.shape == (len(planes),)
  np.testing.assert_allclose(got_logits, np.asarray(logits), atol=2e-4, rtol=1e-4)
  np.testing.assert_allclose(got_value, np.asarray(value), atol=2e-5)
  assert np.std(np.asarray(value)) > 1e-3  # positions the network tells apart


def _go_planes(cfg, encoding, count=6, seed=0):
  rng = np.random.default_rng(seed)
  states, state = [], go.init(cfg)
  for _ in range(count * 5):
    legal = np.flatnonzero(np.asarray(go.legal_actions(cfg, state))[:-1])
    state = go.step(cfg, state, int(rng.choice(legal)))
    states.append(state)
  batch = jax.tree.map(lambda *x: jnp.stack(x), *states[4::5])
  return np.asarray(go.features(cfg, batch, encoding), np.float32)


@pytest.mark.parametrize("encoding, pooling", [("agz17", False), ("agz17", True),
                                               ("katago_noladders", True)])
def test_go_networks_export(encoding, pooling):
  cfg = go.GoConfig(size=7, komi=7.5, history=8)
  config = {"kind": "resnet", "blocks": 3, "channels": 8, "value_hidden": 16, "dtype": "float32",
            "encoding": encoding, "global_pooling": pooling, "ownership_head": pooling,
            "score_head": pooling}
  _compare(config, _go_planes(cfg, encoding), cfg.num_actions)


def test_a_dots_and_boxes_network_exports():
  cfg = db.DotsConfig(3, 3)
  game = Game(db, cfg)
  rng = np.random.default_rng(1)
  states, state = [], db.init(cfg)
  for _ in range(10):
    legal = np.flatnonzero(np.asarray(db.legal_actions(cfg, state)))
    state = db.step(cfg, state, int(rng.choice(legal)))
    states.append(state)
  planes = np.asarray(game.features(jax.tree.map(lambda *x: jnp.stack(x), *states), "boxes"),
                      np.float32)
  config = {"kind": "resnet", "blocks": 2, "channels": 8, "value_hidden": 16, "dtype": "float32",
            "encoding": "boxes"}
  _compare(config, planes, cfg.num_lines, seed=3)


def test_other_networks_are_refused_in_one_line():
  with pytest.raises(ValueError, match="only AlphaZero's dual residual network exports"):
    onnx_export.resnet_to_onnx({"kind": "policy", "layers": 2, "filters": 8}, {}, (9, 9, 48), 82)
