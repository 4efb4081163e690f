"""The random player: any legal move that does not fill one of its own eyes."""

import jax
import jax.numpy as jnp

from agz_jax import go
from agz_jax.players.protocol import Analysis


def random_move(cfg: go.GoConfig, state: go.GoState, key: jax.Array) -> jax.Array:
  """A uniformly random sensible move (go.sensible_moves: legal, and no own eye filled).

  Passes only when no such move is left. Consumes `key`.

  Returns:
    [] int32 action.
  """
  moves = go.sensible_moves(cfg, state)[:-1]
  rank = jnp.floor(jax.random.uniform(key) * jnp.sum(moves))
  choice = jnp.argmax(jnp.cumsum(moves) > rank)
  return jnp.where(jnp.any(moves), choice, cfg.pass_action).astype(jnp.int32)


class RandomPlayer:
  """Plays random_move; any board size."""

  name = "random"
  sizes = None  # every size
  planes = {"history": 8}  # GoConfig fields of the positions it is given
  simulations = 0  # players.Player: it does not search
  timed_search = False

  def __init__(self, seed: int = 0):
    self._key = jax.random.PRNGKey(seed)
    self._move = jax.jit(random_move, static_argnums=0)

  def prepare(self, cfg: go.GoConfig) -> None:
    """Nothing to compile ahead (players.Player.prepare)."""

  def analyse(self, cfg: go.GoConfig, state: go.GoState, simulations: int | None = None, *,
              seconds: float | None = None) -> Analysis:
    """Chooses a move (`simulations` and `seconds` are ignored: nothing searches)."""
    del simulations, seconds
    self._key, key = jax.random.split(self._key)
    action = int(self._move(cfg, state, key))
    return {"action": action, "value": 0.0, "candidates": [
        {"action": action, "visits": 1, "value": 0.0, "prior": 1.0, "pv": [action]}]}
