"""What the AlphaZero core needs from a game, written down once.

A game is a module of pure JAX functions on one game (vmap them for a batch),
each taking the game's static, hashable config first, like `agz_jax.go`:

  ============================================ ==============================================
  function                                     returns
  ============================================ ==============================================
  init(cfg)                                    a new game's state
  step(cfg, state, action)                     the state after `action` (an illegal action or
                                               a finished game: the game decides; never raises)
  legal_actions(cfg, state)                    [A] bool
  result(cfg, state, needed=True)              [] float32, +1 / -1 / 0 for player +1 of a
                                               finished game; where `needed` is False the
                                               game may skip the work and return 0
  num_actions(cfg)                             A
  max_length(cfg)                              the most moves a game can last
  pass_action(cfg)                             the index of a pass move, or None if the game
                                               has none
  dirichlet_alpha(cfg)                         AlphaZero's root-noise concentration for this
                                               game (about 10 / typical number of legal moves)
  features(cfg, state, encoding)               [..., H, W, F] input planes of one state or a
                                               batch (any leading axes)
  planes_shape(cfg, encoding)                  (H, W, F)
  symmetries(cfg)                              (plane_perm [S, H*W], action_perm [S, A]) int:
                                               transform k maps planes x to x[plane_perm[k]]
                                               (over the H*W points) and a policy p to
                                               p[action_perm[k]]; k = 0 is the identity
  ============================================ ==============================================

Two more functions are optional; the auxiliary heads of AlphaZero's network
(KataGo's ownership and score targets) need them:

  ============================================ ==============================================
  ownership(cfg, state)                        [P] int8, the owner of each of the H*W points
                                               of a finished game: +1 player +1, -1 player -1,
                                               0 neither (the points that plane_perm permutes)
  score(cfg, state)                            [] float32, player +1's final margin
  ============================================ ==============================================

A game may also name scripted players to measure networks against (Dots and
Boxes: random, greedy, perfect): a module attribute OPPONENTS, {name: fn(cfg, states
[B], rng_key) -> [B] actions}; `Game.opponent(name)` binds one.

A state is a pytree with at least the fields `to_play` ([] int8, +1 or -1, the
player to move), `terminated` ([] bool) and `move_count` ([] int32). The player
to move may stay the same after a move (in Dots and Boxes a player who
completes a box moves again): the search's discount follows `to_play`.

`Game` binds a game module to its config: a frozen, hashable value passed to
jitted functions as one static argument.
"""

import dataclasses
import inspect
import types
from typing import Any

import jax
import jax.numpy as jnp

# Protocol function -> its positional parameters, config first.
PROTOCOL = {
    "init": ("cfg",),
    "step": ("cfg", "state", "action"),
    "legal_actions": ("cfg", "state"),
    "result": ("cfg", "state", "needed"),
    "num_actions": ("cfg",),
    "max_length": ("cfg",),
    "pass_action": ("cfg",),
    "dirichlet_alpha": ("cfg",),
    "features": ("cfg", "state", "encoding"),
    "planes_shape": ("cfg", "encoding"),
    "symmetries": ("cfg",),
}
# Optional protocol functions -> their positional parameters.
OPTIONAL = {
    "ownership": ("cfg", "state"),
    "score": ("cfg", "state"),
}
STATE_FIELDS = ("to_play", "terminated", "move_count")


def check_protocol(module: types.ModuleType) -> None:
  """Raises a TypeError naming the first protocol function `module` lacks or gets wrong
  (an optional one only when it has it)."""
  for name, params in PROTOCOL.items():
    fn = getattr(module, name, None)
    if not callable(fn):
      raise TypeError(f"game {module.__name__} has no function {name}{params}")
    _check_parameters(module, name, fn, params)
  for name, params in OPTIONAL.items():
    fn = getattr(module, name, None)
    if fn is not None:
      _check_parameters(module, name, fn, params)


def _check_parameters(module, name, fn, params) -> None:
  given = list(inspect.signature(fn).parameters)
  if len(given) < len(params):
    raise TypeError(f"game {module.__name__}: {name} takes {given}, the protocol needs "
                    f"{list(params)}")


@dataclasses.dataclass(frozen=True)
class Game:
  """A game module with its static config: `game.step(state, action)` for
  `module.step(cfg, state, action)`. Hashable, so it is a static jit argument.

  Attributes:
    module: the game's functions (PROTOCOL).
    cfg: its static config.
  """

  module: types.ModuleType
  cfg: Any

  def init(self):
    return self.module.init(self.cfg)

  def step(self, state, action):
    return self.module.step(self.cfg, state, action)

  def legal_actions(self, state) -> jax.Array:
    return self.module.legal_actions(self.cfg, state)

  def result(self, state, needed=True) -> jax.Array:
    return self.module.result(self.cfg, state, needed)

  def features(self, states, encoding: str) -> jax.Array:
    return self.module.features(self.cfg, states, encoding)

  def planes_shape(self, encoding: str) -> tuple[int, int, int]:
    return tuple(self.module.planes_shape(self.cfg, encoding))

  def has(self, name: str) -> bool:
    """Whether the game has the optional protocol function `name` (OPTIONAL)."""
    return callable(getattr(self.module, name, None))

  def ownership(self, state) -> jax.Array:
    return self.module.ownership(self.cfg, state)

  def score(self, state) -> jax.Array:
    return self.module.score(self.cfg, state)

  def opponent(self, name: str):
    """The game's scripted player `name`, bound to the config: (states [B], rng_key) -> [B].

    Raises:
      ValueError: the game has no such player, naming those it has.
    """
    have = getattr(self.module, "OPPONENTS", {})
    if name not in have:
      raise ValueError(f"{self.module.__name__.rsplit('.', 1)[-1]} has no scripted player "
                       f"{name!r}" + (f" (it has: {', '.join(have)})" if have else " (it has none)"))
    fn = have[name]
    return lambda states, rng_key: fn(self.cfg, states, rng_key)

  @property
  def num_actions(self) -> int:
    return self.module.num_actions(self.cfg)

  @property
  def max_length(self) -> int:
    return self.module.max_length(self.cfg)

  @property
  def pass_action(self) -> int | None:
    return self.module.pass_action(self.cfg)

  @property
  def dirichlet_alpha(self) -> float:
    return self.module.dirichlet_alpha(self.cfg)

  def symmetries(self):
    """(plane_perm [S, H*W], action_perm [S, A]) numpy int arrays."""
    return self.module.symmetries(self.cfg)

  @property
  def num_symmetries(self) -> int:
    return self.symmetries()[0].shape[0]

  # -- batched helpers the core shares -------------------------------------------------------
  def init_batch(self, batch: int):
    """[B] fresh games."""
    return jax.vmap(lambda _: self.init())(jnp.arange(batch))

  def step_batch(self, states, actions):
    return jax.vmap(self.step)(states, actions)

  def legal_batch(self, states) -> jax.Array:
    return jax.vmap(self.legal_actions)(states)

  def results_where(self, states, needed: jax.Array) -> jax.Array:
    """[B] results for player +1 of the games where `needed`, 0 elsewhere.

    Most search simulations end no game; then no game is scored at all (a
    lax.cond on the whole batch, outside any vmap).
    """
    def score_all():
      return jnp.where(needed, jax.vmap(self.result)(states, needed), 0.0)

    return jax.lax.cond(jnp.any(needed), score_all,
                        lambda: jnp.zeros(needed.shape, jnp.float32))

  def final_where(self, states, needed: jax.Array) -> tuple[jax.Array, jax.Array]:
    """([B, P] int8 ownership, [B] float32 score) of the games where `needed`, 0 elsewhere.

    Like results_where, nothing is computed in a step where no game needs it.
    """
    batch, points = needed.shape[0], self.symmetries()[0].shape[1]

    def final():
      own = jax.vmap(self.ownership)(states)
      return (jnp.where(needed[:, None], own, 0).astype(jnp.int8),
              jnp.where(needed, jax.vmap(self.score)(states), 0.0).astype(jnp.float32))

    return jax.lax.cond(jnp.any(needed), final,
                        lambda: (jnp.zeros((batch, points), jnp.int8),
                                 jnp.zeros(batch, jnp.float32)))

  def transform_points(self, values: jax.Array, k) -> jax.Array:
    """Symmetry k applied to one sample's [P] per-point values (ownership)."""
    return values[jnp.asarray(self.symmetries()[0])[k]]

  def transform_actions(self, policy: jax.Array, k) -> jax.Array:
    """Symmetry k applied to one sample's [A] policy."""
    return policy[jnp.asarray(self.symmetries()[1])[k]]

  def transform(self, planes: jax.Array, policy: jax.Array, k) -> tuple[jax.Array, jax.Array]:
    """Symmetry k applied to one sample's [H, W, F] planes and [A] policy together."""
    plane_perm, action_perm = self.symmetries()
    h, w, f = planes.shape
    planes = planes.reshape(h * w, f)[jnp.asarray(plane_perm)[k]].reshape(h, w, f)
    return planes, policy[jnp.asarray(action_perm)[k]]


def make(game_config) -> Game:
  """The Game named by a config's `game` section: `name` and the game's config fields."""
  from agz_jax import dots_and_boxes, go  # pylint: disable=import-outside-toplevel
  fields = dict(game_config)
  if "features" in fields:
    raise ValueError("game.features is now the network's model.encoding: move it there "
                     "(the rules config holds only the rules)")
  name = fields.pop("name", None)
  games = {"go": (go, go.GoConfig), "dots_and_boxes": (dots_and_boxes, dots_and_boxes.DotsConfig)}
  if name not in games:
    raise ValueError(f"game.name must be one of {', '.join(games)}, got {name!r}")
  module, config_class = games[name]
  known = {f.name for f in dataclasses.fields(config_class)}
  unknown = sorted(set(fields) - known)
  if unknown:
    raise ValueError(f"game {name!r} has no setting {', '.join(unknown)} (its settings: "
                     f"{', '.join(sorted(known))})")
  return Game(module, config_class(**fields))


class _NoRecords:
  """The record writer of a game without a record format: writes nothing."""

  def add(self, iteration: int, trace: dict) -> None:
    del iteration, trace


def record_writer(game: Game, directory: str, *, every: int, fresh: bool):
  """The host-side writer of a sample of self-play games in the game's record format
  (SGF for Go), fed the per-iteration trace of training; a no-op for other games."""
  from agz_jax import go  # pylint: disable=import-outside-toplevel
  if game.module is go:
    from agz_jax import sgf  # pylint: disable=import-outside-toplevel
    return sgf.SelfPlayWriter(directory, game.cfg, every=every, fresh=fresh)
  return _NoRecords()
