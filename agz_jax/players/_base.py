"""What the players around a trained network have in common."""

import numpy as np

from agz_jax import go
from agz_jax.players.network import Network


class NetworkPlayer:
  """A player around a Network: its name, sizes, input planes and raw policy.

  Attributes:
    network: the Network.
  """

  simulations = 0        # players.Player: a network alone does not search
  timed_search = False

  def __init__(self, network: Network):
    self.network = network

  @property
  def config(self):
    return self.network.config

  @property
  def name(self) -> str:
    return self.network.name

  @property
  def sizes(self) -> tuple:
    return self.network.sizes

  @property
  def planes(self) -> dict:
    return self.network.planes

  @property
  def encoding(self) -> str:
    return self.network.encoding

  @property
  def has_value(self) -> bool:
    return self.network.has_value

  def prepare(self, cfg) -> None:
    """Nothing to compile ahead (players.Player.prepare): one forward pass a move."""

  def policy(self, cfg: go.GoConfig, state: go.GoState) -> tuple[np.ndarray, float]:
    """The network's prior over legal moves and its value: ([A] numpy, float)."""
    return self.network.policy(cfg, state)
