"""agz_jax: AlphaGo and AlphaGo Zero in JAX."""

from agz_jax import go

__all__ = ["go"]
__version__ = "0.1.0"
