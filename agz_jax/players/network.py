"""A trained network from a checkpoint, and the jitted calls the players make on it.

The three places that tie the players to the training code: make_model (the
flax module of a run's config), input_planes (the feature planes it reads) and
run_search (the search the trainers use). One game at a time (a batch of one).
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import go, search


def task_of(config) -> str:
  """The training task of a checkpoint's config; runs saved before tasks existed were all
  self-play runs."""
  return config.get("task", "selfplay")


def make_model(config):
  """The flax module of a checkpoint's config."""
  # Imported here: the trainers pull in orbax, which the random player and the demo never need.
  if task_of(config) == "sl_policy":
    from agz_jax import supervised  # pylint: disable=import-outside-toplevel
    return supervised.make_model(config)
  from agz_jax import train  # pylint: disable=import-outside-toplevel
  return train.make_model(config)


def input_planes(config) -> dict:
  """The GoConfig fields that encode positions as the checkpoint's network reads them."""
  game = config.game
  return {"history": game.history, "features": game.get("features", "agz17")}


@functools.partial(jax.jit, static_argnums=(0, 1, 2, 3))
def run_search(model, cfg: go.GoConfig, algorithm: str, simulations: int, variables,
               states: go.GoState, key: jax.Array, reuse=None):
  """The training search from a batch of positions. Consumes `key`.

  Returns:
    (dict of arrays: best [B], visits / qvalues / prior [B, A], value [B], children_index and
    children_visits of the tree; the mctx tree, to pass back as `reuse`).
  """
  apply_fn = lambda v, x: model.apply(v, x, train=False)
  out = search.run_search(cfg, apply_fn, variables, states, key, algorithm=algorithm,
                          num_simulations=simulations,
                          max_num_considered_actions=min(16, cfg.num_actions),
                          dirichlet_fraction=0.0, reuse=reuse)
  tree = out.search_tree
  summary = tree.summary()
  best = out.action if algorithm == "gumbel" else jnp.argmax(summary.visit_counts, -1)
  return dict(best=best, visits=summary.visit_counts, qvalues=summary.qvalues,
              value=summary.value, prior=jax.nn.softmax(tree.children_prior_logits[:, 0], -1),
              children_index=tree.children_index, children_visits=tree.children_visits), tree


@functools.partial(jax.jit, static_argnums=(0, 1, 2))
def _policy(model, has_value: bool, cfg: go.GoConfig, variables, states: go.GoState):
  def apply_fn(v, x):
    out = model.apply(v, x, train=False)
    return out if has_value else (out, jnp.zeros(x.shape[0], jnp.float32))
  logits, value, _ = search.evaluate(cfg, apply_fn, variables, states)
  return jax.nn.softmax(logits, axis=-1), value


class Network:
  """A checkpoint's network.

  Attributes:
    config: the training run's ConfigDict.
    model: its flax module (make_model).
    variables: its variables, as jax arrays.
    planes: GoConfig fields of the positions it reads (input_planes).
    has_value: False for an SL policy network, which has no value output.
    sizes: the board sizes it plays, (config.game.size,).
    name: 'agz_jax-BxC' (blocks x channels) or 'agz_jax-sl-LxF' (layers x filters).
  """

  def __init__(self, config, variables):
    self.config = config
    self.model = make_model(config)
    self.planes = input_planes(config)
    self.sizes = (config.game.size,)
    self.has_value = task_of(config) != "sl_policy"
    variables = jax.tree.map(jnp.asarray, variables)
    if self.has_value:
      self.variables = variables
      self.name = f"agz_jax-{config.model.blocks}x{config.model.channels}"
    else:
      self.variables = {"params": variables["params"]}
      self.name = f"agz_jax-sl-{config.model.layers}x{config.model.filters}"

  def policy(self, cfg: go.GoConfig, state: go.GoState) -> tuple[np.ndarray, float]:
    """The prior over legal moves ([A] numpy) and the value for the player to move (0 without
    a value output)."""
    prior, value = _policy(self.model, self.has_value, cfg, self.variables, batch(state))
    return np.asarray(prior[0]), float(value[0])


def load_network(path: str) -> Network:
  """The network of a training workdir or checkpoint (see checkpoint.load_network).

  Raises:
    FileNotFoundError: no checkpoint there.
  """
  # Imported here for the same reason as the trainers in make_model.
  from agz_jax import checkpoint  # pylint: disable=import-outside-toplevel
  config, variables = checkpoint.load_network(path)
  return Network(config, variables)


def batch(state: go.GoState) -> go.GoState:
  """One game as a batch of one."""
  return jax.tree.map(lambda x: jnp.asarray(x)[None], state)
