"""A trained network that searches: AlphaGo Zero's player."""

import jax
import numpy as np

from agz_jax import go
from agz_jax.players._base import NetworkPlayer
from agz_jax.players.network import Network, batch, run_search


class SearchPlayer(NetworkPlayer):
  """Chooses its moves by `simulations` of the training search with its network.

  Args:
    network: a Network with a value output.
    simulations: searches per move, at least 1.
    algorithm: 'gumbel' or 'puct' (default: the training run's).
    seed: PRNG seed of the search's noise.
    considered_actions: Gumbel: actions kept at the root by sequential halving
      (at most the number of actions).
    reuse_tree: with the PUCT search, start each search from the subtree of
      the previous search that holds the current position (after our move and
      the opponent's answer), keeping its visits (search.run_search's `reuse`).
      The Gumbel search starts afresh every time.
  """

  def __init__(self, network: Network, *, simulations: int, algorithm: str | None = None,
               seed: int = 0, considered_actions: int, reuse_tree: bool = True):
    super().__init__(network)
    if not network.has_value:
      raise ValueError(f"{network.name} has no value output to search with")
    self.simulations = simulations
    self.algorithm = algorithm or network.config.search.algorithm
    self.considered_actions = considered_actions
    self.reuse_tree = reuse_tree
    self._key = jax.random.PRNGKey(seed)
    self._tree = None  # (mctx tree, GoConfig) of the last PUCT search

  def analyse(self, cfg: go.GoConfig, state: go.GoState, simulations: int | None = None) -> dict:
    """Searches the position.

    Args:
      cfg: the game's config (its planes must be self.planes).
      state: the position.
      simulations: this search's simulations (default: self.simulations), at least 1.

    Returns:
      dict: action (the most visited, or Gumbel's choice); value (for the player to move,
      [-1, 1]); candidates: a list of {action, visits, value, prior, pv}, most visited first.
    """
    simulations = self.simulations if simulations is None else simulations
    if simulations < 1:
      raise ValueError(f"a search needs at least one simulation, got {simulations}")
    self._key, key = jax.random.split(self._key)
    reuse = None
    if self.reuse_tree and self.algorithm == "puct" and self._tree is not None:
      tree, tree_cfg = self._tree
      if tree_cfg == cfg and tree.node_visits.shape[1] <= 2 * simulations + 1:
        reuse = tree
    net = self.network
    settings = net.search_config(algorithm=self.algorithm, simulations=simulations,
                                 considered_actions=min(self.considered_actions, cfg.num_actions))
    out, tree = run_search(net.model, net.encoding, cfg, settings, net.variables, batch(state),
                           key, reuse)
    self._tree = (tree, cfg) if self.algorithm == "puct" else None
    return candidates(jax.device_get(out))


def candidates(out: dict) -> dict:
  """analyse's result from a search's arrays (run_search's dict, on the host, batch of one)."""
  visits, q, prior = out["visits"][0], out["qvalues"][0], out["prior"][0]
  best = int(out["best"][0])
  rank = -visits.astype(np.float64) - 0.5 * (np.arange(len(visits)) == best)
  order = [int(a) for a in np.argsort(rank, kind="stable") if visits[a] > 0]
  cands = [{"action": a, "visits": int(visits[a]), "value": float(q[a]),
            "prior": float(prior[a]), "pv": _principal_variation(out, a)}
           for a in order]
  return {"action": best, "value": float(out["value"][0]), "candidates": cands}


def _principal_variation(tree: dict, action: int, depth: int = 10) -> list[int]:
  """The most visited line of the search tree after `action` (batch element 0)."""
  pv = [action]
  node = int(tree["children_index"][0, 0, action])
  while node >= 0 and len(pv) < depth:
    visits = tree["children_visits"][0, node]
    if visits.max() <= 0:
      break
    nxt = int(np.argmax(visits))
    pv.append(nxt)
    node = int(tree["children_index"][0, node, nxt])
  return pv
