"""Network modules (Flax linen), free of training logic."""

from agz_jax.nets.policy import PolicyNet
from agz_jax.nets.resnet import AlphaZeroNet, ResidualBlock

__all__ = ["AlphaZeroNet", "PolicyNet", "ResidualBlock"]
