"""AlphaGo's fast policies (rollout p_pi, tree p_tau): a linear softmax over sparse features."""

import flax.linen as nn
import jax.numpy as jnp


class FastPolicy(nn.Module):
  """Logits as sums of feature weights (Silver et al. 2016, "Rollout policy").

  The input names every point's active features by index (one per feature
  group, `num_features` meaning none; see agz_jax.alphago.patterns), so a forward
  pass is one gather and a sum: about a thousand times cheaper than the policy
  network, which is what lets a search play whole games out at its leaves.

  Attributes:
    num_features: F, the size of the weight vector.
    dtype: unused (the sums are float32); kept for make()'s common signature.
  """

  num_features: int
  dtype: jnp.dtype = jnp.float32

  @nn.compact
  def __call__(self, feature_indices: jnp.ndarray, train: bool = False) -> jnp.ndarray:
    """Logits [B, P + 1] (pass last) from feature indices [B, P, G] int32 in [0, F]."""
    del train
    weights = self.param("weights", nn.initializers.zeros, (self.num_features,), jnp.float32)
    pass_logit = self.param("pass_logit", nn.initializers.zeros, (), jnp.float32)
    padded = jnp.append(weights, jnp.zeros((1,), jnp.float32))  # index F: no feature
    logits = jnp.sum(padded[feature_indices], axis=-1)
    return jnp.concatenate(
        [logits, jnp.broadcast_to(pass_logit, logits.shape[:-1] + (1,))], axis=-1)
