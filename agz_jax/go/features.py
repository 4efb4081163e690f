"""Input planes for the networks, by encoding name, and the sensibleness of a move.

`features(cfg, state, encoding)` computes the set a network was trained on;
each network names its encoding in its model config, so one position can be
encoded several ways in one search (AlphaGo's policy and value networks):

* "agz17": AlphaGo Zero (Silver et al. 2017): the stones of each side over the
  last T positions and the colour to play; 17 planes for T = 8.
* "alphago48", "alphago49": AlphaGo's (2016) hand-made planes, with the ladders
  read (`agz_jax.alphago.planes`), and "katago", "katago_noladders": KataGo's
  inputs (`agz_jax.alphago.katago`). `agz_jax` registers them (`register_encoding`),
  once, when the package is imported.

An encoding is a function of a flat batch of states; `features` flattens any
leading axes for it, so that an encoding that reads the whole batch at once (the
ladders) gets it whole.

`sensible_moves` is AlphaGo's sensibleness (a legal move that does not fill an
eye of the player to move), which random play, rollouts and the RL games use too.
An eye of X is an empty point whose on-board neighbours are all X stones, with
fewer than two "defects": O stones on its diagonals, plus one if the point is on
the edge.
"""

import dataclasses
import functools
import types
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax.go.config import GoConfig
from agz_jax.go.rules import legal_actions, neighbour_values
from agz_jax.go.state import BLACK, EMPTY, GoState

_DIAGONALS = ((-1, -1), (-1, 1), (1, -1), (1, 1))


@dataclasses.dataclass(frozen=True)
class Encoding:
  """An input encoding: its planes, the history it reads, and the function that computes them.

  Attributes:
    num_planes: cfg -> F, the planes of one position.
    history: the fewest boards of history (game.history) it needs.
    encode: (cfg, states [B], **options) -> [B, N, N, F] float32, for a flat batch.
  """
  num_planes: Callable[[GoConfig], int]
  history: int
  encode: Callable[..., jnp.ndarray]


_ENCODINGS: dict[str, Encoding] = {}
# The input encodings `features` knows, by name (read-only; `register_encoding` adds one).
ENCODINGS = types.MappingProxyType(_ENCODINGS)


def register_encoding(name: str, *, num_planes: int | Callable[[GoConfig], int], history: int,
                      encode: Callable[..., jnp.ndarray]) -> None:
  """Makes `features(cfg, state, name)` compute `encode`'s planes (see Encoding)."""
  if name in _ENCODINGS:
    raise ValueError(f"encoding {name!r} is registered already")
  count = num_planes if callable(num_planes) else (lambda cfg, n=num_planes: n)
  _ENCODINGS[name] = Encoding(count, history, encode)


def check_encoding(cfg: GoConfig, encoding: str) -> None:
  """Raises a ValueError naming the problem if `encoding` cannot encode `cfg`'s states."""
  if encoding not in _ENCODINGS:
    raise ValueError(f"encoding must be one of {', '.join(_ENCODINGS)}, got {encoding!r}")
  history = _ENCODINGS[encoding].history
  if cfg.history < history:
    raise ValueError(f"encoding {encoding!r} needs game.history >= {history}, got "
                     f"{cfg.history}")


def num_planes(cfg: GoConfig, encoding: str) -> int:
  """F, the number of planes `features(cfg, state, encoding)` returns."""
  check_encoding(cfg, encoding)
  return _ENCODINGS[encoding].num_planes(cfg)


def planes_shape(cfg: GoConfig, encoding: str) -> tuple[int, int, int]:
  """(N, N, F): the shape of one position's planes."""
  return cfg.size, cfg.size, num_planes(cfg, encoding)


def features(cfg: GoConfig, state: GoState, encoding: str = "agz17", **options) -> jnp.ndarray:
  """The input planes of `encoding`, from the point of view of the player to move.

  Args:
    cfg: the game's configuration.
    state: one game, or a batch of games with any leading axes. Pass the whole
      batch rather than vmapping one game: AlphaGo's ladders are read for the batch
      at once, which costs far less than reading for every game separately.
    encoding: one of ENCODINGS (module docstring).
    **options: the encoding's own (AlphaGo's: `ladder`, how the ladders are read). One
      given as None is left out (the encoding's default), so that one call serves every
      encoding.

  Returns:
    [..., N, N, F] float32, F = num_planes(cfg, encoding).
  """
  check_encoding(cfg, encoding)
  batch = state.board.shape[:-1]
  size = int(np.prod(batch))
  flat = jax.tree.map(lambda x: x.reshape((size,) + x.shape[len(batch):]), state)
  given = {name: value for name, value in options.items() if value is not None}  # None: default
  planes = _ENCODINGS[encoding].encode(cfg, flat, **given)
  return planes.reshape(batch + planes.shape[1:])


def _agz(cfg: GoConfig, state: GoState) -> jnp.ndarray:
  """AlphaGo Zero input planes.

  Planes 0 .. T-1 hold the player's stones at moves t, t-1, ..., t-T+1; planes
  T .. 2T-1 the opponent's stones at the same moves; plane 2T is all ones when
  black is to play and zeros when white is. Boards before the start of the game
  are empty. With T = 8 this is the paper's 17 planes.
  """
  n = cfg.size
  boards = jnp.concatenate([state.board[None], state.previous_boards], axis=0)  # [T, P]
  me = state.to_play
  own = boards == me
  opp = boards == -me
  colour = jnp.broadcast_to(me == BLACK, (1, n * n))
  planes = jnp.concatenate([own, opp, colour], axis=0).astype(jnp.float32)      # [2T+1, P]
  return planes.T.reshape(n, n, 2 * cfg.history + 1)


def _encode_agz(cfg: GoConfig, states: GoState) -> jnp.ndarray:
  return jax.vmap(functools.partial(_agz, cfg))(states)


register_encoding("agz17", num_planes=lambda cfg: 2 * cfg.history + 1, history=1,
                  encode=_encode_agz)


def own_eyes(cfg: GoConfig, board: jnp.ndarray, me, nbr_colour: jnp.ndarray) -> jnp.ndarray:
  """[P] bool: the eyes of colour `me` (see the module docstring); nbr_colour [P, 4], 2 off
  board (`neighbour_values(cfg, board, 2)`)."""
  diag_colour = neighbour_values(cfg, board, 2, _DIAGONALS)
  defects = jnp.sum(diag_colour == -me, axis=1) + jnp.any(diag_colour == 2, axis=1)
  surrounded = jnp.all((nbr_colour == me) | (nbr_colour == 2), axis=1)
  return (board == EMPTY) & surrounded & (defects < 2)


def sensible_moves(cfg: GoConfig, state: GoState, superko: bool = True) -> jnp.ndarray:
  """AlphaGo's sensibleness: legal points that do not fill an eye of the player to move.

  Args:
    superko: False for the simple ko rule (see `legal_actions`).

  Returns:
    [P + 1] bool, pass (last) always False.
  """
  board = state.board.astype(jnp.int32)
  legal = legal_actions(cfg, state, superko)[:cfg.num_points]
  nbr_colour = neighbour_values(cfg, board, 2)
  own_eye = own_eyes(cfg, board, state.to_play.astype(jnp.int32), nbr_colour)
  return jnp.append(legal & ~own_eye, False)
