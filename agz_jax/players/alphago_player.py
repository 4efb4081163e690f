"""AlphaGo's (2016) player: its search with the SL policy's prior, leaves valued by rollouts,
a value network or both.

A player is described by a bundle: a folder with `alphago.json`, e.g.

  {"prior": "sl_policy", "rollout": "rollout_policy", "lambda": 1.0, "beta": 0.67,
   "rollouts_per_leaf": 8, "tree_nodes": 2048}

where "prior", "rollout" and "value" name checkpoints (training workdirs or
checkpoint folders; relative to the bundle) of an SL policy network (or a dual network,
whose policy head is then the prior), a fast rollout policy and a value network (or a
dual network, whose value head values the leaves; the same dual network as prior and
value runs once per leaf for both); "prior": "uniform" searches without a policy
network; "lambda" weighs the rollouts against the value network in a leaf's value
(the paper's mixing: 1 rollouts only, 0 the value network only, which needs no
rollout policy; 0.5 by default when a value network is given, else 1);
"lambda_from_move" applies lambda from that move of the game on, the value network
alone valuing the leaves before it (0, the default: everywhere); "tree_nodes" is the
size of the search tree, the same for every move of a game (one compiled search
serves them all); "trees" searches that many trees of the position at once (root
parallelism), spread over the devices (0: one per device; on a CPU, run the engine
with one device per core); "leaves" evaluates that many leaves of each tree together,
chosen under a virtual loss (1, the default, suits a CPU; an accelerator wants 8 or more).
On a command line the same keys can be written as a spec:
`alphago:prior=DIR,rollout=DIR,lambda=1`.
"""

import json
import os

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import alphago, go, nets, paths, search
from agz_jax.game import Game
from agz_jax.players.protocol import Analysis
from agz_jax.players.timed_search import EvaluatorMaker, TimedSearch

BUNDLE_FILE = "alphago.json"
MIXED = 0.5  # the paper's lambda
SPEC_PREFIX = "alphago:"
# Bundle keys and their defaults (lambda is `LeafSettings.mixing`).
DEFAULTS = {"prior": "uniform", "value": "none", "lambda": None, "beta": 0.67, "rollouts_per_leaf": 8,
            "max_rollout_moves": 500, "c_puct": 5.0, "tree_nodes": 2048, "trees": 0, "leaves": 1,
            "lambda_from_move": 0}


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
  out = dict(DEFAULTS, **settings)
  if out["lambda"] is None:  # the paper's mixing when there is a value network to mix in
    out["lambda"] = MIXED if out["value"] != "none" else 1.0
  for key in ("lambda", "beta", "c_puct"):
    out[key] = _number(key, out[key], float)
  out["lambda_from_move"] = _number("lambda_from_move", out["lambda_from_move"], int)
  if out["lambda"] == 1.0 and out["lambda_from_move"] == 0:
    out["value"] = "none"  # rollouts only: a value network given is not used, nor loaded
  if "rollout" not in settings and out["lambda"] != 0.0:
    raise ValueError("alphago player: no rollout policy given (rollout=DIR); only lambda=0 "
                     "(the value network alone) plays without one")
  for key in ("rollouts_per_leaf", "max_rollout_moves", "tree_nodes", "trees", "leaves"):
    out[key] = _number(key, out[key], int)
  if out["trees"] < 0:
    raise ValueError(f"alphago player: trees must be 0 (one per device) or more, got {out['trees']}")
  if out["tree_nodes"] < 2:
    raise ValueError(f"alphago player: tree_nodes must be at least 2, got {out['tree_nodes']}")
  out.setdefault("rollout", "none")
  for key in ("rollout", "prior", "value"):
    if out[key] not in ("uniform", "none"):
      out[key] = out[key] if paths.is_remote(out[key]) or os.path.isabs(out[key]) else (
          os.path.join(base, out[key]))
  return out


def _number(key, value, kind):
  try:
    return kind(value)
  except (TypeError, ValueError):
    raise ValueError(f"alphago player: {key} must be a{'n integer' if kind is int else ' number'}, "
                     f"got {value!r}") from None


def rollout_policy(path: str):
  """(model, feature groups, variables) of the fast rollout policy saved at `path`, the
  variables as an AlphaGo leaf evaluator takes them ({'params', 'tables'}).

  Raises:
    FileNotFoundError: no checkpoint there.
    ValueError: the checkpoint holds another kind of network.
  """
  from agz_jax import checkpoint  # pylint: disable=import-outside-toplevel
  config, variables = checkpoint.load_network(path)
  if config.model.kind != "fast_policy":
    raise ValueError(f"{path} holds a {config.model.kind} network, not a fast rollout policy: "
                     f"give one (e.g. pretrained/alphago-19x19/rollout_policy)")
  return (nets.make(config.model), alphago.patterns.groups_of(config.model),
          {"params": jax.tree.map(jnp.asarray, variables["params"]),
           "tables": alphago.patterns.make_tables(variables["patterns"])})


def _leaf_evaluator(game: Game, **options) -> search.Evaluator:
  """AlphaGo's leaf evaluator (alphago.evaluator) for a game of Go."""
  return alphago.evaluator(game.cfg, **options)


def _value_network(path: str):
  """((model, encoding), variables, sizes) of the leaves' value: a value network's (task
  value) or a dual network's value head (AlphaGo Zero's resnet, alphago.DualValue)."""
  from agz_jax import checkpoint  # pylint: disable=import-outside-toplevel
  config, variables = checkpoint.load_network(path)
  if config.model.kind == "value":
    model, variables = nets.make(config.model), {"params": variables["params"]}
  elif nets.has_value(config.model):
    model = alphago.DualValue(nets.make(config.model))
  else:
    raise ValueError(f"{path} holds a {config.model.kind} network, not a value network nor a "
                     "dual network with a value head (resnet): give one of those as value=DIR")
  if config.game.get("name", "go") != "go":
    raise ValueError(f"{path} plays {config.game.name}, not Go: give a Go network as value=DIR")
  try:
    go.check_encoding(go.GoConfig(size=config.game.size, **AlphaGoPlayer.planes),
                      config.model.encoding)
  except ValueError as e:
    raise ValueError(f"{path}: its {e}; the AlphaGo player keeps "
                     f"{AlphaGoPlayer.planes['history']} boards") from None
  return (model, config.model.encoding), jax.tree.map(jnp.asarray, variables), (config.game.size,)


def _prior_network(path: str, shared: bool):
  """The prior's Network: an SL policy network, or a dual network (its policy head)."""
  from agz_jax.players.network import Network  # pylint: disable=import-outside-toplevel
  prior = Network.from_checkpoint(path)
  if prior.config.game.get("name", "go") != "go":
    raise ValueError(f"{path} plays {prior.config.game.name}, not Go: give a Go network as "
                     f"prior=DIR")
  if prior.config.model.kind in nets.VALUE_ONLY:
    raise ValueError(f"{path} is a value network, which has no moves to give as a prior: give "
                     f"an SL policy or a dual network as prior=DIR")
  if shared and not prior.has_value:
    raise ValueError(f"{path} is an SL policy network, with no value head to value the leaves "
                     f"as value=DIR too: give a value network or a dual network there")
  try:
    go.check_encoding(go.GoConfig(size=prior.config.game.size, **AlphaGoPlayer.planes),
                      prior.encoding)
  except ValueError as e:
    raise ValueError(f"{path}: its {e}; the AlphaGo player keeps "
                     f"{AlphaGoPlayer.planes['history']} boards") from None
  return prior


class AlphaGoPlayer:
  """Searches with AlphaGo's PUCT, its leaves valued by rollouts of the fast policy, the value
  network, or both mixed by lambda.

  Args:
    settings: read_bundle's output.
    simulations: per move.
    seed: PRNG seed of the rollouts.
    reuse_tree: start each search from the subtree of the position reached.
    leaves: leaves of a tree evaluated together (default: the settings' "leaves").
    stop_when_decided: a search given seconds stops once its most visited move can no longer
      be overtaken in the time left (players.timed_search.decided).
  """

  planes = {"history": 8}  # the 48 planes and the patterns read the last boards
  has_value = True  # the leaves' values: rollouts' mean outcome, value network, or the mix
  timed_search = True  # analyse(..., seconds=) searches until its time is up

  def __init__(self, settings: dict, *, simulations: int, seed: int = 0, reuse_tree: bool = True,
               leaves: int | None = None, stop_when_decided: bool = False):
    if leaves is not None:
      settings = dict(settings, leaves=leaves)
    self.simulations = simulations
    self.reuse_tree = reuse_tree
    self.leaf = alphago.LeafSettings(
        prior="uniform" if settings["prior"] == "uniform" else "sl", beta=settings["beta"],
        mixing=settings["lambda"], rollouts_per_leaf=settings["rollouts_per_leaf"],
        max_rollout_moves=settings["max_rollout_moves"],
        lambda_from_move=settings["lambda_from_move"])
    self.rollout_model = self.groups = None
    self.variables = {}
    if self.leaf.mixing > 0.0:  # (lambda 0 plays no rollout)
      self.rollout_model, self.groups, self.variables["rollout"] = rollout_policy(
          settings["rollout"])
    self.prior = self.value = None
    self.sizes = None  # patterns fit every board
    name = "uniform"
    # One dual network as prior and value: its value head comes from the prior's forward pass.
    shared = settings["value"] != "none" and settings["value"] == settings["prior"]
    if settings["value"] != "none" and not shared:
      self.value, self.variables["value"], self.sizes = _value_network(settings["value"])
    elif settings["value"] == "none" and self.leaf.mixing < 1.0:
      raise ValueError(f"alphago player: lambda {self.leaf.mixing:g} mixes in a value network: "
                       "give one (value=DIR), or use lambda = 1 (rollouts only)")
    elif settings["value"] == "none" and self.leaf.needs_value:
      raise ValueError(f"alphago player: lambda_from_move {self.leaf.lambda_from_move} leaves "
                       f"the positions before it to a value network: give one (value=DIR), or "
                       f"use lambda_from_move=0")
    if self.leaf.prior == "sl":
      self.prior = _prior_network(settings["prior"], shared)
      self.variables["prior"] = self.prior.variables
      if shared:
        self.value, self.sizes = ("prior", self.prior.encoding), self.prior.sizes
      if self.sizes is not None and set(self.sizes).isdisjoint(self.prior.sizes):
        raise ValueError(f"alphago player: the value network plays {self.sizes[0]}x"
                         f"{self.sizes[0]} and the SL policy {self.prior.sizes[0]}x"
                         f"{self.prior.sizes[0]}; give networks of one board size")
      self.sizes = self.prior.sizes if self.sizes is None else self.sizes
      name = self.prior.name.replace("agz_jax-", "")
    leaves = {1.0: f"rollouts{self.leaf.rollouts_per_leaf}", 0.0: "value"}.get(
        self.leaf.mixing, f"value-rollouts{self.leaf.rollouts_per_leaf}-lambda{self.leaf.mixing:g}")
    if self.leaf.lambda_from_move and self.leaf.mixing > 0.0:
      leaves = f"value-then-{leaves}-from{self.leaf.lambda_from_move}"
    self.name = f"agz_jax-alphago-{name}-{leaves}"
    self.settings = search.SearchConfig(algorithm="alphago",
                                        num_simulations=settings["tree_nodes"] - 1,
                                        c_puct=settings["c_puct"])
    make_evaluator = EvaluatorMaker.of(
        _leaf_evaluator, settings=self.leaf, rollout_model=self.rollout_model,
        rollout_groups=self.groups,
        prior_model=(None if self.prior is None else alphago.DualPolicy(self.prior.model)
                     if self.prior.has_value else self.prior.model),
        prior_encoding=self.prior.encoding if self.prior else "alphago48",
        value_model=self.value[0] if self.value else None,
        value_encoding=self.value[1] if self.value else "alphago49")
    try:
      self._search = TimedSearch(make_evaluator, self.settings, self.variables,
                                 tree_nodes=settings["tree_nodes"], trees=settings["trees"],
                                 reuse_tree=reuse_tree, seed=seed, leaves=settings["leaves"],
                                 stop_when_decided=stop_when_decided)
    except ValueError as e:
      raise ValueError(f"alphago player: {e}") from None
    self.trees = self._search.trees
    if self.trees > 1:
      self.name += f"-trees{self.trees}"
    if settings["leaves"] > 1:
      self.name += f"-leaves{settings['leaves']}"

  @property
  def seconds_per_simulation(self) -> float | None:
    """Of the last warm step of a search (every tree's simulation at once)."""
    return self._search.seconds_per_simulation

  def analyse(self, cfg: go.GoConfig, state: go.GoState, simulations: int | None = None, *,
              seconds: float | None = None) -> Analysis:
    """Searches the position (players.Player.analyse).

    Args:
      cfg, state: the position.
      simulations: new simulations of each tree (default self.simulations), at least 1;
        ignored when `seconds` is given.
      seconds: search until this much time is spent (at least one simulation).

    Each of the `trees` trees (root parallelism: the devices search their trees at the same
    time, and a device's trees are one batch) keeps `tree_nodes` nodes; the search stops
    early when they are full. The root's visits and values are summed over the trees (the
    principal variations are the first tree's). With tree reuse a search starts from the
    subtrees of the previous search that hold the position, so searching the same position
    again goes on where the last search stopped (players.timed_search).
    """
    if seconds is None:
      simulations = self.simulations if simulations is None else simulations
    return self._search.analyse(Game(go, cfg), state, simulations, seconds)

  def prepare(self, cfg: go.GoConfig) -> None:
    """Compiles the search for `cfg`'s games (analyse calls it first)."""
    self._search.prepare(Game(go, cfg))

  def policy(self, cfg: go.GoConfig, state: go.GoState) -> tuple[np.ndarray, float]:
    """The search's prior over legal moves (the SL policy at temperature beta, or uniform)."""
    if self.prior is None:
      legal = np.asarray(go.legal_actions(cfg, state), np.float64)
      return legal / legal.sum(), 0.0
    prior, _ = self.prior.policy(cfg, state)
    sharpened = np.where(prior > 0, prior ** (1.0 / self.leaf.beta), 0.0)
    return sharpened / sharpened.sum(), 0.0
