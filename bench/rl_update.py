"""The RL policy's REINFORCE update on a CPU: its chunks in a loop against unrolled.

`rl_policy.reinforce_gradients` replays the learner's planes `chunk` plies at
a time. In a `lax.while_loop` (what accelerators run) XLA:CPU computes the
convolution gradients far slower than in straight-line code (see
bench/xla_loop.py); on a CPU the chunks are therefore unrolled. Both forms are
compiled for the same games (random planes, every move the learner's), checked
to give the same gradients, and timed alternately; the ratio is to the
unrolled form.

  python bench/rl_update.py                        # the shipped 6 x 48 policy, 64 plies x 16 games
  python bench/rl_update.py --plies 16 --rounds 2  # a quick check
"""

import argparse
import functools

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import checkpoint, go, nets, policy_games
from agz_jax.training import rl_policy

import timing


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--policy", default="pretrained/alphago-19x19/sl_policy")
  parser.add_argument("--plies", type=int, default=64, help="rows of the games' buffer")
  parser.add_argument("--games", type=int, default=16, help="games (the learner's half is kept)")
  parser.add_argument("--chunk", type=int, default=8, help="plies per forward pass (rl.chunk)")
  parser.add_argument("--rounds", type=int, default=3, help="timed rounds; the best counts")
  args = parser.parse_args()

  config, variables = checkpoint.load_network(args.policy)
  model = nets.make(config.model)
  params = jax.tree.map(jnp.asarray, variables["params"])
  size, half = config.game.size, args.games // 2
  cfg = go.GoConfig(size=size, komi=config.game.komi, history=8)
  rng = np.random.default_rng(0)
  games = policy_games.Games(
      z=jnp.asarray(rng.choice([-1.0, 1.0], args.games), jnp.float32),
      length=jnp.full(args.games, args.plies, jnp.int32),
      planes=jnp.asarray(rng.integers(0, 2, (args.plies, half) + go.planes_shape(cfg, config.model.encoding)), jnp.uint8),
      sensible=jnp.ones((args.plies, half, size * size + 1), bool),
      action=jnp.asarray(rng.integers(0, size * size, (args.plies, half)), jnp.int32),
      sampled=jnp.ones((args.plies, half), bool), moves=jnp.zeros((args.plies, args.games),
                                                                   jnp.int32),
      entropy=jnp.float32(0.0))
  forms = {name: jax.jit(functools.partial(rl_policy.reinforce_gradients, model,
                                           chunk=args.chunk, unroll=unroll))
           for name, unroll in (("unrolled", True), ("while_loop", False))}
  print(timing.environment())
  print(f"{config.model.layers} x {config.model.filters} policy, {args.plies} plies x {half} "
        f"learner games, chunks of {args.chunk}; median of {args.rounds} rounds", flush=True)
  outs = {name: jax.block_until_ready(fn(params, games)) for name, fn in forms.items()}
  jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4),
               outs["unrolled"], outs["while_loop"])
  best = timing.paired({name: lambda _, fn=fn: fn(params, games) for name, fn in forms.items()},
                       args.rounds)
  for name in forms:
    print(f"  {name:12s} {best[name]:8.2f} s  {best[name] / best['unrolled']:6.2f}x the unrolled "
          f"time  ({best[name] / (args.plies * half) * 1e3:.2f} ms a position)")


if __name__ == "__main__":
  main()
