"""Benson's unconditional life: the pass-alive stones and territory of both players.

`pass_alive(cfg, board)` marks the points that are safe whatever the opponent
plays, even if their owner passes for ever: KataGo's `Board::calculateArea`
with pass-alive area only (no non-pass-alive stones, no big territories), its
multi-stone suicide illegal as in `agz_jax.go`.

Definitions, for one player X (the other is O):

* A chain is a maximal 4-connected set of X stones; an X-region a maximal
  4-connected set of points that are not X (empty or O). Only regions with an
  empty point count: a region made only of O stones (a board no legal game
  reaches, its stones without a liberty) is never vital and never X's area.
* A region is vital to a chain when every empty point of the region is a
  liberty of the chain (its O stones do not matter).
* Benson's iteration: every chain with fewer than two vital regions among the
  regions still present is removed, then every region next to a removed chain
  (some point of it, empty or O, adjacent to the chain); repeated until no
  chain is removed. The chains left are pass-alive.
* X's area: the stones of its pass-alive chains, and every region left (all
  chains next to it pass-alive) with at most one point, empty or O, that has
  no X stone next to it (KataGo's "internal spaces"): O cannot make two eyes
  there, so its stones in it are dead. This is KataGo's rule rather than
  "vital to one of its chains": a 3x3 eye space whose centre touches no X
  stone counts, and a large region that touches X at every empty point but
  holds a big O group does not.

Both players' areas are computed independently; where they overlap (KataGo
says they cannot on boards a game reaches) white's wins, as in KataGo, which
marks black first and white over it.

How it runs on the device: chains and regions are named by their smallest
point with label propagation (plus pointer jumping) in a `lax.while_loop`; a
region is vital to at most the four chains next to its first empty point, so
per region four candidate chains are checked against every empty point with
segment reductions; each Benson round is O(P) segment sums. Fixed shapes
throughout: jit with a static cfg and vmap over boards.
"""

import jax
import jax.numpy as jnp

from agz_jax.go.config import GoConfig
from agz_jax.go.rules import neighbour_values
from agz_jax.go.state import BLACK, EMPTY, WHITE


def _components(cfg: GoConfig, mine: jnp.ndarray) -> jnp.ndarray:
  """Names the 4-connected components of `mine` and of `~mine` by their smallest point.

  Args:
    cfg: the game's configuration.
    mine: [P] bool.

  Returns:
    [P] int32: X's chains where `mine`, X-regions elsewhere.
  """
  p = cfg.num_points
  same = neighbour_values(cfg, mine.astype(jnp.int8), 2) == mine.astype(jnp.int8)[:, None]

  def relax(carry):
    labels, _ = carry
    nbr = jnp.where(same, neighbour_values(cfg, labels, p), p)
    new = jnp.minimum(labels, jnp.min(nbr, axis=1))
    # A label is a point of the same component, no larger: its own label is too.
    new = new[new]
    return new, jnp.any(new != labels)

  init = (jnp.arange(p, dtype=jnp.int32), jnp.bool_(True))
  labels, _ = jax.lax.while_loop(lambda c: c[1], relax, init)
  return labels


def _candidates(cfg: GoConfig, empty, region, nbr_chain) -> tuple[jnp.ndarray, jnp.ndarray]:
  """The chains a region can be vital to: those next to its first empty point.

  Returns:
    ([P + 1, 4] int32 by region name: distinct chain names, P for none;
    [P + 1] bool by region name: the region has an empty point).
  """
  p = cfg.num_points
  first = jax.ops.segment_min(jnp.where(empty, jnp.arange(p), p), region, num_segments=p + 1)
  first = jnp.minimum(first, p)  # an empty segment's minimum is the dtype's largest value
  padded = jnp.concatenate([nbr_chain, jnp.full((1, 4), p, nbr_chain.dtype)])
  cand = padded[first]
  columns = [cand[:, 0]]
  for k in range(1, 4):
    repeat = jnp.any(cand[:, :k] == cand[:, k:k + 1], axis=1)
    columns.append(jnp.where(repeat, p, cand[:, k]))
  return jnp.stack(columns, axis=1), first < p


def _vital(cfg: GoConfig, empty, region, nbr_chain, cand) -> jnp.ndarray:
  """[P + 1, 4] bool: region r is vital to chain cand[r, k]."""
  p = cfg.num_points
  liberty = jnp.any(nbr_chain[:, None, :] == cand[region][:, :, None], axis=-1)       # [P, 4]
  missed = jax.ops.segment_max((empty[:, None] & ~liberty).astype(jnp.int32), region,
                               num_segments=p + 1)
  return (cand < p) & ~(missed > 0)


def _benson(cfg: GoConfig, other, region, nbr_chain, cand, vital):
  """Benson's iteration.

  Returns:
    ([P + 1] bool by chain name: pass-alive; [P + 1] bool by region name: no
    removed chain next to it).
  """
  p = cfg.num_points
  flat_cand = cand.reshape(-1)

  def round_(carry):
    alive, present, _ = carry
    counted = (vital & present[:, None]).reshape(-1).astype(jnp.int32)
    count = jax.ops.segment_sum(counted, flat_cand, num_segments=p + 1)
    new_alive = alive & (count >= 2)
    next_to_dead = jnp.any((nbr_chain < p) & ~new_alive[nbr_chain], axis=1) & other
    touched = jax.ops.segment_max(next_to_dead.astype(jnp.int32), region, num_segments=p + 1)
    return new_alive, ~(touched > 0), jnp.any(new_alive != alive)

  init = (jnp.ones(p + 1, bool), jnp.ones(p + 1, bool), jnp.bool_(True))
  alive, present, _ = jax.lax.while_loop(lambda c: c[2], round_, init)
  return alive, present


def _area_of(cfg: GoConfig, board: jnp.ndarray, colour) -> jnp.ndarray:
  """[P] bool: the pass-alive area of `colour` (stones and territory)."""
  p = cfg.num_points
  mine = board == colour
  other = ~mine
  empty = board == EMPTY
  labels = _components(cfg, mine)
  chain = jnp.where(mine, labels, p)
  region = jnp.where(other, labels, p)
  nbr_chain = neighbour_values(cfg, chain, p)                                       # [P, 4]
  cand, has_empty = _candidates(cfg, empty, region, nbr_chain)
  vital = _vital(cfg, empty, region, nbr_chain, cand)
  alive, present = _benson(cfg, other, region, nbr_chain, cand, vital)

  internal = other & jnp.all(nbr_chain == p, axis=1)
  num_internal = jax.ops.segment_sum(internal.astype(jnp.int32), region, num_segments=p + 1)
  owned = present & has_empty & (num_internal <= 1)
  return (mine & alive[chain]) | (other & owned[region])


def pass_alive(cfg: GoConfig, board: jnp.ndarray) -> jnp.ndarray:
  """Benson's pass-alive area of both players (see the module docstring).

  Args:
    cfg: the game's configuration (static).
    board: [P] int, 1 black, -1 white, 0 empty.

  Returns:
    [P] int8: +1 black's pass-alive area, -1 white's, 0 neither.
  """
  board = jnp.asarray(board).astype(jnp.int8)
  areas = jax.vmap(lambda colour: _area_of(cfg, board, colour))(jnp.array([BLACK, WHITE], jnp.int8))
  return jnp.where(areas[1], jnp.int8(WHITE), jnp.where(areas[0], jnp.int8(BLACK), jnp.int8(EMPTY)))
