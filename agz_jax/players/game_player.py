"""A trained network that searches any game of the protocol (Dots and Boxes), one position at
a time, under a time budget: the web page's engine for games without GTP. Its search is the
Go players' (`search_positions`), its clock the GTP engine's (`SearchClock`)."""

import time

import jax
import jax.numpy as jnp

from agz_jax.game import Game
from agz_jax.players.move_policy import SearchClock
from agz_jax.players.network import Network, candidates, search_positions


class GameSearchPlayer:
  """Chooses moves of `game` by the training run's search with its network.

  A move under a time budget searches a power of two of simulations (from 8 to
  `max_simulations`) that fits the budget at the time per simulation measured
  on earlier moves, by the GTP engine's clock (players.SearchClock: each count is
  compiled once; its first searches, which may compile, are not timed).

  Args:
    network: a Network with a value output, trained on `game`.
    game: the game it plays.
    simulations: per move without a time budget.
    seed: PRNG seed of the search's noise.
  """

  def __init__(self, network: Network, game: Game, *, simulations: int = 64, seed: int = 0,
               max_simulations: int = 1024):
    if not network.has_value:
      raise ValueError(f"{network.name} has no value output to search with")
    self.network, self.game = network, game
    self.simulations, self.max_simulations = simulations, max_simulations
    self.name = network.name
    self.clock = SearchClock()
    self._key = jax.random.PRNGKey(seed)

  @property
  def seconds_per_simulation(self) -> float | None:
    return self.clock.seconds_per_simulation

  def simulations_for(self, seconds: float | None) -> int:
    """The simulations a search of `seconds` gets (self.simulations before any timing)."""
    if seconds is None or self.clock.seconds_per_simulation is None:
      return self.simulations
    return self.clock.fitting(seconds, most=self.max_simulations)

  def analyse(self, state, seconds: float | None = None) -> dict:
    """Searches one position: {action, value (for the player to move), candidates: [{action,
    visits, value, prior, pv}], simulations, seconds}."""
    simulations = self.simulations_for(seconds)
    net = self.network
    settings = net.search_config(algorithm=net.config.search.algorithm, simulations=simulations,
                                 considered_actions=min(16, self.game.num_actions))
    self._key, key = jax.random.split(self._key)
    started = time.perf_counter()
    out, _ = search_positions(net.model, net.encoding, self.game, settings, net.variables,
                              jax.tree.map(lambda x: jnp.asarray(x)[None], state), key)
    out = jax.device_get(out)
    spent = time.perf_counter() - started
    self.clock.record(simulations, spent)
    return {**candidates(out), "simulations": simulations, "seconds": spent}
