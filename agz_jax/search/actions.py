"""The move a search's result chooses: its best move, or one sampled from its policy."""

import jax
import jax.numpy as jnp
import mctx

from agz_jax.search.config import SearchConfig


def best_action(search: SearchConfig, out: mctx.PolicyOutput) -> jax.Array:
  """[B] int32: Gumbel's sequential-halving winner, or the most visited action (PUCT, AlphaGo)."""
  if search.algorithm == "gumbel":
    return out.action.astype(jnp.int32)
  return jnp.argmax(out.search_tree.summary().visit_counts, axis=-1).astype(jnp.int32)


def sample_action(rng_key: jax.Array, weights: jax.Array) -> jax.Array:
  """[] int32: an action drawn in proportion to `weights` ([A]). Consumes `rng_key`."""
  return jax.random.categorical(rng_key, jnp.log(jnp.maximum(weights, 1e-30))).astype(jnp.int32)


def choose_action(search: SearchConfig, out: mctx.PolicyOutput, keys: jax.Array,
                  move_count: jax.Array, temperature_moves: int) -> tuple[jax.Array, jax.Array]:
  """The move to play: for the first `temperature_moves` moves of a game sampled from
  the search policy (AlphaGo Zero's temperature 1), the best move afterwards.

  Args:
    keys: [B] PRNG keys, one per game (consumed).
    move_count: [B] moves played so far in each game.

  Returns:
    (action [B] int32, best [B] int32).
  """
  best = best_action(search, out)
  weights = out.action_weights
  sampled = jax.vmap(sample_action)(keys, weights)
  # A draw of a zero-weight action (only where every weight underflowed) plays the best one.
  sampled = jnp.where(jnp.take_along_axis(weights, sampled[:, None], 1)[:, 0] > 0, sampled, best)
  return jnp.where(move_count < temperature_moves, sampled, best).astype(jnp.int32), best
