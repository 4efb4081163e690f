"""Pattern codes of AlphaGo's fast policies: point states, canonical codes, dictionaries.

A pattern is the states of the points at fixed offsets around a centre (the 8
states of `agz_jax.alphago.patterns`), packed into two int32 words. Its canonical
code is the smallest over the 8 board symmetries; a Dictionary lists every
symmetric code of a harvested dictionary with its entry's id, for lookup by
binary search on the device.
"""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

# Point states.
EMPTY_POINT, OFF_BOARD = 0, 1
OWN_STONE, OPPONENT_STONE = 2, 5  # + (liberties capped at 3) - 1
NUM_STATES = 8
BITS = 3  # per point state

# (row, column) offsets of the pattern points around a centre.
RING = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))
DIAMOND = ((-2, 0), (-1, -1), (-1, 0), (-1, 1), (0, -2), (0, -1), (0, 1), (0, 2),
           (1, -1), (1, 0), (1, 1), (2, 0))

# Codes are two int32 words: the states of the first 10 points (30 bits), then
# those of the rest and any extra fields.
_HI_POINTS = 10
_PAD_WORD = np.iinfo(np.int32).max


@dataclasses.dataclass(frozen=True)
class Kind:
  """A kind of pattern: which points around its centre it reads.

  Attributes:
    name: "3x3", "response" or "diamond".
    offsets: the points read, as (row, column) offsets from the centre.
    centre: the centre's own state is part of the code (the previous stone of
      a response pattern).
    slot: a response pattern's code also holds which of its points the move is.
  """

  name: str
  offsets: tuple[tuple[int, int], ...]
  centre: bool = False
  slot: bool = False

  @property
  def num_points(self) -> int:
    return len(self.offsets) + int(self.centre)


KINDS = {"3x3": Kind("3x3", RING), "response": Kind("response", DIAMOND, centre=True, slot=True),
         "diamond": Kind("diamond", DIAMOND)}
# The stones a capture took, in a diamond and its centre (one bit per point).
_NAKADE = Kind("nakade", DIAMOND, centre=True)


def _images(offset: tuple[int, int]) -> list[tuple[int, int]]:
  """The 8 images of an offset under the board's symmetries (transpose, flips)."""
  out = []
  for g in range(8):
    r, c = (offset[1], offset[0]) if g & 4 else offset
    out.append((-r if g & 1 else r, -c if g & 2 else c))
  return out


@functools.cache
def point_permutations(kind: Kind) -> np.ndarray:
  """[8, K] int: under symmetry g the state of pattern point k moves to point perm[g, k]."""
  offsets = list(kind.offsets)
  perm = np.array([[offsets.index(_images(o)[g]) for o in offsets] for g in range(8)])
  if kind.centre:
    perm = np.concatenate([perm, np.full((8, 1), len(offsets))], axis=1)
  return perm


def pack(kind: Kind, states, slot=0):
  """Codes of patterns: ([...] hi, [...] lo) int32 from point states [..., K] and the slot.

  Works on numpy and jax arrays alike.
  """
  xp = jnp if isinstance(states, jax.Array) else np
  states = states.astype(xp.int32)
  k = states.shape[-1]
  shifts = BITS * (np.arange(k) % _HI_POINTS)
  words = states << shifts
  hi = xp.sum(words[..., :_HI_POINTS], axis=-1)
  lo = xp.sum(words[..., _HI_POINTS:], axis=-1)
  if kind.slot:
    lo = lo | (xp.asarray(slot, xp.int32) << (BITS * (k - _HI_POINTS)))
  return hi.astype(xp.int32), lo.astype(xp.int32)


def unpack(kind: Kind, hi: np.ndarray, lo: np.ndarray):
  """Inverse of `pack` on the host: ([..., K] states, [...] slot)."""
  k = kind.num_points
  states = np.zeros(hi.shape + (k,), np.int32)
  for i in range(k):
    word = hi if i < _HI_POINTS else lo
    states[..., i] = (word >> (BITS * (i % _HI_POINTS))) & (NUM_STATES - 1)
  slot = lo >> (BITS * (k - _HI_POINTS)) if kind.slot else np.zeros_like(hi)
  return states, slot


def _lex_min(hi, lo, axis):
  """The lexicographically smallest (hi, lo) along `axis`."""
  xp = jnp if isinstance(hi, jax.Array) else np
  best = xp.min(hi, axis=axis, keepdims=True)
  low = xp.min(xp.where(hi == best, lo, _PAD_WORD), axis=axis)
  return xp.squeeze(best, axis), low


def canonical(kind: Kind, states, slot=0):
  """The canonical code of patterns (the smallest over the 8 symmetries), numpy or jax.

  Args:
    kind: the kind of pattern.
    states: [..., K] point states.
    slot: [...] the move's point of a response pattern (ignored otherwise).

  Returns:
    ([...] hi, [...] lo) int32.
  """
  xp = jnp if isinstance(states, jax.Array) else np
  perm = point_permutations(kind)
  inverse = np.argsort(perm, axis=1)                      # new point j holds old point inverse[j]
  moved = xp.stack([states[..., inverse[g]] for g in range(8)], axis=-2)      # [..., 8, K]
  slots = 0
  if kind.slot:
    slot = xp.asarray(slot)
    slots = xp.stack([xp.asarray(perm[g])[slot] for g in range(8)], axis=-1)  # [..., 8]
  hi, lo = pack(kind, moved, slots)
  return _lex_min(hi, lo, axis=-1)


@functools.cache
def nakade_table() -> tuple[np.ndarray, int]:
  """(ids [8192] int32, count): the canonical id of each 13-bit capture mask (diamond + centre)."""
  masks = np.arange(2 ** _NAKADE.num_points)
  bits = (masks[:, None] >> np.arange(_NAKADE.num_points)) & 1
  hi, lo = canonical(_NAKADE, bits)
  combined = hi.astype(np.int64) << 32 | lo.astype(np.int64)
  unique, ids = np.unique(combined, return_inverse=True)
  return ids.astype(np.int32), len(unique)


@struct.dataclass
class Dictionary:
  """One kind's patterns, sorted for lookup by raw code. M entries (a power of two).

  Attributes:
    hi: [M] int32 first code word, sorted (with lo) lexicographically; padding
      entries hold the largest int32 in both words.
    lo: [M] int32 second code word.
    ids: [M] int32 the pattern's id (its row in the harvested dictionary), -1
      on padding.
  """

  hi: jnp.ndarray
  lo: jnp.ndarray
  ids: jnp.ndarray

  @classmethod
  def expand(cls, kind: Kind, codes: np.ndarray) -> "Dictionary":
    """The lookup table of a harvested dictionary (host, numpy).

    Args:
      kind: the patterns' kind.
      codes: [C, 2] int32 canonical (hi, lo) codes; rows of -1 are unused.
    """
    codes = np.asarray(codes, np.int32)
    used = np.nonzero(codes[:, 0] >= 0)[0]
    states, slot = unpack(kind, codes[used, 0], codes[used, 1])
    perm = point_permutations(kind)
    inverse = np.argsort(perm, axis=1)
    his, los, ids = [], [], []
    for g in range(8):
      hi, lo = pack(kind, states[:, inverse[g]], perm[g][slot] if kind.slot else 0)
      his.append(hi)
      los.append(lo)
      ids.append(used)
    combined = np.concatenate(his).astype(np.int64) << 32 | np.concatenate(los).astype(np.int64)
    combined, first = np.unique(combined, return_index=True)
    ids = np.concatenate(ids)[first].astype(np.int32)
    size = 1 << max(1, int(np.ceil(np.log2(len(combined) + 1))))
    hi = np.full(size, _PAD_WORD, np.int32)
    lo = np.full(size, _PAD_WORD, np.int32)
    out_ids = np.full(size, -1, np.int32)
    hi[:len(combined)] = combined >> 32
    lo[:len(combined)] = combined & 0xFFFFFFFF
    out_ids[:len(combined)] = ids
    return cls(hi=hi, lo=lo, ids=out_ids)

  def lookup(self, hi: jnp.ndarray, lo: jnp.ndarray) -> jnp.ndarray:
    """Ids of the patterns with codes (hi, lo) (any shape), -1 where not in the dictionary."""
    size = self.hi.shape[0]
    pos = jnp.zeros(hi.shape, jnp.int32)
    step = size // 2
    while step:  # branchless binary search: pos counts the entries below the code
      key_hi, key_lo = self.hi[pos + step - 1], self.lo[pos + step - 1]
      below = (key_hi < hi) | ((key_hi == hi) & (key_lo < lo))
      pos = jnp.where(below, pos + step, pos)
      step //= 2
    found = (self.hi[pos] == hi) & (self.lo[pos] == lo)
    return jnp.where(found, self.ids[pos], -1)
