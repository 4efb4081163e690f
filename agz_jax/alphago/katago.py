"""KataGo's input planes (Wu 2019; its version 7 inputs), the encodings "katago" (with its
ladder planes) and "katago_noladders" (those four planes left empty) of `go.features`
(ENCODINGS here; agz_jax registers them). The three designs side by side: docs/encodings.md.

The third of the seeds' input designs: AlphaGo's 48 hand-made planes, AlphaGo Zero's 17 raw
ones, and KataGo's small set of chosen Go knowledge. X = player to move, O = opponent:

  ====== ========================================================================
  plane  set on
  ====== ========================================================================
  0      the board (ones)
  1, 2   X stones / O stones
  3-5    a stone whose chain has 1 / 2 / 3 liberties
  6      a point X may not play only because the position would repeat (positional
         superko, the simple ko's retaking point among them)
  7, 8   zeros (KataGo: encore ko marks; our rules have no encore)
  9-13   where the move 1, 2, 3, 4, 5 plies ago was played (O, X, O, X, O); nothing
         for a pass or before the game's first move
  14     a stone of a chain with 1 or 2 liberties that a ladder captures (a chain in
         atari with its owner to move first; one of two liberties with its opponent
         playing first on either liberty)
  15, 16 the same on the board 1 and 2 plies ago
  17     a liberty of an O chain of two liberties where X's atari starts a working
         ladder
  18, 19 X's / O's area: Tromp-Taylor's (stones, and empty regions that reach one
         colour only), overruled by each side's pass-alive area (go.pass_alive, Benson)
  20, 21 zeros (KataGo: the second encore's starting stones)
  ====== ========================================================================

and 8 global features, each a plane of one value, after the 22 (a resnet reading this
encoding projects them to a bias per channel of its first convolution instead of convolving
them: nets.GLOBAL_INPUTS, AlphaZeroNet.global_inputs):

  ====== ========================================================================
  22-26  the move 1, 2, 3, 4, 5 plies ago was a pass (KataGo's globals 0-4)
  27     komi from X's view (komi for white, -komi for black), clipped to the board's
         points + 20, divided by 20 (its global 5)
  28     a pass now would end the game: the last move was a pass (its global 14)
  29     komi parity: a triangle wave of X's komi with period 2, 0 where a drawn game
         is possible (even komi on a board of even points, odd komi on odd), +-0.5
         half a point either side (its global 18)
  ====== ========================================================================

KataGo's other globals are constant under our rules (area scoring, positional superko,
suicide illegal, no encore, no button, no tax, no playout doubling) and are left out: its
ko-rule pair (1, 0.5), the suicide, territory-scoring, tax and encore flags, the playout
doubling advantage and the button (all 0).

Where the feature-design article of the seeds differs: it groups the 22 planes as 5 basic +
5 history + 3 ko + 9 rule planes; KataGo's code (cpp/neuralnet/nninputs.cpp, fillRowV7) has
the layout above, which we follow. Where we differ from KataGo's code: plane 6 marks
positional superko (its code marks the superko-banned points of whichever ko rule is in
force, which under its positional rule is the same set); the ladder planes use this
project's ladder reader (agz_jax.alphago.ladders), whose rules differ in details from
KataGo's search (see `_ladder_planes`); the area planes' pass-alive test is Benson's with
suicide illegal, as KataGo computes it for rules without suicide.
"""

import functools

import jax
import jax.numpy as jnp

from agz_jax import go
from agz_jax.alphago import planes as alphago_planes
from agz_jax.go import EMPTY, GoConfig, GoState

NUM_SPATIAL = 22
NUM_GLOBAL = 8
ON_BOARD, OWN_STONES, OPPONENT_STONES = 0, 1, 2  # spatial planes (module docstring)
SELF_KOMI = 5  # the global feature of komi from X's view, / 20
HISTORY = 6  # boards: the current one and the five before it (the last five moves)


def global_features(cfg: GoConfig, state: GoState) -> jnp.ndarray:
  """[NUM_GLOBAL] float32: one game's global features (module docstring)."""
  boards = jnp.concatenate([state.board[None], state.previous_boards[:HISTORY - 1]])
  ages = jnp.arange(1, HISTORY)
  passed = jnp.all(boards[:-1] == boards[1:], axis=1) & (ages <= state.move_count)
  points = cfg.size * cfg.size
  self_komi = jnp.where(state.to_play == go.WHITE, cfg.komi, -cfg.komi)
  self_komi = jnp.clip(self_komi, -(points + 20), points + 20).astype(jnp.float32)
  return jnp.concatenate([passed.astype(jnp.float32),
                          jnp.stack([self_komi / 20, passed[0].astype(jnp.float32),
                                     komi_wave(self_komi, points)])])


def komi_wave(komi, points: int):
  """KataGo's komi parity wave: a triangle of period 2 in [-0.5, 0.5], 0 at the komis where
  a game can be drawn (of the parity of the board's points)."""
  floor = (2 * jnp.floor(komi / 2) if points % 2 == 0
           else 2 * jnp.floor((komi - 1) / 2) + 1)
  delta = jnp.clip(komi - floor, 0.0, 2.0)
  return jnp.where(delta < 0.5, delta, jnp.where(delta < 1.5, 1 - delta, delta - 2))


def last_moves(cfg: GoConfig, state: GoState) -> jnp.ndarray:
  """[P, 5] bool: where the moves 1..5 plies ago were played (passes and moves before the
  game's start mark nothing)."""
  boards = jnp.concatenate([state.board[None], state.previous_boards[:HISTORY - 1]])
  boards = boards.astype(jnp.int32)
  me = state.to_play.astype(jnp.int32)
  ages = jnp.arange(1, HISTORY)
  mover = jnp.where(ages % 2 == 1, -me, me)                                    # [5]
  placed = (boards[1:] == EMPTY) & (boards[:-1] == mover[:, None])            # [5, P]
  # One new stone, or nothing (a pass; a setup's stones are no move).
  one = (jnp.sum(placed, axis=1) == 1) & (ages <= state.move_count)
  return (placed & one[:, None]).T


def area(cfg: GoConfig, board: jnp.ndarray) -> jnp.ndarray:
  """[P] int8: each point's owner (+1 black, -1 white, 0 neither) by KataGo's area count:
  Tromp-Taylor's, overruled by each side's pass-alive area."""
  alive = go.pass_alive(cfg, board)
  state = go.init(cfg).replace(board=board.astype(jnp.int8))
  return jnp.where(alive != 0, alive, go.ownership(cfg, state)).astype(jnp.int8)


def _spatial_without_ladders(cfg: GoConfig, state: GoState) -> jnp.ndarray:
  """[P, 22] bool: one game's planes, the ladder planes (14-17) empty."""
  p = cfg.num_points
  me = state.to_play.astype(jnp.int32)
  board = state.board.astype(jnp.int32)
  chain = state.chain.astype(jnp.int32)
  empty = board == EMPTY
  libs = alphago_planes.liberty_counts(p, empty, go.neighbour_values(cfg, chain, p))[chain]
  stone = ~empty
  owner = area(cfg, board)
  zeros = jnp.zeros(p, bool)
  planes = [jnp.ones(p, bool), board == me, board == -me,
            stone & (libs == 1), stone & (libs == 2), stone & (libs == 3),
            go.ko_banned(cfg, state), zeros, zeros]
  moves = last_moves(cfg, state)
  planes += [moves[:, k] for k in range(5)]
  planes += [zeros] * 4
  planes += [owner == me, owner == -me, zeros, zeros]
  return jnp.stack(planes, axis=1)


def _encode(ladders: bool, cfg: GoConfig, states: GoState, *, ladder=None) -> jnp.ndarray:
  """A flat batch's planes (go.features' encoding function): [B, N, N, 30]."""
  n = cfg.size
  spatial = jax.vmap(functools.partial(_spatial_without_ladders, cfg))(states)  # [B, P, 22]
  if ladders:
    spatial = spatial.at[:, :, 14:18].set(_ladder_planes(cfg, states, ladder))
  glob = jax.vmap(functools.partial(global_features, cfg))(states)              # [B, 8]
  glob = jnp.broadcast_to(glob[:, None, :], (glob.shape[0], n * n, NUM_GLOBAL))
  planes = jnp.concatenate([spatial.astype(jnp.float32), glob], axis=-1)
  return planes.reshape(-1, n, n, NUM_SPATIAL + NUM_GLOBAL)


def _ladder_planes(cfg: GoConfig, states: GoState, ladder) -> jnp.ndarray:
  """[B, P, 4] bool: planes 14-17 (see the module docstring and `alphago_planes.laddered`)."""
  boards = jnp.concatenate([states.board[:, None], states.previous_boards[:, :2]], axis=1)
  me = states.to_play.astype(jnp.int32)
  num, p = boards.shape[0], cfg.num_points
  # Every board read at once: the current ones, then 1 and 2 plies ago.
  flat = boards.reshape(num * 3, p).astype(jnp.int32)
  movers = jnp.concatenate([me, -me, me])
  stones, moves = alphago_planes.laddered(cfg, flat, movers, ladder)
  stones = stones.reshape(3, num, p)
  start = moves.reshape(3, num, p)[0]
  return jnp.stack([stones[0], stones[1], stones[2], start], axis=-1)


NUM_PLANES = NUM_SPATIAL + NUM_GLOBAL
# This module's encodings: name -> go.register_encoding's keyword arguments (the package
# registers them, agz_jax/__init__.py).
ENCODINGS = {
    "katago": {"num_planes": NUM_PLANES, "history": HISTORY,
               "encode": functools.partial(_encode, True)},
    "katago_noladders": {"num_planes": NUM_PLANES, "history": HISTORY,
                         "encode": functools.partial(_encode, False)},
}
