"""A trained network that searches: AlphaGo Zero's player, for Go or any game of the protocol
(the web page's Dots and Boxes)."""

import dataclasses
import time

import jax

from agz_jax import alphago, go, search
from agz_jax.game import Game
from agz_jax.players._base import NetworkPlayer
from agz_jax.players.alphago_player import rollout_policy
from agz_jax.players.clock import SearchClock
from agz_jax.players.network import Network, batch, candidates, search_positions
from agz_jax.players.protocol import Analysis
from agz_jax.players.timed_search import EvaluatorMaker, TimedSearch

# PUCT trees' nodes when the player is not told: a game's searches all have this size (or
# room for twice the simulations of a move, if that is more).
TREE_NODES = 4096
# A Gumbel search given seconds: at most this many simulations.
MAX_SIMULATIONS = 4096


def _network_evaluator(game: Game, *, model, encoding: str) -> search.Evaluator:
  return search.flax_network(game, model, encoding)


@dataclasses.dataclass(frozen=True)
class Rollouts:
  """Leaves of a Go network's PUCT search valued by rollouts of a fast policy, as AlphaGo's
  (2016) search values them, where the network's value head judges worse.

  Attributes:
    policy: the fast rollout policy's checkpoint (e.g. pretrained/alphago-19x19/rollout_policy).
    mixing: lambda, the rollouts' weight in a leaf's value (1: rollouts alone; below 1 the value
      head's weight is 1 - lambda).
    from_move: the rollouts value the leaves at this move number of the game or later; the
      value head alone before it (0: every leaf).
    per_leaf: rollouts from each leaf, their outcomes averaged.
  """

  policy: str
  mixing: float = 1.0
  from_move: int = 0
  per_leaf: int = 1

  @property
  def suffix(self) -> str:
    """What a player's name says of them: '-rollouts1', '-rollouts1-lambda0.5-from150'."""
    return (f"-rollouts{self.per_leaf}" + (f"-lambda{self.mixing:g}" if self.mixing < 1 else "")
            + (f"-from{self.from_move}" if self.from_move else ""))


def _rollout_evaluator(game: Game, *, model, encoding: str, leaf: alphago.LeafSettings,
                       rollout_model, rollout_groups) -> search.Evaluator:
  """The network's prior, its value head and rollouts mixed as `leaf` says (alphago.evaluator
  with the dual network as prior and value: one forward pass a leaf)."""
  return alphago.evaluator(game.cfg, leaf, rollout_model=rollout_model,
                           rollout_groups=rollout_groups, prior_model=alphago.DualPolicy(model),
                           prior_encoding=encoding, value_model="prior")


class SearchPlayer(NetworkPlayer):
  """Chooses its moves by `simulations` of the training search with its network.

  Args:
    network: a Network with a value output, of any game (Network.game).
    simulations: searches per move, at least 1.
    algorithm: 'gumbel' or 'puct' (default: the training run's).
    seed: PRNG seed of the search's noise.
    considered_actions: Gumbel: actions kept at the root by sequential halving
      (at most the number of actions).
    reuse_tree: with the PUCT search, start each search from the subtree of
      the previous search that holds the current position (after our move and
      the opponent's answer), keeping its visits. The Gumbel search starts
      afresh every time.
    tree_nodes: PUCT: the size of every tree of a game (default: TREE_NODES, or
      2 * simulations + 1 if more).
    trees: PUCT: trees of the position searched at once, their root visits and values summed
      (root parallelism): 0 (the default) one per device, so that every device (on a CPU
      split into devices, every core) searches; a device's trees are one batch.
    leaves: PUCT: leaves of each tree evaluated together under a virtual loss
      (search.leaf_batch); 1, the default, suits a CPU, an accelerator wants 8 or more.
    max_simulations: Gumbel: the most simulations a search given seconds gets.
    q_transform: PUCT: how Q enters a child's score, 'siblings' or 'bounded'
      (search.SearchConfig.q_transform; default: the training run's).
    search_settings: PUCT: other search.SearchConfig fields for play, e.g. first_play,
      fpu_reduction, pb_c_init (default: the training run's).
    rollouts: PUCT on Go: leaves valued by rollouts of a fast policy too (Rollouts); None (the
      default): by the value head alone.
    stop_when_decided: PUCT: a search given seconds stops once its most visited move can no
      longer be overtaken in the time left (players.timed_search.decided).

  The PUCT search grows its tree in steps (players.timed_search): under a clock it searches
  until its time is up (`timed_search`), compiled once. Gumbel search plans its root visits
  for a known count: given seconds, it searches the power of two of simulations (from 8 to
  `max_simulations`) that fits them at the time per simulation its clock (players.SearchClock)
  learned on earlier searches; before its clock knows, it first times searches of the
  position at the count asked for (their results dropped) until it does.
  """

  def __init__(self, network: Network, *, simulations: int, algorithm: str | None = None,
               seed: int = 0, considered_actions: int, reuse_tree: bool = True,
               tree_nodes: int | None = None, trees: int = 0, leaves: int = 1,
               max_simulations: int = MAX_SIMULATIONS, q_transform: str | None = None,
               search_settings: dict | None = None, rollouts: Rollouts | None = None,
               stop_when_decided: bool = False):
    super().__init__(network)
    if not network.has_value:
      raise ValueError(f"{network.name} has no value output to search with")
    self.simulations, self.max_simulations = simulations, max_simulations
    self.algorithm = algorithm or network.config.search.algorithm
    self.considered_actions = considered_actions
    self.reuse_tree = reuse_tree
    self.clock = SearchClock()
    self._key = jax.random.PRNGKey(seed)
    self._timed = None
    self.trees = 1
    if q_transform is not None and self.algorithm != "puct":
      raise ValueError(f"a Q transform ({q_transform!r}) is a setting of the PUCT search, not "
                       f"of {self.algorithm!r}: add --algorithm puct")
    if search_settings and self.algorithm != "puct":
      raise ValueError(f"{', '.join(sorted(search_settings))}: settings of the PUCT search, not "
                       f"of {self.algorithm!r}: add --algorithm puct")
    if trees > 1 and self.algorithm != "puct":
      raise ValueError(f"{trees} trees: only the PUCT search grows several trees of a position, "
                       f"not {self.algorithm!r}")
    if leaves != 1 and self.algorithm != "puct":
      raise ValueError(f"{leaves} leaves at a time: a setting of the PUCT search, not of "
                       f"{self.algorithm!r} (Gumbel search batches its root's candidates); add "
                       f"--algorithm puct")
    if stop_when_decided and self.algorithm != "puct":
      raise ValueError(f"stopping a search once its move is decided: a setting of the PUCT "
                       f"search under a clock, not of {self.algorithm!r}; add --algorithm puct")
    self.leaves = leaves
    self.rollouts = rollouts
    if rollouts is not None and self.algorithm != "puct":
      raise ValueError(f"rollouts at the leaves: a setting of the PUCT search, not of "
                       f"{self.algorithm!r}; add --algorithm puct")
    if rollouts is not None and network.game.module is not go:
      raise ValueError(f"rollouts at the leaves need a Go network, not one of "
                       f"{network.config.game.name}: drop the rollout policy")
    if self.algorithm == "puct":
      nodes = tree_nodes or max(TREE_NODES, 2 * simulations + 1)
      settings = network.search_config(algorithm="puct", simulations=nodes - 1,
                                       considered_actions=1, q_transform=q_transform,
                                       **(search_settings or {}))
      if rollouts is None:
        make_evaluator = EvaluatorMaker.of(_network_evaluator, model=network.model,
                                           encoding=network.encoding)
        variables = network.variables
      else:
        leaf = alphago.LeafSettings(prior="sl", beta=1.0, mixing=rollouts.mixing,
                                    rollouts_per_leaf=rollouts.per_leaf,
                                    lambda_from_move=rollouts.from_move)
        rollout_model, groups, rollout_variables = rollout_policy(rollouts.policy)
        make_evaluator = EvaluatorMaker.of(_rollout_evaluator, model=network.model,
                                           encoding=network.encoding, leaf=leaf,
                                           rollout_model=rollout_model, rollout_groups=groups)
        variables = {"prior": network.variables, "rollout": rollout_variables}
      self._timed = TimedSearch(make_evaluator, settings, variables, tree_nodes=nodes,
                                trees=trees, reuse_tree=reuse_tree, seed=seed, leaves=leaves,
                                stop_when_decided=stop_when_decided)
      self.trees = self._timed.trees

  @property
  def name(self) -> str:
    return (self.network.name + (self.rollouts.suffix if self.rollouts else "")
            + (f"-trees{self.trees}" if self.trees > 1 else "")
            + (f"-leaves{self.leaves}" if self.leaves > 1 else ""))

  @property
  def game(self) -> Game:
    """The network's game, with the config it was trained on."""
    return self.network.game

  @property
  def seconds_per_simulation(self) -> float | None:
    """PUCT: of the last warm step of a search (every tree's simulation at once); Gumbel: of
    the last search its clock learned from."""
    if self._timed is not None:
      return self._timed.seconds_per_simulation
    return self.clock.seconds_per_simulation

  def simulations_for(self, seconds: float | None) -> int:
    """Gumbel: the simulations a search of `seconds` gets (self.simulations without seconds
    or before the clock knows a simulation's time)."""
    if seconds is None or self.clock.seconds_per_simulation is None:
      return self.simulations
    return self.clock.fitting(seconds, most=self.max_simulations)

  def prepare(self, cfg) -> None:
    """PUCT: compiles the search for `cfg`'s games, so that no move's clock pays for it
    (analyse calls it first). Gumbel compiles a search for each count, at its first search."""
    if self._timed is not None:
      self._timed.prepare(Game(self.game.module, cfg))

  @property
  def timed_search(self) -> bool:
    """Whether analyse(..., seconds=) searches until its time is up (PUCT)."""
    return self._timed is not None

  def analyse(self, cfg, state, simulations: int | None = None, *,
              seconds: float | None = None) -> Analysis:
    """Searches the position.

    Args:
      cfg: the game's config (Go: a GoConfig with the network's planes; another game: its
        config, self.game.cfg).
      state: the position.
      simulations: this search's simulations (default: self.simulations), at least 1.
      seconds: PUCT: search until this much time is spent instead; Gumbel: the simulations
        that fit (simulations_for), `simulations` while the clock learns.

    Returns:
      players.Analysis: action (the most visited, or Gumbel's choice); value (for the player
      to move, [-1, 1]); candidates, most visited first.
    """
    game = Game(self.game.module, cfg)
    simulations = self.simulations if simulations is None else simulations
    if self._timed is not None:
      out = self._timed.analyse(game, state, None if seconds is not None else simulations,
                                seconds)
      if self._timed.settings.value_scale:
        out["value_scale"] = self._timed.settings.value_scale_at(int(state.move_count))
      return out
    if simulations < 1:
      raise ValueError(f"a search needs at least one simulation, got {simulations}")
    if seconds is not None:
      for _ in range(SearchClock.WARM_AFTER + 1):  # the clock learns before the move's search
        if self.clock.seconds_per_simulation is not None:
          break
        self._search(game, state, simulations)
      simulations = self.simulations_for(seconds)
    return self._search(game, state, simulations)

  def _search(self, game: Game, state, simulations: int) -> Analysis:
    """One Gumbel search of `simulations`, timed by the clock."""
    self._key, key = jax.random.split(self._key)
    net = self.network
    settings = net.search_config(algorithm=self.algorithm, simulations=simulations,
                                 considered_actions=min(self.considered_actions, game.num_actions))
    started = time.perf_counter()
    out = search_positions(net.model, net.encoding, game, settings, net.variables, batch(state),
                           key)
    out = candidates(jax.device_get(out))
    self.clock.record(simulations, time.perf_counter() - started)
    return out
