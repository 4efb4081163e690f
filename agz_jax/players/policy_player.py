"""A trained network that plays its policy without search."""

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import go, search
from agz_jax.players._base import NetworkPlayer
from agz_jax.players.move_policy import sensible
from agz_jax.players.network import Network
from agz_jax.players.protocol import Analysis


class PolicyPlayer(NetworkPlayer):
  """Plays the network's most likely legal move, or draws the first moves from its policy.

  An SL policy network (no value output) plays over the sensible moves only (no
  filling of its own eyes) and passes only when none is left: AlphaGo's policy
  network had no pass move and, without a value, cannot tell a finished game
  (move_policy.choose_move also passes when the opponent passed and the score
  is in our favour). Its value is reported as 0.

  Args:
    network: a Network.
    seed: PRNG seed of the sampled moves.
    sample_moves: the first `sample_moves` moves of a game are drawn from the
      policy instead of taking its most likely move, so that matches between
      deterministic programs are not one game repeated.
  """

  def __init__(self, network: Network, *, seed: int = 0, sample_moves: int = 0):
    super().__init__(network)
    self.sample_moves = sample_moves
    self._key = jax.random.PRNGKey(seed)

  def analyse(self, cfg: go.GoConfig, state: go.GoState, simulations: int | None = None, *,
              seconds: float | None = None) -> Analysis:
    """Chooses a move; `simulations` and `seconds` are ignored (nothing searches: the
    candidates come by prior, with 0 visits)."""
    del simulations, seconds
    prior, value = self.policy(cfg, state)
    order = np.argsort(-prior)
    cands = [{"action": int(a), "visits": 0, "value": value, "prior": float(prior[a]),
              "pv": [int(a)]} for a in order[:10] if prior[a] > 0]
    playable = prior
    if not self.has_value:
      playable = prior * sensible(cfg, state)
      if playable.sum() <= 0:
        return {"action": cfg.pass_action, "value": value, "candidates": cands}
    action = int(np.argmax(playable))
    if int(state.move_count) < self.sample_moves:
      self._key, key = jax.random.split(self._key)
      action = int(search.sample_action(key, jnp.asarray(playable / playable.sum())))
    return {"action": action, "value": value, "candidates": cands}
