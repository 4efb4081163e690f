"""AlphaGo's (2016) input planes: "alphago48" and "alphago49", registered with `go.features`.

* "alphago48": the 2016 AlphaGo policy network (Silver et al. 2016, Extended
  Data Table 2), in the paper's order, X = player to move, O = opponent:

  ====== ======================== ==============================================
  planes name                     set on
  ====== ======================== ==============================================
  0-2    stone colour             X stones / O stones / empty points
  3      ones                     every point
  4-11   turns since              a stone placed 1, 2, ..., 7 moves ago (passes
                                  count); 11: 8 or more, setup stones, or older
                                  than the kept history
  12-19  liberties                a stone whose chain has 1, ..., 7, 8+ liberties
  20-27  capture size             a legal move capturing 0, ..., 6, 7+ O stones
  28-35  self-atari size          a legal move after which its chain (1, ..., 7,
                                  8+ stones) has one liberty
  36-43  liberties after move     a legal move after which its chain (captures
                                  done) has 1, ..., 7, 8+ liberties
  44     ladder capture           a legal move that ataris an O chain of two
                                  liberties which then cannot escape the ladder
  45     ladder escape            a legal move extending an X chain in atari
                                  that escapes (3+ liberties, or the ladder the
                                  opponent then starts fails)
  46     sensibleness             a legal move that does not fill an X eye
  47     zeros                    nowhere
  ====== ======================== ==============================================

* "alphago49": those and a 49th plane, all ones when black is to play (the value
  network's "player colour").

"Legal" is `go.legal_actions` (no suicide, positional superko). An X eye is an
empty point whose on-board neighbours are all X stones, with fewer than two
"defects": O stones on its diagonals, plus one if the point is on the edge.
Ladders are read by `agz_jax.alphago.ladders` (the rules are in its docstring). A
candidate is a move and an adjacent target chain; every candidate is read, the
candidates of a whole batch together on `LadderSettings.lanes` reading lanes per position.

Where the feature-design source article differs: its simplified table lists 16
planes of black/white history instead of turns since, liberties of 1-4 per
colour instead of 1-8+ per stone, "atari" planes instead of capture and
self-atari sizes, edge-distance planes that AlphaGo did not have, and no
liberties-after-move or sensibleness planes. We follow the AlphaGo paper.
"""

import concurrent.futures
import dataclasses
import functools
import os
import types

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import go
from agz_jax.alphago import ladders
from agz_jax.alphago.lanes import backend_kind
from agz_jax.go import BLACK, EMPTY, GoConfig, GoState


@dataclasses.dataclass(frozen=True)
class LadderSettings:
  """How the ladder planes are read; only their speed depends on it, never the planes.

  Attributes:
    reader: where: "device", inside the program that asks for the planes, or "host", on the
      host's CPU through a callback, the batch split into one chunk per core (of at least
      `host_chunk` positions) and read with the CPU's settings. The reader is thousands of
      short dependent loop turns, which a GPU runs far slower than a CPU (BENCHMARKS.md has
      both); on the host the planes cost what they cost a CPU, plus copying the boards there
      and two planes back.
    lanes: readings in progress at once, per position of a batch. The loop takes about
      (moves tried) / lanes steps plus the longest reading. On a CPU its cost is lanes times
      steps, so few lanes are cheapest (bench/features_speed.py); an accelerator runs the
      lanes side by side, so there more lanes cost little.
    shrink: how the lanes narrow for the last long readings (see `ladders.read`): on a CPU a
      step costs in proportion to its lanes; an accelerator runs them side by side.
    host_chunk: the fewest positions of a chunk read on the host.
  """

  reader: str = "device"
  lanes: float = 0.125
  shrink: int = 4
  host_chunk: int = 16

  def __post_init__(self):
    if self.reader not in ("device", "host"):
      raise ValueError(f"ladder reader must be 'device' or 'host', got {self.reader!r}")
    if not self.lanes > 0 or self.shrink < 1 or self.host_chunk < 1:
      raise ValueError(f"ladder lanes must be positive, shrink and host_chunk at least 1: {self}")

  def lanes_for(self, num_boards: int) -> int:
    """The reading lanes of a batch of `num_boards` positions."""
    return max(1, int(self.lanes * num_boards))


# Each backend's settings, chosen here and nowhere else (`ladder_settings`).
LADDER_DEFAULTS = types.MappingProxyType({
    "cpu": LadderSettings(reader="device", lanes=0.125, shrink=4),
    "accelerator": LadderSettings(reader="host", lanes=2.0, shrink=1),
})


def ladder_settings(kind: str | None = None) -> LadderSettings:
  """The ladder settings of a backend kind ('cpu' or 'accelerator'; default: this backend's)."""
  return LADDER_DEFAULTS[kind or backend_kind()]

@functools.cache
def _point_bits(p: int) -> np.ndarray:
  """[P, W] uint32: point q as a bitset of W = ceil(P / 32) words (bit q % 32 of word q // 32)."""
  bits = np.zeros((p, -(-p // 32)), np.uint32)
  for q in range(p):
    bits[q, q // 32] = np.uint32(1) << np.uint32(q % 32)
  return bits


@functools.cache
def _neighbour_bits(size: int) -> np.ndarray:
  """[P, W] uint32: the orthogonal neighbours of each point as a bitset."""
  p = size * size
  bits = _point_bits(p)
  table = go.neighbour_table(size)
  out = np.zeros_like(bits)
  for q in range(p):
    for r in table[q]:
      if r < p:
        out[q] |= bits[r]
  return out


def _one_hot(value, mask, num: int) -> jnp.ndarray:
  """[P, num] planes: plane v is set where mask and value == v (value clipped to num - 1)."""
  v = jnp.clip(value, 0, num - 1)
  return (v[:, None] == jnp.arange(num)[None, :]) & mask[:, None]


def _turns_since(cfg: GoConfig, state: GoState) -> jnp.ndarray:
  """[P] int32: moves since the stone on each point was placed, 1 .. 7, 8 meaning 8 or more."""
  ages = jnp.arange(1, 8)
  changed = (state.previous_boards[:7] != state.board[None, :]) & (ages[:, None] <= state.move_count)
  return jnp.where(jnp.any(changed, axis=0), jnp.argmax(changed, axis=0) + 1, 8)


def _ladder_candidates(cfg: GoConfig, board, chain, me, target, capture, escape):
  """The ladders a batch of B positions asks the reader to read (see `_ladder_planes`).

  Returns:
    count: [] int32, how many. capacity: the most there may be. ladder_at: i -> the
    `ladders.Ladder` ladder i starts. which: i -> (is it a capture, its position, its move,
    the direction of its chain from the move).
  """
  num_boards, p = board.shape
  # The ladders to read, by candidate (b, move, direction) flattened: every capture
  # candidate, then every escape candidate. A position has at most 4P/3 of them: a
  # candidate names a chain (two per chain of two liberties, at those liberties; one
  # per chain in atari) and an empty point in one of its four directions, so with E
  # empty points there are at most min(2 (P - E), 4 E) <= 4P/3.
  capacity = num_boards * -(-4 * p // 3)
  listed = [jnp.nonzero(mask.reshape(-1), size=capacity, fill_value=0)[0]
            for mask in (capture, escape)]
  num_capture = jnp.sum(capture)
  count = num_capture + jnp.sum(escape)

  def which(i):
    """Ladder i: is it a capture, its position, move and direction."""
    is_capture = i < num_capture
    j = jnp.where(is_capture, listed[0][jnp.minimum(i, capacity - 1)],
                  listed[1][jnp.clip(i - num_capture, 0, capacity - 1)])
    return is_capture, j // (4 * p), j // 4 % p, j % 4

  mine = ladders.to_bits(cfg, board == me[:, None])                           # [B, N]
  theirs = ladders.to_bits(cfg, board == -me[:, None])

  def ladder_at(i):
    is_capture, b, move, k = which(i)
    prey = ladders.to_bits(cfg, chain[b] == target[b, move, k])
    return ladders.start(cfg, mine[b], theirs[b], prey, move, is_capture)

  return count, capacity, ladder_at, which


def _ladder_planes(cfg: GoConfig, ladder: LadderSettings, board, chain, me, target, capture,
                   escape):
  """Ladder capture and escape planes of a batch of B positions, read where `ladder.reader`
  says (see `_read_ladder_planes`); the same planes either way."""
  if ladder.reader == "device":
    return _read_ladder_planes(cfg, board, chain, me, target, capture, escape, ladder)
  shape = jax.ShapeDtypeStruct(board.shape, jnp.bool_)
  return jax.pure_callback(functools.partial(_host_ladder_planes, cfg, ladder.host_chunk),
                           (shape, shape), board, chain, me, target, capture, escape,
                           vmap_method="broadcast_all")


@functools.lru_cache(maxsize=None)
def _host_reader(cfg: GoConfig):
  """The ladder planes of a chunk of positions, compiled for the host's CPU (its settings)."""
  return jax.jit(functools.partial(_read_ladder_planes, cfg, ladder=ladder_settings("cpu")))


def _host_ladder_planes(cfg: GoConfig, host_chunk: int, board, chain, me, target, capture,
                        escape):
  """`_read_ladder_planes` on the host's CPU, for arrays with any leading dimensions (vmap),
  in chunks read side by side on the host's cores."""
  lead, p = board.shape[:-1], board.shape[-1]
  flat = [np.asarray(a).reshape((-1,) + a.shape[len(lead):])
          for a in (board, chain, me, target, capture, escape)]
  num_boards = flat[0].shape[0]
  step = max(host_chunk, -(-num_boards // (os.cpu_count() or 1)))
  cpu = jax.local_devices(backend="cpu")[0]
  read = _host_reader(cfg)
  # Whole chunks only (a last short chunk padded with copies of the first position), so that
  # one compiled program serves every call; jax releases the GIL while a chunk runs.
  chunks = []
  for start in range(0, num_boards, step):
    part = [a[start:start + step] for a in flat]
    short = step - part[0].shape[0]
    if short:
      part = [np.concatenate([a, np.repeat(a[:1], short, axis=0)]) for a in part]
    chunks.append(jax.device_put(part, cpu))
  with concurrent.futures.ThreadPoolExecutor(max(1, min(len(chunks), os.cpu_count() or 1))) as pool:
    done = list(pool.map(lambda part: jax.block_until_ready(read(*part)), chunks))
  planes = [np.concatenate([np.asarray(d[i]) for d in done])[:num_boards].reshape(lead + (p,))
            for i in range(2)]
  return tuple(planes)


def _read_ladder_planes(cfg: GoConfig, board, chain, me, target, capture, escape,
                        ladder: LadderSettings):
  """Ladder capture and escape planes of a batch of B positions, read where the program runs.

  The candidates of the whole batch are read together on `ladder.lanes` lanes per
  position (see `ladders.read`), so the planes of a position never depend on
  the rest of the batch.

  Args:
    cfg: the game's configuration.
    board: [B, P] int32. chain: [B, P] int32 chain names. me: [B] int32 player to move.
    target: [B, P, 4] int32, the chain next to each move in each direction.
    capture: [B, P, 4] bool, the move ataris that O chain of two liberties.
    escape: [B, P, 4] bool, the move extends that X chain in atari.
    ladder: the lanes and their narrowing to read with.

  Returns:
    ([B, P] bool ladder capture, [B, P] bool ladder escape).
  """
  num_boards, p = board.shape
  count, capacity, ladder_at, which = _ladder_candidates(cfg, board, chain, me, target, capture,
                                                         escape)
  outcome = ladders.read(cfg, count, capacity, ladder_at, ladder.lanes_for(num_boards),
                         shrink=ladder.shrink)
  # (outcome is UNDECIDED past `count`: no hit there)
  is_capture, b, move, _ = jax.vmap(which)(jnp.arange(capacity))
  where = b * (p + 1) + move
  planes = []
  for hit in (is_capture & (outcome == ladders.CAPTURED), ~is_capture & (outcome == ladders.ESCAPED)):
    plane = jnp.zeros(num_boards * (p + 1), bool).at[jnp.where(hit, where, num_boards * (p + 1))]
    planes.append(plane.set(True, mode="drop").reshape(num_boards, p + 1)[:, :p])
  return tuple(planes)


def _alphago(cfg: GoConfig, states: GoState, colour_plane: bool,
             ladder: LadderSettings) -> jnp.ndarray:
  """AlphaGo's 48 (or 49) planes of a batch of B games; see the module docstring."""
  planes, board, chain, me, target, capture, escape = jax.vmap(
      functools.partial(_alphago_without_ladders, cfg, colour_plane=colour_plane))(states)
  ladder_capture, ladder_escape = _ladder_planes(cfg, ladder, board, chain, me, target, capture,
                                                 escape)
  n = cfg.size
  ladder = jnp.stack([ladder_capture, ladder_escape], axis=-1).reshape(-1, n, n, 2)
  return planes.at[..., 44:46].set(ladder.astype(jnp.float32))


def laddered(cfg: GoConfig, boards: jnp.ndarray, movers: jnp.ndarray,
             ladder: LadderSettings | None = None):
  """KataGo's ladder features of B boards (agz_jax.alphago.katago's planes 14 and 17).

  Each board is read from both sides: with X to move, AlphaGo's ladder capture and escape
  planes (the reader's rules: agz_jax.alphago.ladders). A chain of two liberties is laddered
  when an atari on one of its liberties captures it in a ladder (a liberty marked on its
  opponent's capture plane: where one move ataris two such chains, both count); a chain in
  atari, with its owner to move first, when extending on its liberty does not escape (its
  liberty is not on its owner's escape plane). Superko is read as far as each board's own
  position (no earlier ones are known).

  Args:
    boards: [B, P] int32. movers: [B] the player to move on each (X).
    ladder: how the ladders are read (default: this backend's).

  Returns:
    ([B, P] bool the stones of laddered chains, either colour; [B, P] bool the moves where
    X's atari starts a working ladder on an O chain of two liberties: AlphaGo's plane 44).
  """
  num, p = boards.shape
  sides = jnp.concatenate([movers, -movers]).astype(jnp.int32)                 # [2B]
  both = jnp.concatenate([boards, boards]).astype(jnp.int32)

  def state_of(board, side):
    return go.init(cfg).replace(board=board.astype(jnp.int8),
                                chain=go.chains(cfg, board).astype(jnp.int16),
                                to_play=side.astype(jnp.int8))

  states = jax.vmap(state_of)(both, sides)
  _, board, chain, me, target, capture, escape = jax.vmap(
      functools.partial(_alphago_without_ladders, cfg, colour_plane=False))(states)
  captures, escapes = _ladder_planes(cfg, ladder or ladder_settings(), board, chain, me,
                                     target, capture, escape)

  def chains_laddered(board, chain, side, captures, escapes):
    nbr_chain = go.neighbour_values(cfg, chain, p)                             # [P, 4]
    empty = board == EMPTY
    libs = liberty_counts(p, empty, nbr_chain)[chain]                          # [P]
    colour = jnp.append(board, EMPTY)                                           # by chain name
    by_chain = lambda hit: jax.ops.segment_max(
        jnp.broadcast_to(hit[:, None], nbr_chain.shape).reshape(-1).astype(jnp.int32),
        nbr_chain.reshape(-1), num_segments=p + 1) > 0
    attacked = by_chain(empty & captures) & (colour == -side)
    escaping = by_chain(empty & escapes) & (colour == side)
    lib_of_chain = jax.ops.segment_max(libs, chain, num_segments=p + 1)
    chain_hit = ((attacked & (lib_of_chain == 2))
                 | (~escaping & (colour == side) & (lib_of_chain == 1)))
    return (board != EMPTY) & chain_hit[chain]

  hit = jax.vmap(chains_laddered)(board, chain, me, captures, escapes)          # [2B, P]
  return hit[:num] | hit[num:], captures[:num]


def liberty_counts(p: int, empty, nbr_chain) -> jnp.ndarray:
  """[P + 1] int32: each chain's liberties (distinct empty points next to it), by name."""
  repeated = [nbr_chain[:, k] == nbr_chain[:, j] for k in range(4) for j in range(k)]
  distinct = ~jnp.stack([jnp.zeros(nbr_chain.shape[0], bool), repeated[0],
                         repeated[1] | repeated[2], repeated[3] | repeated[4] | repeated[5]],
                        axis=1)
  counted = (empty[:, None] & distinct & (nbr_chain < p)).astype(jnp.int32)
  return jax.ops.segment_sum(counted.reshape(-1), nbr_chain.reshape(-1), num_segments=p + 1)


def _liberty_bits(p: int, empty, nbr_chain, distinct) -> jnp.ndarray:
  """[P+1, W] uint32: per chain name its liberties as a bitset (W words of 32 points), summed
  from single bits: every (liberty, chain) pair is counted once, so the sum is the union."""
  words = -(-p // 32)
  point = jnp.arange(p)
  bit = jnp.uint32(1) << (point % 32).astype(jnp.uint32)                       # [P]
  slot = jnp.where(empty[:, None] & distinct, nbr_chain * words + (point // 32)[:, None],
                   (p + 1) * words)
  return jnp.zeros((p + 1) * words, jnp.uint32).at[slot.reshape(-1)].add(
      jnp.repeat(bit, 4), mode="drop").reshape(p + 1, words)


def _alphago_without_ladders(cfg: GoConfig, state: GoState, colour_plane: bool):
  """One game's planes with the ladder planes left empty, and its ladder candidates."""
  n, p = cfg.size, cfg.num_points
  me = state.to_play.astype(jnp.int32)
  board = state.board.astype(jnp.int32)
  chain = state.chain.astype(jnp.int32)
  legal = go.legal_actions(cfg, state)[:p]
  empty = board == EMPTY
  stone = ~empty

  nbr_colour = go.neighbour_values(cfg, board, 2)                                 # [P, 4], 2 off board
  nbr_chain = go.neighbour_values(cfg, chain, p)                                  # [P, 4], P if no chain
  # Each chain next to a point once: its first direction.
  repeated = [nbr_chain[:, k] == nbr_chain[:, j] for k in range(4) for j in range(k)]
  distinct = (nbr_chain < p) & ~jnp.stack(
      [jnp.zeros(p, bool), repeated[0], repeated[1] | repeated[2],
       repeated[3] | repeated[4] | repeated[5]], axis=1)                       # [P, 4]

  words = -(-p // 32)
  liberty_bits = _liberty_bits(p, empty, nbr_chain, distinct)                  # [P+1, W]
  libs = jnp.sum(jax.lax.population_count(liberty_bits), axis=1)               # [P+1]
  chain_size = jax.ops.segment_sum(stone.astype(jnp.int32), chain, num_segments=p + 1)
  nbr_libs = libs[nbr_chain]                                                   # [P, 4]

  # The chain each move would make and what it would capture, for every move at once.
  own = distinct & (nbr_colour == me)
  taken = distinct & (nbr_colour == -me) & (nbr_libs == 1)
  size_after = 1 + jnp.sum(jnp.where(own, chain_size[nbr_chain], 0), axis=1)
  num_captured = jnp.sum(jnp.where(taken, chain_size[nbr_chain], 0), axis=1)
  # Its liberties after: the empty points next to the move or to a chain it joins (the
  # move's own point aside)...
  empty_bits = jnp.sum(jnp.where(empty[:, None], jnp.asarray(_point_bits(p)), 0), axis=0)  # [W]
  reached = jnp.asarray(_neighbour_bits(cfg.size)) & empty_bits                # [P, W]
  for k in range(4):
    reached = reached | jnp.where(own[:, k, None], liberty_bits[nbr_chain[:, k]], 0)
  libs_after = jnp.sum(jax.lax.population_count(reached & ~jnp.asarray(_point_bits(p))), axis=1)
  # ...and the captured stones next to it or to a chain it joins. A chain in atari is
  # captured by a play on its last liberty y; count per such chain its stones next to y
  # or to a chain of the mover's that has y as a liberty.
  word = jnp.argmax(liberty_bits != 0, axis=1)                                # [P+1]
  low = jnp.take_along_axis(liberty_bits, word[:, None], axis=1)[:, 0]
  y = (word * 32 + jax.lax.population_count((low & (~low + 1)) - 1).astype(jnp.int32))[chain]  # [P]
  y_word, y_bit = jnp.minimum(y // 32, words - 1), (y % 32).astype(jnp.uint32)
  touches_y = jnp.any(jnp.asarray(go.neighbour_table(cfg.size)) == y[:, None], axis=1)
  for k in range(4):
    y_is_liberty = (liberty_bits[nbr_chain[:, k], y_word] >> y_bit) & 1
    touches_y = touches_y | ((nbr_colour[:, k] == me) & (y_is_liberty == 1))
  counted = (board == -me) & (libs[chain] == 1) & touches_y
  freed = jax.ops.segment_sum(counted.astype(jnp.int32), chain, num_segments=p + 1)
  libs_after = libs_after + jnp.sum(jnp.where(taken, freed[nbr_chain], 0), axis=1)

  # Ladder candidates, each (move, direction) naming its target chain once.
  capture = legal[:, None] & distinct & (nbr_colour == -me) & (nbr_libs == 2)
  escape = legal[:, None] & distinct & (nbr_colour == me) & (nbr_libs == 1)

  own_eye = go.own_eyes(cfg, board, me, nbr_colour)

  ones = jnp.ones((p, 1), bool)
  planes = [
      (board == me)[:, None], (board == -me)[:, None], empty[:, None],
      ones,
      _one_hot(_turns_since(cfg, state) - 1, stone, 8),
      _one_hot(libs[chain] - 1, stone, 8),
      _one_hot(num_captured, legal, 8),
      _one_hot(size_after - 1, legal & (libs_after == 1), 8),
      _one_hot(libs_after - 1, legal, 8),
      jnp.zeros((p, 2), bool),                                                 # ladders, filled later
      (legal & ~own_eye)[:, None],
      ~ones,
  ]
  if colour_plane:
    planes.append(jnp.broadcast_to(me == BLACK, (p, 1)))
  planes = jnp.concatenate(planes, axis=1).astype(jnp.float32)                 # [P, F]
  return planes.reshape(n, n, planes.shape[1]), board, chain, me, nbr_chain, capture, escape


def _encode(colour_plane: bool, cfg: GoConfig, states: GoState, *,
            ladder: LadderSettings | None = None) -> jnp.ndarray:
  """A flat batch's planes (go.features' encoding function); `ladder`: how the ladders are
  read (default: this backend's, `ladder_settings()`), the planes the same whatever it says."""
  return _alphago(cfg, states, colour_plane, ladder or ladder_settings())


# This module's encodings: name -> go.register_encoding's keyword arguments (the package
# registers them, agz_jax/__init__.py).
ENCODINGS = {
    "alphago48": {"num_planes": 48, "history": 8, "encode": functools.partial(_encode, False)},
    "alphago49": {"num_planes": 49, "history": 8, "encode": functools.partial(_encode, True)},
}
