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
the longest game.
"""

import functools
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp

from agz_jax.go.config import GoConfig
from agz_jax.go.features import sensible_moves
from agz_jax.go.rules import result, step
from agz_jax.go.state import GoState

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
  action = jax.random.categorical(rng_key, jnp.where(sensible, logits, -jnp.inf))
  return jnp.where(jnp.any(sensible, axis=-1), action, p).astype(jnp.int32)


class _Lanes(NamedTuple):
  states: GoState      # [L] the games being played
  job: jnp.ndarray     # [L] int32, the start position each lane plays, N when idle
  start: jnp.ndarray   # [L] int32, the move count where its rollout began
  results: jnp.ndarray  # [N] float32, the outcomes found so far
  lengths: jnp.ndarray  # [N] int32, the moves of each finished rollout
  next_job: jnp.ndarray  # [] int32, the next start position to hand out
  key: jax.Array


def rollouts(cfg: GoConfig, logits_fn: LogitsFn, states: GoState, rng_key, *, lanes: int | None = None,
             max_moves: int = 500, with_lengths: bool = False, superko: bool = False):
  """Plays every game of `states` out with the policy. Consumes rng_key.

  Args:
    cfg: the game's configuration.
    logits_fn: the policy (see LogitsFn).
    states: [N] the start positions.
    lanes: L, games played at once (default N).
    max_moves: a rollout stops after this many moves and is scored as it is.
    with_lengths: also return the moves each rollout played.
    superko: play by positional superko instead of simple ko (slower).

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
                 results=jnp.zeros(n, jnp.float32), lengths=jnp.zeros(n, jnp.int32),
                 next_job=jnp.int32(lanes), key=rng_key)

  def ended(c: _Lanes):
    return c.states.terminated | (c.states.move_count - c.start >= max_moves)

  def cond(c: _Lanes):
    return jnp.any(c.job < n)

  def body(c: _Lanes):
    key, k_move = jax.random.split(c.key)
    active = c.job < n
    action = sample_move(cfg, logits_fn, c.states, k_move, superko)
    played = jax.vmap(functools.partial(step, cfg, superko=superko))(c.states, action)
    c = c._replace(states=played, key=key)
    done = active & ended(c)
    outcome = jax.vmap(functools.partial(result, cfg))(c.states, done) * me[jnp.minimum(c.job, n - 1)]
    slot = jnp.where(done, c.job, n)
    results = c.results.at[slot].set(outcome, mode="drop")
    lengths = c.lengths.at[slot].set(c.states.move_count - c.start, mode="drop")
    # Finished lanes take the next start positions, in lane order.
    rank = jnp.cumsum(done) - 1
    job = jnp.where(done, jnp.where(c.next_job + rank < n, c.next_job + rank, n), c.job)
    fresh = take(job)
    new_states = jax.tree.map(lambda a, b: jnp.where(
        done.reshape((-1,) + (1,) * (a.ndim - 1)), a, b), fresh, c.states)
    start = jnp.where(done, fresh.move_count, c.start)
    return c._replace(states=new_states, job=job, start=start, results=results, lengths=lengths,
                      next_job=c.next_job + jnp.sum(done))

  out = jax.lax.while_loop(cond, body, begin)
  return (out.results, out.lengths) if with_lengths else out.results
