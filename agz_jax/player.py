"""Players for the host-side tools (GTP, matches, pictures): a trained network
with search or its raw policy, and a random player.

They use the same jitted environment and search as training; one game at a
time (a batch of one).
"""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import checkpoint, go, nets, search
from agz_jax.game import Game


def random_move(cfg: go.GoConfig, state: go.GoState, key: jax.Array) -> jax.Array:
  """A uniformly random legal move that does not fill one of the mover's own eyes.

  An eye here is an empty point whose neighbours on the board are all the
  mover's stones. Passes only when no other move is left. Consumes `key`.

  Returns:
    [] int32 action.
  """
  legal = go.legal_actions(cfg, state)[:-1]
  n = cfg.size
  own = jnp.pad((state.board == state.to_play).reshape(n, n), 1, constant_values=True)
  eye = own[:-2, 1:-1] & own[2:, 1:-1] & own[1:-1, :-2] & own[1:-1, 2:]
  moves = legal & ~eye.reshape(-1)
  rank = jnp.floor(jax.random.uniform(key) * jnp.sum(moves))
  choice = jnp.argmax(jnp.cumsum(moves) > rank)
  return jnp.where(jnp.any(moves), choice, cfg.pass_action).astype(jnp.int32)


class RandomPlayer:
  """Plays random_move; any board size."""

  name = "random"
  sizes = None  # every size
  planes = {"history": 8}  # GoConfig fields of the positions it is given

  def __init__(self, seed: int = 0):
    self._key = jax.random.PRNGKey(seed)
    self._move = jax.jit(random_move, static_argnums=0)

  def analyse(self, cfg: go.GoConfig, state: go.GoState, simulations: int | None = None) -> dict:
    self._key, key = jax.random.split(self._key)
    action = int(self._move(cfg, state, key))
    return {"action": action, "value": 0.0, "candidates": [
        {"action": action, "visits": 1, "value": 0.0, "prior": 1.0, "pv": [action]}]}


class NetworkPlayer:
  """A trained network: search with `simulations` per move, or its policy alone.

  An AlphaGo Zero checkpoint (task "selfplay") can search or play its policy;
  an SL policy checkpoint (task "sl_policy") has no value output and always
  plays its policy (its value is reported as 0) over the sensible moves (no
  filling of its own eyes), passing only when none is left. Positions are encoded with
  the checkpoint's own input planes (`planes`, for the caller's GoConfig).

  Args:
    path: a training workdir or checkpoint (see checkpoint.load_network).
    simulations: searches per move; 0 plays the network's most likely legal
      move without search.
    algorithm: 'gumbel' or 'puct' (default: the run's).
    seed: PRNG seed of the search's noise and of sampled moves.
    sample_moves: without search, the first `sample_moves` moves of a game are
      drawn from the policy instead of taking its most likely move, so that
      matches between deterministic programs are not one game repeated.
    reuse_tree: with the PUCT search, start each search from the subtree of
      the previous search that holds the current position (after our move and
      the opponent's answer), keeping its visits (search.run_search's `reuse`).
  """

  def __init__(self, path: str, simulations: int = 64, algorithm: str | None = None, seed: int = 0,
               sample_moves: int = 0, reuse_tree: bool = True):
    self.sample_moves = sample_moves
    self.reuse_tree = reuse_tree
    self._tree = None  # (mctx tree, GoConfig) of the last PUCT search
    self.config, variables = checkpoint.load_network(path)
    self.task = self.config.task
    game = self.config.game
    self.planes = {"history": game.history}
    self.encoding = self.config.model.encoding
    self.variables = jax.tree.map(jnp.asarray, variables)
    self.sizes = (game.size,)
    self._key = jax.random.PRNGKey(seed)
    self.model = nets.make(self.config.model)
    if self.task == "sl_policy":
      self.variables = {"params": self.variables["params"]}
      self.simulations, self.algorithm = 0, None
      self.name = f"agz_jax-sl-{self.config.model.layers}x{self.config.model.filters}"
      return
    self.simulations = simulations
    self.algorithm = algorithm or self.config.search.algorithm
    self.name = f"agz_jax-{self.config.model.blocks}x{self.config.model.channels}"

  @property
  def has_value(self) -> bool:
    return self.task != "sl_policy"

  def policy(self, cfg: go.GoConfig, state: go.GoState):
    """The network's prior over legal moves and its value: ([A] numpy, float)."""
    prior, value = _policy(self.model, self.has_value, self.encoding, cfg, self.variables,
                           _batch(state))
    return np.asarray(prior[0]), float(value[0])

  def analyse(self, cfg: go.GoConfig, state: go.GoState, simulations: int | None = None) -> dict:
    """Chooses a move.

    Returns:
      dict: action; value (for the player to move, [-1, 1]); candidates: a list
      of {action, visits, value, prior, pv}, most visited first.
    """
    simulations = self.simulations if simulations is None else simulations
    if simulations <= 0 or not self.has_value:
      prior, value = self.policy(cfg, state)
      order = np.argsort(-prior)
      cands = [{"action": int(a), "visits": 0, "value": value, "prior": float(prior[a]),
                "pv": [int(a)]} for a in order[:10] if prior[a] > 0]
      playable = prior
      if not self.has_value:
        # AlphaGo's policy network had no pass move and never filled its own eyes: without a
        # value to tell a finished game, pass only when no sensible move is left (the GTP
        # engine also passes when the opponent passed and the score is in our favour).
        playable = prior * sensible(cfg, state)
        if playable.sum() <= 0:
          return {"action": cfg.pass_action, "value": value, "candidates": cands}
      action = int(np.argmax(playable))
      if int(state.move_count) < self.sample_moves:
        self._key, key = jax.random.split(self._key)
        action = int(jax.random.choice(key, len(playable), p=jnp.asarray(playable / playable.sum())))
      return {"action": action, "value": value, "candidates": cands}
    self._key, key = jax.random.split(self._key)
    reuse = None
    if self.reuse_tree and self.algorithm == "puct" and self._tree is not None:
      tree, tree_cfg = self._tree
      if tree_cfg == cfg and tree.node_visits.shape[1] <= 2 * simulations + 1:
        reuse = tree
    settings = search.SearchConfig.from_config(
        self.config.search, algorithm=self.algorithm, num_simulations=simulations,
        max_num_considered_actions=min(16, cfg.num_actions),
        dirichlet_fraction=self.config.eval.dirichlet_fraction)
    out, tree = _search(self.model, self.encoding, cfg, settings, self.variables, _batch(state),
                        key, reuse)
    self._tree = (tree, cfg) if self.algorithm == "puct" else None
    out = jax.device_get(out)
    visits, q, prior = out["visits"][0], out["qvalues"][0], out["prior"][0]
    best = int(out["best"][0])
    rank = -visits.astype(np.float64) - 0.5 * (np.arange(len(visits)) == best)
    order = [int(a) for a in np.argsort(rank, kind="stable") if visits[a] > 0]
    cands = [{"action": a, "visits": int(visits[a]), "value": float(q[a]),
              "prior": float(prior[a]), "pv": _principal_variation(out, a)}
             for a in order]
    return {"action": best, "value": float(out["value"][0]), "candidates": cands}


@functools.partial(jax.jit, static_argnums=(0, 1, 2, 3))
def _search(model, encoding, cfg, settings, variables, states, key, reuse=None):
  game = Game(go, cfg)
  evaluator = search.network(game, lambda v, x: model.apply(v, x, train=False), encoding)
  out = search.run_search(game, evaluator, variables, states, key, settings, reuse=reuse)
  tree = out.search_tree
  summary = tree.summary()
  best = search.best_action(settings, out)
  return dict(best=best, visits=summary.visit_counts, qvalues=summary.qvalues,
              value=summary.value, prior=jax.nn.softmax(tree.children_prior_logits[:, 0], -1),
              children_index=tree.children_index, children_visits=tree.children_visits), tree


@functools.partial(jax.jit, static_argnums=(0, 1, 2, 3))
def _policy(model, has_value, encoding, cfg, variables, states):
  game = Game(go, cfg)
  evaluator = search.network(game, lambda v, x: model.apply(v, x, train=False), encoding,
                             has_value=has_value)
  logits, value, _ = search.evaluate(game, evaluator, variables, states, jax.random.PRNGKey(0))
  return jax.nn.softmax(logits, axis=-1), value


_sensible = jax.jit(go.sensible_moves, static_argnums=0)


def sensible(cfg: go.GoConfig, state: go.GoState) -> np.ndarray:
  """[A] bool: the legal moves that do not fill one of the mover's own eyes (go.sensible_moves)."""
  return np.asarray(_sensible(cfg, state))


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


def _batch(state: go.GoState) -> go.GoState:
  return jax.tree.map(lambda x: jnp.asarray(x)[None], state)


def win_rate(value: float) -> float:
  """A value in [-1, 1] as a probability of winning."""
  return min(1.0, max(0.0, (value + 1.0) / 2.0)) if math.isfinite(value) else 0.5
