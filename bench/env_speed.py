"""Steps per second of agz_jax.go against pgx's Go, measured in the same run.

Random legal play with auto-reset, jit + vmap, the same batch and board size for
both. Our step is followed by `legal_actions` (full positional superko mask);
pgx's step computes its legal mask (simple ko only) and its observation itself,
so a second line adds our `features` to each step for a like-for-like count.
That line consumes every plane: a weighted sum over all planes of all boards,
with weights drawn at run time, is folded into the loop's carry, and the planes
themselves are carried too (written out each step, as a network's input would
be); both are returned, so XLA can neither drop a plane as dead code nor fold
it into a constant.
Also reports the bytes of one game state and the speed of `features` alone on
the positions the timed runs reached.

  pip install -e '.[bench]'
  python bench/env_speed.py                       # 9x9 at batch 1024 and 19x19 at 256
  python bench/env_speed.py --size 9 --batch 1024 --steps 200
"""

import argparse

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import go

import timing

TARGETS = {(9, 1024): 2.0, (19, 256): 3.0}


def _random_action(key, mask):
  """A uniformly random legal action, from one random number per board."""
  rank = jnp.floor(jax.random.uniform(key) * jnp.sum(mask))
  return jnp.argmax(jnp.cumsum(mask) > rank)


def _reset_done(done, fresh, state):
  return jax.tree.map(lambda f, x: jnp.where(done.reshape((-1,) + (1,) * (x.ndim - 1)), f, x),
                      fresh, state)


def ours_loop(cfg: go.GoConfig, batch: int, steps: int, with_features: bool):
  """A jitted function running `steps` random legal moves on `batch` boards."""
  init = jax.vmap(lambda _: go.init(cfg))(jnp.arange(batch))
  legal = jax.vmap(lambda s: go.legal_actions(cfg, s))
  step = jax.vmap(lambda s, a: go.step(cfg, s, a))

  def body(i, carry):
    state, key, weights, acc, planes = carry
    key, sub = jax.random.split(key)
    actions = jax.vmap(_random_action)(jax.random.split(sub, batch), legal(state))
    state = step(state, actions)
    if with_features:
      # Every plane of every board enters the carry, each with its own weight.
      planes = go.features(cfg, state)
      acc = acc + jnp.einsum("bxyf,f->", planes, weights)
    state = _reset_done(state.terminated, init, state)
    return state, key, weights, acc, planes

  @jax.jit
  def run(state, key):
    key, sub = jax.random.split(key)
    shape = go.planes_shape(cfg, "agz17")
    weights = 1.0 + jax.random.uniform(sub, shape[-1:])
    planes = jnp.zeros((batch,) + shape if with_features else (),
                       jnp.float32)
    state, _, _, acc, planes = jax.lax.fori_loop(0, steps, body,
                                                 (state, key, weights, jnp.float32(0), planes))
    return state, (acc, planes)
  return run, init


def pgx_loop(size: int, batch: int, steps: int):
  import pgx.go  # pylint: disable=import-outside-toplevel
  env = pgx.go.Go(size=size, komi=7.5)
  init = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), batch))
  step = jax.vmap(env.step)

  def body(i, carry):
    state, key = carry
    key, sub = jax.random.split(key)
    actions = jax.vmap(_random_action)(jax.random.split(sub, batch), state.legal_action_mask)
    state = step(state, actions)
    state = _reset_done(state.terminated, init, state)
    return state, key

  @jax.jit
  def run(state, key):
    return jax.lax.fori_loop(0, steps, body, (state, key))[0], None
  return run, init


def _steps_per_second(loops, batch, steps, repeats):
  """The median of `repeats` timed runs of each loop, the loops alternating round after round
  (timing.rounds). A first untimed run of each compiles it and mixes game stages; each run
  goes on from the states the last one left.

  Args:
    loops: {name: (run, init)}; `run(state, key)` returns (state, anything
      computed alongside).
    batch, steps: boards per batch and steps per run.
    repeats: timed rounds.

  Returns:
    ({name: steps per second}, {name: the batch of states after its last run}).
  """
  states = {name: init for name, (_, init) in loops.items()}

  def going_on(name, run):
    def call(r):
      states[name] = run(states[name], jax.random.PRNGKey(1 + r))[0]
      return states[name]
    return call

  times = timing.paired({name: going_on(name, run) for name, (run, _) in loops.items()}, repeats)
  return {name: batch * steps / t for name, t in times.items()}, states


def _state_bytes(state) -> int:
  return sum(np.asarray(x).nbytes for x in jax.tree.leaves(state))


def measure(size, batch, steps, repeats, peer=True) -> dict:
  """Prints and returns the steps/s of our loops and (with `peer`) of pgx's, and their ratios."""
  cfg = go.GoConfig(size=size)
  print(f"\n{size}x{size}, batch {batch}, {steps} steps per timed run, median of {repeats} "
        f"rounds (the loops alternate)", flush=True)
  loops = {"ours": ours_loop(cfg, batch, steps, False),
           "ours_f": ours_loop(cfg, batch, steps, True)}
  if peer:
    loops["peer"] = pgx_loop(size, batch, steps)
  rates, states = _steps_per_second(loops, batch, steps, repeats)
  ours, ours_f, played = rates["ours"], rates["ours_f"], states["ours"]
  figures = {"steps_per_s": ours, "steps_per_s_with_features": ours_f,
             "state_bytes": _state_bytes(go.init(cfg))}
  print(f"  agz_jax step + superko legal mask        {ours:12,.0f} steps/s")
  print(f"  agz_jax step + legal mask + features     {ours_f:12,.0f} steps/s")
  if peer:
    peer_rate = rates["peer"]
    print(f"  pgx step (ko mask + observation)         {peer_rate:12,.0f} steps/s")
    line = (f"  ratio agz_jax / pgx: {ours / peer_rate:.2f}x (with features "
            f"{ours_f / peer_rate:.2f}x; features cost {ours / ours_f:.2f}x our step alone)")
    target = TARGETS.get((size, batch))
    if target:
      line += f"; target {target:.0f}x: {'met' if ours / peer_rate >= target else 'NOT met'}"
    print(line)
    one_pgx = _state_bytes(jax.tree.map(lambda x: x[0], loops["peer"][1]))
    figures.update(pgx_steps_per_s=peer_rate, ratio=ours / peer_rate,
                   ratio_with_features=ours_f / peer_rate, pgx_state_bytes=one_pgx)
    seen = np.asarray(go.init(cfg).seen).nbytes
    print(f"  bytes per state: agz_jax {figures['state_bytes']:,}, pgx {one_pgx:,} "
          f"({figures['state_bytes'] / one_pgx:.2f} of pgx); "
          f"of ours, {seen:,} are the earlier positions' hashes (superko)")

  feats = jax.jit(lambda s: go.features(cfg, s))
  out = feats(played)
  figures["features_positions_per_s"] = batch / timing.seconds(feats, played, repeats=20)
  print(f"  features ({out.shape[-1]} planes): {figures['features_positions_per_s']:,.0f} "
        f"positions/s")
  return figures


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--size", type=int, help="board size (default: both 9 and 19)")
  parser.add_argument("--batch", type=int, help="boards per batch (default 1024 at 9x9, 256 at 19x19)")
  parser.add_argument("--steps", type=int, default=200, help="steps per timed run")
  parser.add_argument("--repeats", type=int, default=3, help="timed runs; the median counts")
  args = parser.parse_args()
  print(timing.environment())
  runs = [(args.size, args.batch or (1024 if args.size <= 9 else 256))] if args.size else [(9, 1024), (19, 256)]
  for size, batch in runs:
    measure(size, batch, args.steps, args.repeats)


if __name__ == "__main__":
  main()
