"""Networks from the `model` section of a config."""

import jax.numpy as jnp

from agz_jax.nets.fast_policy import FastPolicy
from agz_jax.nets.policy import PolicyNet
from agz_jax.nets.resnet import AlphaZeroNet
from agz_jax.nets.value import ValueNet

_DTYPES = {"float32": jnp.float32, "bfloat16": jnp.bfloat16}
# kind -> (module, the config fields it takes, whether it has a value output).
KINDS = {
    "resnet": (AlphaZeroNet, ("blocks", "channels", "value_hidden", "global_pooling",
                              "ownership_head", "score_head", "opponent_policy_head"), True),
    "policy": (PolicyNet, ("layers", "filters"), False),
    "fast_policy": (FastPolicy, ("num_features",), False),
    "value": (ValueNet, ("layers", "filters", "hidden", "relu_1x1"), False),
}
# Kinds whose output is a value only (no policy to play with).
VALUE_ONLY = ("value",)
# Encodings whose last planes are global features (constant over the board), and how many:
# a resnet reading one takes them as KataGo does (AlphaZeroNet.global_inputs). The count is
# the encoding's own (go.global_features); a test holds the two equal.
GLOBAL_INPUTS = {"katago": 8, "katago_noladders": 8}


def compute_dtype(name: str):
  """The jnp dtype named by model.dtype ("float32" or "bfloat16")."""
  if name not in _DTYPES:
    raise ValueError(f"model.dtype must be one of {sorted(_DTYPES)}, got {name!r}")
  return _DTYPES[name]


def make(model_config, num_actions: int | None = None):
  """The Flax module a `model` config section describes.

  Args:
    model_config: a ConfigDict (or dict) with `kind` (one of KINDS), `dtype`
      and the fields of that kind: resnet: blocks, channels, value_hidden
      and KataGo's global_pooling, ownership_head, score_head,
      opponent_policy_head (AlphaGo Zero's dual-head network, returns
      (logits, value)); policy:
      layers, filters (AlphaGo's policy CNN, returns logits); fast_policy:
      num_features (AlphaGo's rollout / tree policy on pattern features,
      returns logits); value: layers, filters, hidden, relu_1x1 (AlphaGo's
      value network, returns values).
    num_actions: the game's actions, for a resnet's policy (None: Go's,
      one per point and a pass).
  """
  kind = model_config["kind"]
  if kind not in KINDS:
    raise ValueError(f"model.kind must be one of {', '.join(KINDS)}, got {kind!r}")
  module, fields, _ = KINDS[kind]
  # Fields added later (KataGo's switches) are off in the configs of older checkpoints.
  given = {f: model_config[f] for f in fields if f in model_config}
  if kind == "resnet" and num_actions is not None:
    given["num_actions"] = num_actions
  if kind == "resnet" and model_config.get("encoding") in GLOBAL_INPUTS:
    given["global_inputs"] = GLOBAL_INPUTS[model_config["encoding"]]
  return module(**given, dtype=compute_dtype(model_config["dtype"]))


def has_value(model_config) -> bool:
  """Whether the network of `model_config` has a value output beside its policy (AlphaGo
  Zero's dual head: a player can search with it alone)."""
  return KINDS[model_config["kind"]][2]
