"""Input planes for the networks."""

import jax.numpy as jnp

from agz_jax.go.config import GoConfig
from agz_jax.go.state import BLACK, GoState


def features(cfg: GoConfig, state: GoState) -> jnp.ndarray:
  """AlphaGo Zero input planes, from the point of view of the player to move.

  Planes 0 .. T-1 hold the player's stones at moves t, t-1, ..., t-T+1; planes
  T .. 2T-1 the opponent's stones at the same moves; plane 2T is all ones when
  black is to play and zeros when white is. Boards before the start of the game
  are empty. With T = 8 this is the paper's 17 planes.

  Returns:
    [N, N, 2T + 1] float32.
  """
  n = cfg.size
  boards = jnp.concatenate([state.board[None], state.previous_boards], axis=0)  # [T, P]
  me = state.to_play
  own = boards == me
  opp = boards == -me
  colour = jnp.broadcast_to(me == BLACK, (1, n * n))
  planes = jnp.concatenate([own, opp, colour], axis=0).astype(jnp.float32)      # [2T+1, P]
  return planes.T.reshape(n, n, 2 * cfg.history + 1)
