"""A trained network from a checkpoint, and the jitted calls the players make on it.

The places that tie the players to the core: make_model (the flax module of a
run's config, nets.make), input_planes and the network's encoding (how it reads
a position) and search_positions (the search the trainers use). One game at a time (a
batch of one).
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import game as game_lib, nets, search
from agz_jax.game import Game
from agz_jax.players.protocol import Analysis


def make_model(config):
  """The flax module of a checkpoint's config (its policy sized for the run's game)."""
  if config.game.get("name", "go") == "go":
    return nets.make(config.model)
  return nets.make(config.model, num_actions=game_of(config).num_actions)


def input_planes(config) -> dict:
  """The GoConfig fields the checkpoint's network needs of a position (its encoding reads the
  last `history` boards); none for another game."""
  return {"history": config.game.history} if "history" in config.game else {}


@functools.partial(jax.jit, static_argnums=(0, 1, 2, 3))
def search_positions(model, encoding: str, game: Game, settings: search.SearchConfig,
                     variables, states, key: jax.Array) -> dict:
  """The training search from a batch of positions of `game` (Go, or any game of the
  protocol), afresh. Consumes `key`.

  Returns:
    dict of arrays: best [B], visits / qvalues / prior [B, A], value [B], children_index and
    children_visits of the tree.
  """
  out = search.run_search(game, search.flax_network(game, model, encoding), variables,
                          states, key, settings)
  return search_arrays(settings, out)


def search_arrays(settings: search.SearchConfig, out) -> dict:
  """What a player reads of a search (search_positions' dict) from its mctx.PolicyOutput."""
  tree = out.search_tree
  summary = tree.summary()
  return dict(best=search.best_action(settings, out), visits=summary.visit_counts,
              qvalues=summary.qvalues, value=summary.value,
              prior=jax.nn.softmax(tree.children_prior_logits[:, 0], -1),
              children_index=tree.children_index, children_visits=tree.children_visits)


def candidates(out: dict) -> Analysis:
  """A player's analysis (players.Analysis) from a search's arrays (search_positions' dict, on the host, batch of one)."""
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


@functools.partial(jax.jit, static_argnums=(0, 1, 2, 3))
def _policy(model, encoding: str, has_value: bool, game: Game, variables, states):
  evaluator = search.flax_network(game, model, encoding, has_value=has_value)
  logits, value, _ = search.evaluate(game, evaluator, variables, states, jax.random.PRNGKey(0))
  return jax.nn.softmax(logits, axis=-1), value


class Network:
  """A checkpoint's network.

  Attributes:
    config: the training run's ConfigDict.
    model: its flax module (make_model).
    variables: its variables, as jax arrays.
    planes: GoConfig fields of the positions it reads (input_planes).
    encoding: the input planes it was trained on (config.model.encoding).
    has_value: False for an SL policy network, which has no value output.
    game: the game it plays, with the config of its training run (game_of).
    sizes: the board sizes it plays, (config.game.size,).
    name: 'agz_jax-BxC' (blocks x channels) or 'agz_jax-sl-LxF' (layers x filters).
  """

  def __init__(self, config, variables):
    self.config = config
    self.model = make_model(config)
    self.planes = input_planes(config)
    self.encoding = config.model.encoding
    self.sizes = (config.game.size,) if "size" in config.game else ()  # Go's
    self.has_value = nets.has_value(config.model)
    self.game = game_of(config)
    variables = jax.tree.map(jnp.asarray, variables)
    if self.has_value:
      self.variables = variables
      self.name = f"agz_jax-{config.model.blocks}x{config.model.channels}"
    else:
      self.variables = {"params": variables["params"]}
      self.name = f"agz_jax-sl-{config.model.layers}x{config.model.filters}"

  @classmethod
  def from_checkpoint(cls, path: str) -> "Network":
    """The network of a training workdir or checkpoint (see checkpoint.load_network).

    Raises:
      FileNotFoundError: no checkpoint there.
    """
    # Imported here: orbax, which the random player and the demo never need.
    from agz_jax import checkpoint  # pylint: disable=import-outside-toplevel
    return cls(*checkpoint.load_network(path))

  def search_config(self, *, algorithm: str, simulations: int, considered_actions: int,
                    q_transform: str | None = None, **settings) -> search.SearchConfig:
    """The run's search settings for play: `algorithm`, `simulations`, at most
    `considered_actions` Gumbel root actions, the evaluation games' root noise, and the
    PUCT search's `q_transform` and other `settings` (SearchConfig fields) where given
    (else the run's)."""
    overrides = dict(settings) if q_transform is None else {"q_transform": q_transform,
                                                            **settings}
    return search.SearchConfig.from_config(
        self.config.search, algorithm=algorithm, num_simulations=simulations,
        max_num_considered_actions=considered_actions,
        dirichlet_fraction=self.config.eval.dirichlet_fraction, **overrides)

  def policy(self, cfg, state) -> tuple[np.ndarray, float]:
    """The prior over legal moves ([A] numpy) and the value for the player to move (0 without
    a value output) of a position of its game (`cfg`: Go's GoConfig, or the game's config)."""
    prior, value = _policy(self.model, self.encoding, self.has_value,
                           Game(self.game.module, cfg), self.variables, batch(state))
    return np.asarray(prior[0]), float(value[0])


def game_of(config) -> Game:
  """The game of a training run's config (Go where its game section names none)."""
  return game_lib.make({"name": "go", **dict(config.game)})


def batch(state):
  """One game as a batch of one."""
  return jax.tree.map(lambda x: jnp.asarray(x)[None], state)
