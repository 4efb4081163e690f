"""Leaf evaluators: what the search asks of a position it reaches.

An evaluator is a function `(variables, states, rng_key) -> (prior_logits [B, A],
value [B])`: the prior over actions (illegal ones are masked by the search) and
the value for the player to move, of a batch of B game states. `variables` is
whatever pytree the evaluator needs (one network's variables, or several
networks' in a dict); `rng_key` is one PRNG key for the batch, which a
stochastic evaluator (random rollouts) consumes and a network ignores. The key
is drawn afresh for every call (a simulation's, the roots'), never shared with
the search's own noise; which games share a batch (and so a key) depends on
how games are split over devices, so a stochastic evaluator's results do too.
"""

from typing import Callable

import jax
import jax.numpy as jnp

from agz_jax.game import Game

# (variables, states [B], rng_key) -> (prior_logits [B, A], value [B]).
Evaluator = Callable[[object, object, jax.Array], tuple[jax.Array, jax.Array]]
# A network in inference mode: (variables, planes [B, H, W, F]) -> its outputs.
ApplyFn = Callable[[dict, jax.Array], object]


def network(game: Game, apply_fn: ApplyFn, encoding: str, *, has_value: bool = True) -> Evaluator:
  """One network's prior and value, from the positions encoded as it was trained.

  Args:
    game: the game.
    apply_fn: the network in inference mode; returns (logits, value) when
      `has_value`, else logits.
    encoding: the input planes the network reads (game.features).
    has_value: False for a policy network: its value is reported as 0.
  """
  def evaluate(variables, states, rng_key):
    del rng_key  # a network is deterministic
    out = apply_fn(variables, game.features(states, encoding))
    if has_value:
      return out
    return out, jnp.zeros(out.shape[0], jnp.float32)

  return evaluate


def flax_network(game: Game, model, encoding: str, *, has_value: bool = True) -> Evaluator:
  """`network` for a Flax module, applied in inference mode (running BatchNorm statistics)."""
  return network(game, lambda v, x: model.apply(v, x, train=False), encoding,
                 has_value=has_value)
