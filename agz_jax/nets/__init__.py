"""Network modules (Flax linen), free of training logic, and `make(model_config)`."""

from agz_jax.nets.factory import KINDS, compute_dtype, has_value, make
from agz_jax.nets.fast_policy import FastPolicy
from agz_jax.nets.policy import PolicyNet
from agz_jax.nets.resnet import AlphaZeroNet, ResidualBlock

__all__ = ["AlphaZeroNet", "FastPolicy", "KINDS", "PolicyNet", "ResidualBlock", "compute_dtype", "has_value",
           "make"]
