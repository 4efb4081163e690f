"""Rollouts: games played to the end by a fast policy, on the device, for a batch at once.

A rollout plays sensible moves (legal, not filling an eye of the player to
move: `sensible_moves`) sampled from the policy's logits, passes only when no
sensible move is left, and is scored by Tromp-Taylor from the point of view of
the player to move where it started. A game also stops after `max_moves`
moves of the rollout and is then scored as it stands. Rollouts play by the
simple ko rule, as AlphaGo's and most programs' playouts do: no position is
recorded, which saves a third of a move's work; a longer cycle simply runs
into `max_moves`.

A batched loop runs until its longest game ends. `rollouts` plays N games on
L <= N lanes: a lane whose game has ended takes the next one, so the loop
takes about (total moves) / L + (longest game) steps rather than N / L times
the longest game; and on a CPU, where a step costs in proportion to its lanes,
the last long games move onto fewer lanes (L / 4, L / 16, ...) as the others
end.
"""

import functools
import types
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp

from agz_jax.alphago import lanes as lanes_lib
from agz_jax.go import GoConfig, GoState, result, sensible_moves, step

# logits_fn(states [B]) -> [B, P] or [B, P + 1] logits of the moves (pass is never sampled).
LogitsFn = Callable[[GoState], jnp.ndarray]


def uniform_logits(cfg: GoConfig) -> LogitsFn:
  """A policy that gives every move the same logit: uniformly random sensible moves."""
  return lambda states: jnp.zeros(states.board.shape[:1] + (cfg.num_points,), jnp.float32)


def sample_move(cfg: GoConfig, logits_fn: LogitsFn, states: GoState, rng_key,
                superko: bool = True) -> jnp.ndarray:
  """[B] a sensible move of each game drawn from the policy, or pass where none is left.

  `superko` False applies the simple ko rule (for states stepped that way).
  """
  p = cfg.num_points
  sensible = jax.vmap(functools.partial(sensible_moves, cfg, superko=superko))(states)[:, :p]
  logits = logits_fn(states)[:, :p]
  action = _draw(rng_key, jnp.where(sensible, logits, -jnp.inf))
  return jnp.where(jnp.any(sensible, axis=-1), action, p).astype(jnp.int32)


def _draw(rng_key, logits: jnp.ndarray) -> jnp.ndarray:
  """[B] an index of each row drawn with probability softmax(logits) (rows with a finite logit).

  By inverting the cumulative distribution with one uniform number per row:
  `jax.random.categorical` draws a Gumbel number for every entry, and on a
  CPU drawing 361 numbers per move costs more than the move itself.
  """
  weights = jnp.exp(logits - jnp.max(logits, axis=-1, keepdims=True))
  cdf = jnp.cumsum(weights, axis=-1)
  total = cdf[..., -1:]
  u = jax.random.uniform(rng_key, logits.shape[:-1] + (1,))
  # The first index whose cumulative weight passes the threshold has a positive weight; the
  # threshold stays below the total even where rounding would make u * total equal it.
  threshold = jnp.minimum(u * total, jnp.nextafter(total, 0.0))
  return jnp.argmax(cdf > threshold, axis=-1)


# How the lanes narrow for the last long games (see `rollouts`), by backend.
SHRINK = types.MappingProxyType({"cpu": 4, "accelerator": 1})
MIN_LANES = 8


class _Lanes(NamedTuple):
  states: GoState      # [L] the games being played
  job: jnp.ndarray     # [L] int32, the start position each lane plays, N when idle
  start: jnp.ndarray   # [L] int32, the move count where its rollout began
  boards: jnp.ndarray  # [N, P] int8, the final board of each finished rollout
  forfeits: jnp.ndarray  # [N] int8, and its `forfeit`
  lengths: jnp.ndarray  # [N] int32, and its moves
  next_job: jnp.ndarray  # [] int32, the next start position to hand out
  key: jax.Array


def rollouts(cfg: GoConfig, logits_fn: LogitsFn, states: GoState, rng_key, *, lanes: int | None = None,
             max_moves: int = 500, with_lengths: bool = False, superko: bool = False,
             shrink: int | None = None):
  """Plays every game of `states` out with the policy. Consumes rng_key.

  Args:
    cfg: the game's configuration.
    logits_fn: the policy (see LogitsFn).
    states: [N] the start positions.
    lanes: L, games played at once (default N).
    max_moves: a rollout stops after this many moves and is scored as it is.
    with_lengths: also return the moves each rollout played.
    superko: play by positional superko instead of simple ko (slower).
    shrink: once every game has been handed out and at most L / shrink are
      still being played, they move onto L / shrink lanes, and so on while that
      leaves MIN_LANES or more. Default SHRINK: on a CPU a loop step costs in
      proportion to its lanes, so the last long games run on few; an accelerator
      runs the lanes side by side.

  Returns:
    [N] float32: +1 where the player to move at the start wins, -1 loses, 0 a
    draw; and with `with_lengths`, [N] int32 moves (passes included).
  """
  n = states.board.shape[0]
  lanes = n if lanes is None else min(lanes, n)
  me = states.to_play.astype(jnp.float32)
  if not superko:  # the positions seen are neither read nor written: lanes carry one slot
    states = states.replace(seen=states.seen[:, :1])

  def take(job):
    return jax.tree.map(lambda x: x[jnp.minimum(job, n - 1)], states)

  first = jnp.arange(lanes, dtype=jnp.int32)
  begin = _Lanes(states=take(first), job=first, start=states.move_count[first],
                 boards=jnp.zeros_like(states.board), forfeits=jnp.zeros_like(states.forfeit),
                 lengths=jnp.zeros(n, jnp.int32),
                 next_job=jnp.int32(lanes), key=rng_key)

  def ended(c: _Lanes):
    return c.states.terminated | (c.states.move_count - c.start >= max_moves)

  def finish(c: _Lanes, done):
    """Keeps the games that ended (scored after the loop) and hands out the next ones."""
    slot = jnp.where(done, c.job, n)
    c = c._replace(boards=c.boards.at[slot].set(c.states.board, mode="drop"),
                   forfeits=c.forfeits.at[slot].set(c.states.forfeit, mode="drop"),
                   lengths=c.lengths.at[slot].set(c.states.move_count - c.start, mode="drop"),
                   job=jnp.where(done, n, c.job))
    return jax.lax.cond(c.next_job < n, hand_out, lambda c, _: c, c, done)

  def hand_out(c: _Lanes, done):
    """Finished lanes take the next start positions, in lane order."""
    rank = jnp.cumsum(done) - 1
    job = jnp.where(done & (c.next_job + rank < n), c.next_job + rank, c.job)
    fresh = take(job)
    new_states = jax.tree.map(lambda a, b: jnp.where(
        done.reshape((-1,) + (1,) * (a.ndim - 1)), a, b), fresh, c.states)
    start = jnp.where(done, fresh.move_count, c.start)
    return c._replace(states=new_states, job=job, start=start,
                      next_job=jnp.minimum(c.next_job + jnp.sum(done), n))

  def body(c: _Lanes):
    key, k_move = jax.random.split(c.key)
    active = c.job < n
    action = sample_move(cfg, logits_fn, c.states, k_move, superko)
    played = jax.vmap(functools.partial(step, cfg, superko=superko))(c.states, action)
    c = c._replace(states=played, key=key)
    done = active & ended(c)
    # Most moves end no game: the bookkeeping is skipped then.
    return jax.lax.cond(jnp.any(done), finish, lambda c, _: c, c, done)

  shrink = SHRINK[lanes_lib.backend_kind()] if shrink is None else shrink
  c = lanes_lib.drain(begin, body, phases=lanes_lib.widths(lanes, shrink, MIN_LANES),
                      waiting=lambda c: c.next_job < n, busy=lambda c: jnp.sum(c.job < n),
                      narrow=lambda c, width: _narrow(c, width, n))
  # Scored once at the end: scoring floods the empty regions in a loop that runs as long as the
  # slowest board, too dear to run at every move that ends a game.
  final = states.replace(board=c.boards, forfeit=c.forfeits)
  results = jax.vmap(functools.partial(result, cfg))(final) * me
  return (results, c.lengths) if with_lengths else results


def _narrow(c: _Lanes, width: int, n: int) -> _Lanes:
  """The games in play (at most `width` of them) moved onto the first `width` lanes."""
  playing = c.job < n
  order = lanes_lib.busy_first(playing, width)
  kept = jax.tree.map(lambda x: x[order], c.states)
  return c._replace(states=kept, job=jnp.where(playing[order], c.job[order], n),
                    start=c.start[order])
