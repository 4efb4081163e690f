"""AlphaGo's (2016) player: its search with the SL policy's prior and rollouts at the leaves.

A player is described by a bundle: a folder with `alphago.json`, e.g.

  {"prior": "sl_policy", "rollout": "rollout_policy", "lambda": 1.0, "beta": 0.67,
   "rollouts_per_leaf": 8, "tree_nodes": 2048}

where "prior" and "rollout" name checkpoints (training workdirs or checkpoint
folders; relative to the bundle) of an SL policy network and of a fast rollout
policy; "prior": "uniform" searches without a policy network; "tree_nodes" is the
size of the search tree, the same for every move of a game (one compiled search
serves them all); "trees" searches that many trees of the position at once (root
parallelism), spread over the devices (0: one per device; on a CPU, run the engine
with one device per core). On a command line the same keys can be written as a spec:
`alphago:prior=DIR,rollout=DIR,lambda=1`.
"""

import functools
import json
import os
import time

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import alphago, go, nets, paths, search
from agz_jax.game import Game
from agz_jax.players.network import batch, search_arrays
from agz_jax.players.search_player import candidates

BUNDLE_FILE = "alphago.json"
SPEC_PREFIX = "alphago:"
# Bundle keys and their defaults (lambda is `LeafSettings.mixing`).
DEFAULTS = {"prior": "uniform", "lambda": 1.0, "beta": 0.67, "rollouts_per_leaf": 8,
            "max_rollout_moves": 500, "c_puct": 5.0, "tree_nodes": 2048, "trees": 0}
# Under a time budget the search grows in steps of at most this many seconds, so that a step
# sized from an earlier one's time overshoots the budget by little.
STEP_SECONDS = 0.25


def is_bundle(spec: str) -> bool:
  return spec.startswith(SPEC_PREFIX) or (paths.path(spec) / BUNDLE_FILE).exists()


def read_bundle(spec: str) -> dict:
  """The settings of a bundle folder or an `alphago:key=value,...` spec, paths made absolute.

  Raises:
    ValueError: an unknown key, a value of the wrong kind, no rollout policy.
    FileNotFoundError: the bundle file is missing.
  """
  if spec.startswith(SPEC_PREFIX):
    base, settings = os.getcwd(), {}
    for item in filter(None, spec[len(SPEC_PREFIX):].split(",")):
      key, sep, value = item.partition("=")
      if not sep:
        raise ValueError(f"alphago spec: {item!r} is not key=value (keys: rollout, "
                         f"{', '.join(DEFAULTS)})")
      settings[key.strip()] = value.strip()
  else:
    base = spec
    try:
      settings = json.loads((paths.path(spec) / BUNDLE_FILE).read_text())
    except json.JSONDecodeError as e:
      raise ValueError(f"{spec}/{BUNDLE_FILE} is not valid JSON ({e})") from e
  unknown = sorted(set(settings) - set(DEFAULTS) - {"rollout"})
  if unknown:
    raise ValueError(f"alphago player: unknown setting {unknown[0]!r}; the settings are "
                     f"rollout, {', '.join(DEFAULTS)}")
  if "rollout" not in settings:
    raise ValueError("alphago player: no rollout policy given (rollout=DIR)")
  out = dict(DEFAULTS, **settings)
  for key in ("lambda", "beta", "c_puct"):
    out[key] = _number(key, out[key], float)
  for key in ("rollouts_per_leaf", "max_rollout_moves", "tree_nodes", "trees"):
    out[key] = _number(key, out[key], int)
  if out["trees"] < 0:
    raise ValueError(f"alphago player: trees must be 0 (one per device) or more, got {out['trees']}")
  if out["tree_nodes"] < 2:
    raise ValueError(f"alphago player: tree_nodes must be at least 2, got {out['tree_nodes']}")
  for key in ("rollout", "prior"):
    if key == "rollout" or out[key] != "uniform":
      out[key] = out[key] if paths.is_remote(out[key]) or os.path.isabs(out[key]) else (
          os.path.join(base, out[key]))
  return out


def _number(key, value, kind):
  try:
    return kind(value)
  except (TypeError, ValueError):
    raise ValueError(f"alphago player: {key} must be a{'n integer' if kind is int else ' number'}, "
                     f"got {value!r}") from None


# The jitted calls below take (cfg, search settings, leaf settings, rollout model, its feature
# groups, prior model, prior encoding) as static arguments: what _evaluator builds from.
_STATIC = tuple(range(7))


def _evaluator(cfg, leaf, rollout_model, groups, prior_model, prior_encoding):
  return alphago.evaluator(cfg, leaf, rollout_model=rollout_model, rollout_groups=groups,
                           prior_model=prior_model, prior_encoding=prior_encoding)


@functools.partial(jax.jit, static_argnums=_STATIC, static_argnames="num_nodes")
def _start(cfg, settings, leaf, rollout_model, groups, prior_model, prior_encoding, variables,
           states, key, reuse=None, *, num_nodes):
  evaluate = _evaluator(cfg, leaf, rollout_model, groups, prior_model, prior_encoding)
  return search.anytime.start(Game(go, cfg), evaluate, variables, states, key, settings,
                              num_nodes=num_nodes, reuse=reuse)


@functools.partial(jax.jit, static_argnums=_STATIC, donate_argnums=8)
def _grow(cfg, settings, leaf, rollout_model, groups, prior_model, prior_encoding, variables,
          tree, key, simulations):
  evaluate = _evaluator(cfg, leaf, rollout_model, groups, prior_model, prior_encoding)
  return search.anytime.grow(Game(go, cfg), evaluate, variables, tree, key, settings, simulations)


@functools.partial(jax.jit, static_argnums=0)
def _arrays(settings, tree):
  return search_arrays(settings, search.anytime.policy_output(tree))


def _fewest_used(trees: list) -> int:
  """The nodes used of the device whose trees have the most room (their batch grows in step)."""
  return min(int(np.max(search.anytime.nodes_used(t))) for t in trees)


def merge_trees(arrays: list[dict]) -> dict:
  """One search's arrays (a batch of one, as run_search's) from several trees' of one position.

  Args:
    arrays: search_arrays of each device's trees, on the host ([trees of the device, ...]).

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


class AlphaGoPlayer:
  """Searches with AlphaGo's PUCT, its leaves valued by rollouts of the fast policy.

  Args:
    settings: read_bundle's output.
    simulations: per move.
    seed: PRNG seed of the rollouts.
    reuse_tree: start each search from the subtree of the position reached.
  """

  planes = {"history": 8}  # the 48 planes and the patterns read the last boards
  has_value = True  # the rollouts' mean outcome
  timed_search = True  # analyse(..., seconds=) searches until its time is up

  def __init__(self, settings: dict, *, simulations: int, seed: int = 0, reuse_tree: bool = True):
    from agz_jax import checkpoint  # pylint: disable=import-outside-toplevel
    from agz_jax.training import rollout_policy  # pylint: disable=import-outside-toplevel
    self.simulations = simulations
    self.reuse_tree = reuse_tree
    self.leaf = alphago.LeafSettings(
        prior="uniform" if settings["prior"] == "uniform" else "sl", beta=settings["beta"],
        mixing=settings["lambda"], rollouts_per_leaf=settings["rollouts_per_leaf"],
        max_rollout_moves=settings["max_rollout_moves"])
    rollout_config, rollout_vars = checkpoint.load_network(settings["rollout"])
    if rollout_config.model.kind != "fast_policy":
      raise ValueError(f"{settings['rollout']} holds a {rollout_config.model.kind} network, "
                       f"not a fast rollout policy")
    self.rollout_model = nets.make(rollout_config.model)
    self.groups = rollout_policy.groups_of(rollout_config.model)
    self.variables = {"rollout": {
        "params": jax.tree.map(jnp.asarray, rollout_vars["params"]),
        "tables": go.patterns.make_tables(rollout_vars["patterns"])}}
    self.prior = None
    self.sizes = None  # patterns fit every board
    name = "uniform"
    if self.leaf.prior == "sl":
      from agz_jax.players.network import load_network  # pylint: disable=import-outside-toplevel
      self.prior = load_network(settings["prior"])
      if self.prior.has_value:
        raise ValueError(f"{settings['prior']} is not an SL policy network")
      self.variables["prior"] = self.prior.variables
      self.sizes = self.prior.sizes
      name = self.prior.name.replace("agz_jax-", "")
    self.name = f"agz_jax-alphago-{name}-rollouts{self.leaf.rollouts_per_leaf}"
    self.settings = search.SearchConfig(
        algorithm="alphago", num_simulations=settings["tree_nodes"] - 1, max_num_considered_actions=1,
        gumbel_scale=0.0, dirichlet_alpha=None, dirichlet_fraction=0.0, pb_c_init=0.0,
        pb_c_base=1.0, c_puct=settings["c_puct"])
    self.tree_nodes = settings["tree_nodes"]
    devices = jax.local_devices()
    self.trees = settings["trees"] or len(devices)
    used_devices = min(self.trees, len(devices))
    if self.trees % used_devices:
      raise ValueError(f"alphago player: {self.trees} trees do not split evenly over "
                       f"{used_devices} devices")
    self._devices = devices[:used_devices]
    if self.trees > 1:
      self.name += f"-trees{self.trees}"
    self._trees_per_device = self.trees // used_devices
    self._variables = [jax.device_put(self.variables, d) for d in self._devices]
    self._models = (self.leaf, self.rollout_model, self.groups, self.prior.model if self.prior
                    else None, self.prior.encoding if self.prior else "alphago48")
    self._key = jax.random.PRNGKey(seed)
    self._searched = None  # ([trees of each device], GoConfig) of the last search
    self._blank = {}  # GoConfig -> [trees of each device, of the search's shape, no node in them]
    self._compiled = set()  # GoConfigs whose search programs have run once (prepare)
    self.seconds_per_simulation = None  # of the last warm step of a search

  def analyse(self, cfg: go.GoConfig, state: go.GoState, simulations: int | None = None, *,
              seconds: float | None = None) -> dict:
    """Searches the position; the result as SearchPlayer.analyse's.

    Args:
      cfg, state: the position.
      simulations: new simulations of each tree (default self.simulations), at least 1;
        ignored when `seconds` is given.
      seconds: search until this much time is spent (at least one simulation), in steps
        of at most STEP_SECONDS, each sized from the time the last warm steps took.

    Each of the `trees` trees (root parallelism: the devices search their trees at the same
    time, and a device's trees are one batch) keeps `tree_nodes` nodes; the search stops
    early when they are full. The root's visits and values are summed over the trees (the
    principal variations are the first tree's). With tree reuse a search starts from the
    subtrees of the previous search that hold the position, so searching the same position
    again goes on where the last search stopped.
    """
    if seconds is None:
      simulations = self.simulations if simulations is None else simulations
      if simulations < 1:
        raise ValueError(f"a search needs at least one simulation, got {simulations}")
    elif not seconds > 0:
      raise ValueError(f"a search needs a positive time, got {seconds} seconds")
    self.prepare(cfg)
    start_time = time.perf_counter()
    trees = self._start(cfg, state)
    used = _fewest_used(trees)
    if seconds is None:
      trees, used = self._grow(cfg, trees, min(simulations, self.tree_nodes - used), used)
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
        step = min(step, self.tree_nodes - used)
        trees, used = self._grow(cfg, trees, step, used)
        grown += step
        if time.perf_counter() >= deadline:
          break
    self._searched = (trees, cfg)
    return candidates(merge_trees(jax.device_get([_arrays(self.settings, t) for t in trees])))

  def prepare(self, cfg: go.GoConfig) -> None:
    """Compiles the search for `cfg`'s games on every device (by a search of the empty
    board), so that no move's time goes to compiling; analyse calls it first."""
    if cfg in self._blank:
      return
    # Trees of the right shape with no node in them: `start` finds nothing to keep there, so
    # every search of the game, first or not, runs the one program compiled for kept trees.
    states = self._roots(go.init(cfg))
    shapes = jax.eval_shape(
        lambda v, s, k: _start(cfg, self.settings, *self._models, v, s, k,
                               num_nodes=self.tree_nodes),
        self.variables, states, self._key)
    self._blank[cfg] = [jax.device_put(jax.tree.map(lambda x: jnp.zeros(x.shape, x.dtype), shapes),
                                       d) for d in self._devices]
    trees = self._start(cfg, go.init(cfg), reuse=False)
    self._grow(cfg, trees, 1, 1)
    self._compiled.add(cfg)

  def _roots(self, state: go.GoState) -> go.GoState:
    """The position as a batch of one device's trees."""
    return jax.tree.map(lambda x: jnp.repeat(jnp.asarray(x)[None], self._trees_per_device, 0),
                        state)

  def _start(self, cfg: go.GoConfig, state: go.GoState, reuse: bool = True) -> list:
    kept = self._blank[cfg]
    if reuse and self.reuse_tree and self._searched is not None and self._searched[1] == cfg:
      kept = self._searched[0]
    self._searched = None  # grown (and given up) by the caller
    states = self._roots(state)
    trees = []
    for device, variables, tree in zip(self._devices, self._variables, kept):
      self._key, key = jax.random.split(self._key)
      trees.append(_start(cfg, self.settings, *self._models, variables,
                          jax.device_put(states, device), jax.device_put(key, device), tree,
                          num_nodes=self.tree_nodes))
    return trees

  def _grow(self, cfg: go.GoConfig, trees: list, simulations: int, used: int):
    """(trees with `simulations` more simulations each, fewest nodes used by a device's trees),
    timed when already compiled. The devices' searches run at the same time."""
    began = time.perf_counter()
    grown = []
    for device, variables, tree in zip(self._devices, self._variables, trees):
      self._key, key = jax.random.split(self._key)
      grown.append(_grow(cfg, self.settings, *self._models, variables, tree,
                         jax.device_put(key, device), jax.device_put(np.int32(simulations), device)))
    used_now = _fewest_used(grown)  # waits for the searches
    if cfg in self._compiled and used_now > used:
      self.seconds_per_simulation = (time.perf_counter() - began) / (used_now - used)
    return grown, used_now

  def policy(self, cfg: go.GoConfig, state: go.GoState) -> tuple[np.ndarray, float]:
    """The search's prior over legal moves (the SL policy at temperature beta, or uniform)."""
    if self.prior is None:
      legal = np.asarray(go.legal_actions(cfg, state), np.float64)
      return legal / legal.sum(), 0.0
    prior, _ = self.prior.policy(cfg, state)
    sharpened = np.where(prior > 0, prior ** (1.0 / self.leaf.beta), 0.0)
    return sharpened / sharpened.sum(), 0.0
