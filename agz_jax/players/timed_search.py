"""A player's PUCT search under a clock: trees of one size grown in steps (search.anytime)
until the time is up, on every device at once (one program, each device on its own trees,
no communication between them), for any game of the protocol (agz_jax.game).

Both search players use it: the AlphaGo player (rollouts at the leaves) and AlphaGo
Zero's PUCT player (the network's value, on Go or any game). A game's config (a board size,
a komi) compiles two programs, once for all the devices, before any move's clock starts
(`prepare`); every move, time budget and simulation count then runs them.
"""

import dataclasses
import functools
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jax.sharding import Mesh, NamedSharding, PartitionSpec

from agz_jax import parallel, search
from agz_jax.game import Game
from agz_jax.players.network import candidates, search_arrays

# Under a time budget the search grows in steps of at most this many seconds, so that a step
# sized from an earlier one's time overshoots the budget by little.
STEP_SECONDS = 0.25


# Every device runs the search on its own trees, with no communication (parallel.per_shard:
# the trees are its games); the first tree's index keys the shard's randomness.
_TREES = PartitionSpec(parallel.DATA)


@functools.partial(jax.jit, static_argnums=(0, 1, 2, 3), static_argnames="num_nodes")
def _start(make_evaluator, game, settings, mesh, variables, states, key, reuse, *, num_nodes):
  def start(variables, roots, key, *, first_game):
    states, reuse = roots
    tree = search.anytime.start(game, make_evaluator(game), variables, states,
                                jax.random.fold_in(key, first_game), settings,
                                num_nodes=num_nodes, reuse=reuse)
    return tree, search.anytime.nodes_used(tree)
  return parallel.per_shard(mesh, start, games_arg=1, out_specs=_TREES)(
      variables, (states, reuse), key)


@functools.partial(jax.jit, static_argnums=(0, 1, 2, 3, 4), donate_argnums=6)
def _grow(make_evaluator, game, settings, mesh, leaves, variables, tree, key, simulations):
  def grow(variables, tree, key, simulations, *, first_game):
    tree = search.anytime.grow(game, make_evaluator(game), variables, tree,
                               jax.random.fold_in(key, first_game), settings, simulations,
                               leaves=leaves)
    return tree, search.anytime.nodes_used(tree)
  return parallel.per_shard(mesh, grow, games_arg=1, out_specs=_TREES)(
      variables, tree, key, simulations)


@functools.partial(jax.jit, static_argnums=(0, 1))
def _arrays(settings, mesh, tree):
  def arrays(tree, *, first_game):
    del first_game
    return search_arrays(settings, search.anytime.policy_output(tree))
  return parallel.per_shard(mesh, arrays, games_arg=0, out_specs=_TREES)(tree)


@jax.jit
def _root_visits(children_visits):
  """[trees, A]: the visits of each root child of each tree (mctx.Tree.children_visits)."""
  return children_visits[:, 0]


def decided(root_visits, visits_left: float) -> bool:
  """Whether the most visited move of a search (visits summed over its trees) keeps its
  place whatever the next `visits_left` visits go to: it leads the next move by more.

  Args:
    root_visits: [trees, A] visits of the root's children (or [A] for one tree).
    visits_left: the most visits the search can still add, over all its trees.
  """
  visits = np.sort(np.asarray(root_visits).reshape(-1, np.shape(root_visits)[-1]).sum(0))
  return bool(visits[-1] - (visits[-2] if visits.size > 1 else 0) > visits_left)


@dataclasses.dataclass(frozen=True)
class EvaluatorMaker:
  """game -> leaf evaluator: `function(game, **settings)`.

  Two makers of one function and equal settings are equal: players built alike (a new player
  for each match, each test) share the compiled programs, which they key.
  """
  function: Callable[..., search.Evaluator]
  settings: tuple[tuple[str, object], ...]  # (name, value) pairs, each value hashable

  @classmethod
  def of(cls, function: Callable[..., search.Evaluator], **settings) -> "EvaluatorMaker":
    return cls(function, tuple(sorted(settings.items())))

  def __call__(self, game: Game) -> search.Evaluator:
    return self.function(game, **dict(self.settings))


def _fewest_used(used: jax.Array, trees_per_device: int) -> int:
  """The nodes used of the device whose trees have the most room (a device's trees grow in
  step, from the most used one)."""
  return int(np.min(np.max(np.asarray(used).reshape(-1, trees_per_device), axis=1)))


def merge_trees(arrays: list[dict]) -> dict:
  """One search's arrays (a batch of one, as search_positions') from several trees of one position.

  Args:
    arrays: search_arrays of trees, on the host ([trees, ...] each).

  Returns:
    visits summed over the trees, Q values and the root value averaged with the visits as
    weights, the most visited move, the first tree's prior and children (its principal
    variations).
  """
  cat = {k: np.concatenate([a[k] for a in arrays]) for k in arrays[0]}
  visits = cat["visits"].astype(np.float64)                                    # [T, A]
  total = visits.sum(0)
  qvalues = (visits * cat["qvalues"]).sum(0) / np.maximum(total, 1)
  weights = visits.sum(1) + 1                                                  # root visits
  value = (weights * cat["value"]).sum() / weights.sum()
  return dict(best=np.argmax(total)[None], visits=total.astype(np.int64)[None],
              qvalues=qvalues[None], value=np.asarray([value]), prior=cat["prior"][:1],
              children_index=cat["children_index"][:1], children_visits=cat["children_visits"][:1])


class TimedSearch:
  """Trees of a position searched in steps until a time or a count of simulations is spent.

  Args:
    make_evaluator: game -> the leaf evaluator (search.Evaluator), an EvaluatorMaker: equal
      makers share the compiled programs, which they key.
    settings: the search's settings (algorithm 'alphago' or 'puct').
    variables: the evaluator's variables (copied to each device that searches).
    tree_nodes: nodes of every tree, the same for every search.
    leaves: leaves of each tree evaluated together (search.leaf_batch: selected under a
      virtual loss), so that a device's network sees trees x leaves positions a call; 1
      (mctx's search) suits a CPU, an accelerator wants more.
    trees: trees searched at once (0: one per device); a device's trees are one batch.
    reuse_tree: start each search from the subtrees of the previous one that hold the
      position reached.
    seed: PRNG seed of the search and its evaluator.
    stop_when_decided: a search under a time budget stops as soon as its most visited move
      can no longer be overtaken (`decided`): the move is the one the whole budget would
      have chosen, sooner; what is not spent is not carried to later moves, and the next
      move's search keeps a smaller tree.

  Raises:
    ValueError: trees that do not split evenly over the devices.
  """

  def __init__(self, make_evaluator, settings: search.SearchConfig, variables, *,
               tree_nodes: int, trees: int, reuse_tree: bool, seed: int, leaves: int = 1,
               stop_when_decided: bool = False):
    if not isinstance(leaves, int) or leaves < 1:
      raise ValueError(f"leaves: a search evaluates at least one leaf of a tree at a time, "
                       f"got {leaves!r}")
    devices = jax.local_devices()
    self.trees = trees or len(devices)
    used_devices = min(self.trees, len(devices))
    if self.trees % used_devices:
      raise ValueError(f"{self.trees} trees do not split evenly over {used_devices} devices")
    self.tree_nodes = tree_nodes
    self.leaves = leaves
    self.reuse_tree = reuse_tree
    self.stop_when_decided = stop_when_decided
    self.seconds_per_simulation = None  # of the last warm step of a search
    self._make_evaluator = make_evaluator
    self._settings = settings
    self._trees_per_device = self.trees // used_devices
    # One program for all the devices (each runs it on its own trees): compiled once. The
    # variables are copied to every device once, not at every step, and every tree the
    # programs see (empty or searched) is split over the devices alike, so that no new
    # placement compiles them again.
    self._mesh, self._variables, self._tree_sharding = None, variables, None
    if used_devices > 1:
      self._mesh = Mesh(np.asarray(devices[:used_devices]), (parallel.DATA,))
      self._variables = jax.device_put(variables, NamedSharding(self._mesh, PartitionSpec()))
      self._tree_sharding = NamedSharding(self._mesh, _TREES)
    self._key = jax.random.PRNGKey(seed)
    self._searched = None  # (trees, Game) of the last search
    self._blank = {}  # Game -> trees of the search's shape with no node in them
    self._compiled = set()  # Games whose programs have run once (prepare)

  @property
  def settings(self) -> search.SearchConfig:
    """The search's settings (one tree's simulations: its nodes but the root)."""
    return self._settings

  def analyse(self, game: Game, state, simulations: int | None = None,
              seconds: float | None = None) -> dict:
    """Searches the position: `simulations` more simulations of each tree, or as many as fit in
    `seconds` (at least one), in steps of at most STEP_SECONDS sized from the time the last
    warm steps took; fewer when the trees are full, or once the move is decided
    (stop_when_decided). The root's visits and values are summed over the trees
    (merge_trees). `game`: the game and its config (a Game, hashable); `state` a position of
    it. The result as SearchPlayer.analyse's.
    """
    if seconds is None and (simulations is None or simulations < 1):
      raise ValueError(f"a search needs at least one simulation, got {simulations}")
    if seconds is not None and not seconds > 0:
      raise ValueError(f"a search needs a positive time, got {seconds} seconds")
    self.prepare(game)
    start_time = time.perf_counter()
    trees, used = self._start(game, state)
    if seconds is None:
      trees, used = self._grow(game, trees, min(simulations, self.tree_nodes - used), used)
    else:
      deadline = start_time + seconds
      grown = 0
      while used < self.tree_nodes:
        step = 1
        if self.seconds_per_simulation is not None:
          fits = int((deadline - time.perf_counter()) / self.seconds_per_simulation)
          if fits < 1 and grown:
            break
          step = max(1, min(fits, int(STEP_SECONDS / self.seconds_per_simulation)))
        step = min(-(-step // self.leaves) * self.leaves, self.tree_nodes - used)  # whole steps
        trees, used = self._grow(game, trees, step, used)
        grown += step
        left = deadline - time.perf_counter()
        if left <= 0:
          break
        if (self.stop_when_decided and self.seconds_per_simulation is not None
            and decided(jax.device_get(_root_visits(trees.children_visits)),
                        self.trees * min(left / self.seconds_per_simulation,
                                         self.tree_nodes - used))):
          break
    self._searched = (trees, game)
    return candidates(merge_trees([jax.device_get(_arrays(self._settings, self._mesh, trees))]))

  def prepare(self, game: Game) -> None:
    """Compiles the search for `game` on every device (by a search of its first position),
    so that no move's time goes to compiling; analyse calls it first."""
    if game in self._blank:
      return
    # Trees of the right shape with no node in them: `start` finds nothing to keep there, so
    # every search of the game, first or not, runs the one program compiled for kept trees.
    states = self._roots(game.init())
    shapes = jax.eval_shape(
        lambda v, s, k: search.anytime.start(game, self._make_evaluator(game), v, s, k,
                                             self._settings, num_nodes=self.tree_nodes),
        self._variables, states, self._key)
    self._blank[game] = jax.device_put(
        jax.tree.map(lambda x: jnp.zeros(x.shape, x.dtype), shapes), self._tree_sharding)
    trees, used = self._start(game, game.init(), reuse=False)
    self._grow(game, trees, 1, used)
    self._compiled.add(game)

  def _roots(self, state):
    """The position, once per tree."""
    return jax.tree.map(lambda x: jnp.repeat(jnp.asarray(x)[None], self.trees, 0), state)

  def _start(self, game: Game, state, reuse: bool = True):
    """(the trees of the position, their fewest nodes used)."""
    kept = self._blank[game]
    if reuse and self.reuse_tree and self._searched is not None and self._searched[1] == game:
      kept = self._searched[0]
    self._searched = None  # grown (and given up) by the caller
    self._key, key = jax.random.split(self._key)
    trees, used = _start(self._make_evaluator, game, self._settings, self._mesh, self._variables,
                         self._roots(state), key, kept, num_nodes=self.tree_nodes)
    return trees, _fewest_used(used, self._trees_per_device)

  def _grow(self, game: Game, trees, simulations: int, used: int):
    """(trees with `simulations` more simulations each, fewest nodes used by a device's trees),
    timed when already compiled. The devices search at the same time."""
    began = time.perf_counter()
    self._key, key = jax.random.split(self._key)
    trees, used_now = _grow(self._make_evaluator, game, self._settings, self._mesh,
                            self.leaves, self._variables, trees, key, np.int32(simulations))
    used_now = _fewest_used(used_now, self._trees_per_device)  # waits for the search
    if game in self._compiled and used_now > used:
      self.seconds_per_simulation = (time.perf_counter() - began) / (used_now - used)
    return trees, used_now
