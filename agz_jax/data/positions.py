"""Training positions from human games, produced on the device.

The games of a GameArchive go to the device once, as a GameTable of padded move
sequences. Each minibatch then picks games (in proportion to their length, so
that every position of the data is equally likely), replays them through the JAX
rules (vmapped over games, one loop over moves that stops at the latest position
drawn), keeps random positions of each, computes their input planes (`go.features`) and applies a random one of the
8 board symmetries to planes and target alike. Nothing but the PRNG key crosses
from the host per minibatch.
"""

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from agz_jax import go
from agz_jax.data.games import GameArchive


@struct.dataclass
class GameTable:
  """Games on the device, ready to be replayed.

  Letters: G games, L the longest game's moves, S the most setup stones of one
  colour in a game, P points.

  Attributes:
    moves: [G, L] int16 actions, padded with passes.
    length: [G] int32, moves of each game.
    setup_black: [G, S] int16 black setup stones, padded with P (ignored by go.init).
    setup_white: [G, S] int16 white setup stones, padded with P.
    first_player: [G] int8, the colour of the first move.
    winner: [G] int8, 1 black won, -1 white won, 0 unknown.
  """

  moves: jnp.ndarray
  length: jnp.ndarray
  setup_black: jnp.ndarray
  setup_white: jnp.ndarray
  first_player: jnp.ndarray
  winner: jnp.ndarray

  @property
  def num_games(self) -> int:
    return self.moves.shape[0]


@struct.dataclass
class Batch:
  """Positions with their targets; B positions.

  Attributes:
    planes: [B, N, N, F] float32 input planes of the player to move.
    action: [B] int32, the move played there (P for pass), in the planes' frame.
    value_target: [B] float32, the game's winner from the mover's side (+1 won,
      -1 lost, 0 unknown result).
    game: [B] int32, the row of the GameTable the position comes from.
    move_number: [B] int32, moves played before the position.
  """

  planes: jnp.ndarray
  action: jnp.ndarray
  value_target: jnp.ndarray
  game: jnp.ndarray
  move_number: jnp.ndarray


def _padded(values: np.ndarray, offsets: np.ndarray, idx: np.ndarray, width: int, fill: int):
  out = np.full((len(idx), width), fill, np.int16)
  for row, i in enumerate(idx):
    part = values[offsets[i]:offsets[i + 1]]
    out[row, :len(part)] = part
  return out


def make_table(archive: GameArchive, idx) -> GameTable:
  """The games `idx` of an archive as a GameTable (numpy; put it on the device with jnp.asarray)."""
  idx = np.asarray(idx, np.int64)
  if len(idx) == 0:
    raise ValueError("make_table: no games selected (check the archive and the date split)")
  p = int(archive.size) ** 2
  lengths = np.diff(archive.offsets)[idx].astype(np.int32)
  setup_width = max(1, int(max(np.diff(archive.setup_black_offsets)[idx].max(),
                               np.diff(archive.setup_white_offsets)[idx].max())))
  return GameTable(
      moves=_padded(archive.moves, archive.offsets, idx, int(lengths.max()), p),
      length=lengths,
      setup_black=_padded(archive.setup_black, archive.setup_black_offsets, idx, setup_width, p),
      setup_white=_padded(archive.setup_white, archive.setup_white_offsets, idx, setup_width, p),
      first_player=archive.first_player[idx].astype(np.int8),
      winner=archive.winner[idx].astype(np.int8),
  )


def replay_positions(cfg: go.GoConfig, table: GameTable, games: jnp.ndarray,
                     move_numbers: jnp.ndarray) -> go.GoState:
  """The positions before move `move_numbers[g, s]` of game `games[g]`.

  Args:
    cfg: the game's configuration (its max_moves must cover the longest game).
    table: the games.
    games: [G'] int32 rows of the table.
    move_numbers: [G', S'] int32, each in [0, length of its game).

  Returns:
    A GoState batch of shape [G' * S'].
  """
  moves = table.moves[games].astype(jnp.int32)                                # [G', L]
  states = jax.vmap(lambda b, w, c: go.init(cfg, b, w, c))(
      table.setup_black[games].astype(jnp.int32), table.setup_white[games].astype(jnp.int32),
      table.first_player[games])
  step = jax.vmap(lambda s, a: go.step(cfg, s, a))
  rows, per_game = move_numbers.shape
  # Only as far as the latest position asked for, keeping each one when it is reached: the
  # replay's cost follows the positions drawn, not the longest game, and no state but the
  # kept ones is stored.
  picked = jax.tree.map(lambda x: jnp.broadcast_to(x[:, None], (rows, per_game) + x.shape[1:]),
                        states)                                                 # [G', S', ...]

  def play(t, carry):
    states, picked = carry
    states = step(states, jax.lax.dynamic_index_in_dim(moves, t, axis=1, keepdims=False))
    reached = move_numbers == t + 1                                             # [G', S']
    keep = lambda p, s: jnp.where(reached.reshape(reached.shape + (1,) * (s.ndim - 1)),
                                  s[:, None], p)
    return states, jax.tree.map(keep, picked, states)

  _, picked = jax.lax.fori_loop(0, jnp.max(move_numbers), play, (states, picked))
  return jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), picked)


def sample_states(cfg: go.GoConfig, table: GameTable, rng_key: jax.Array, *, num_games: int,
                  positions_per_game: int, first_game: int | jax.Array = 0
                  ) -> tuple[go.GoState, jnp.ndarray, jnp.ndarray, jnp.ndarray]:
  """num_games * positions_per_game random positions as states. Consumes rng_key.

  Games are drawn with probability proportional to their length and positions
  uniformly within each game, so every position of the table is equally likely.
  Draw i of the minibatch takes its own key, `fold_in(rng_key, first_game + i)`:
  devices that each sample their share of a minibatch (with their first draw's
  global index as `first_game`) hold together exactly the positions that one
  device sampling the whole minibatch would.

  Returns:
    (states [B], action [B] the move played there, game [B] the table row,
    move_number [B] moves played before the position).
  """
  games, move_numbers = jax.vmap(lambda k: _draw(table, k, positions_per_game))(
      _draw_keys(rng_key, num_games, first_game))
  states = replay_positions(cfg, table, games, move_numbers)
  game = jnp.repeat(games, positions_per_game)
  move_number = move_numbers.reshape(-1)
  action = table.moves[game, move_number].astype(jnp.int32)
  return states, action, game, move_number


def _draw_keys(rng_key: jax.Array, num_games: int, first_game) -> jax.Array:
  return jax.vmap(lambda i: jax.random.fold_in(rng_key, i))(first_game + jnp.arange(num_games))


def _draw(table: GameTable, key: jax.Array, positions_per_game: int):
  """One game (in proportion to its length) and positions_per_game move numbers in it."""
  k_game, k_move = jax.random.split(jax.random.fold_in(key, 0))
  cdf = jnp.cumsum(table.length.astype(jnp.int32))  # exact: every position counts once
  game = jnp.searchsorted(cdf, jax.random.randint(k_game, (), 0, cdf[-1]), side="right")
  length = table.length[game]
  u = jax.random.uniform(k_move, (positions_per_game,))
  return game, jnp.minimum((u * length).astype(jnp.int32), length - 1)


def sample(cfg: go.GoConfig, table: GameTable, rng_key: jax.Array, *, encoding: str,
           num_games: int, positions_per_game: int, augment: bool = True,
           first_game: int | jax.Array = 0) -> Batch:
  """A minibatch of num_games * positions_per_game random positions. Consumes rng_key.

  Positions as `sample_states` (`first_game` as there); with `augment` each
  position gets a random one of the 8 board symmetries, drawn from its game's
  key. Planes are those of `encoding` (go.features).
  """
  states, action, game, move_number = sample_states(
      cfg, table, rng_key, num_games=num_games, positions_per_game=positions_per_game,
      first_game=first_game)
  planes = go.features(cfg, states, encoding)
  value_target = (table.winner[game] * states.to_play).astype(jnp.float32)
  if augment:
    k = jax.vmap(lambda key: jax.random.randint(jax.random.fold_in(key, 1), (positions_per_game,),
                                                0, go.NUM_SYMMETRIES))(
        _draw_keys(rng_key, num_games, first_game)).reshape(-1)
    planes = jax.vmap(go.transform_planes)(planes, k)
    one_hot = jax.nn.one_hot(action, cfg.num_actions)
    action = jnp.argmax(jax.vmap(go.transform_policy)(one_hot, k), axis=-1).astype(jnp.int32)
  return Batch(planes=planes, action=action, value_target=value_target, game=game,
               move_number=move_number)
