"""Network modules (Flax linen), free of training logic, and `make(model_config)`."""

from agz_jax.nets.factory import GLOBAL_INPUTS, KINDS, VALUE_ONLY, compute_dtype, has_value, make
from agz_jax.nets.fast_policy import FastPolicy
from agz_jax.nets.policy import PolicyNet
from agz_jax.nets.resnet import AlphaZeroNet, ResidualBlock
from agz_jax.nets.value import ValueNet

__all__ = ["AlphaZeroNet", "FastPolicy", "GLOBAL_INPUTS", "KINDS", "PolicyNet", "ResidualBlock",
           "VALUE_ONLY", "ValueNet", "compute_dtype", "has_value", "make"]
