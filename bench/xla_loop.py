"""Convolution gradients at the top level of a program against inside a loop or a branch.

The same work, two SGD steps of a pair of 3x3 convolutions, compiled four ways
and timed in the same run, the four alternating round after round:

* written out: the two steps one after the other at the top level;
* scan, unrolled: `lax.scan(..., unroll=True)`, what the fused training
  iteration does on a CPU (the loop is gone before XLA sees it);
* fori_loop: the two steps as the body of `lax.fori_loop` (a while loop);
* cond: the two steps written out inside the taken branch of `lax.cond`.

The forward pass alone (no gradient) is also timed written out and inside
`lax.fori_loop`, to tell whether the slowdown is the gradient's. Each time is
the median of the rounds; ratios are to the written-out program.

  python bench/xla_loop.py                                  # 9x9, batch 128, 32 channels
  python bench/xla_loop.py --batch 32 --rounds 3            # a quick check
"""

import argparse

import jax
import jax.numpy as jnp
import numpy as np

import timing

STEPS = 2
LEARNING_RATE = 1e-3


def _conv(x, w):
  return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                      dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _forward(params, x):
  w1, w2 = params
  return _conv(jax.nn.relu(_conv(x, w1)), w2)


def _loss(params, x):
  return jnp.mean(jnp.square(_forward(params, x)))


def _sgd_step(params, x):
  grads = jax.grad(_loss)(params, x)
  return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads)


def _written_out(params, x):
  for _ in range(STEPS):
    params = _sgd_step(params, x)
  return params


def _scan_unrolled(params, x):
  params, _ = jax.lax.scan(lambda p, _: (_sgd_step(p, x), None), params, None,
                           length=STEPS, unroll=True)
  return params


def _fori_loop(params, x):
  return jax.lax.fori_loop(0, STEPS, lambda i, p: _sgd_step(p, x), params)


def _cond(params, x, flag):
  return jax.lax.cond(flag, _written_out, lambda p, _: p, params, x)


def _forward_written_out(params, x):
  for _ in range(STEPS):
    x = _forward(params, x)
  return x


def _forward_fori_loop(params, x):
  return jax.lax.fori_loop(0, STEPS, lambda i, y: _forward(params, y), x)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--size", type=int, default=9, help="board size")
  parser.add_argument("--batch", type=int, default=128)
  parser.add_argument("--channels", type=int, default=32)
  parser.add_argument("--rounds", type=int, default=10, help="timed rounds; the median of each counts")
  args = parser.parse_args()

  c = args.channels
  k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
  params = (0.1 * jax.random.normal(k1, (3, 3, c, c)), 0.1 * jax.random.normal(k2, (3, 3, c, c)))
  x = jax.random.normal(k3, (args.batch, args.size, args.size, c))
  flag = jnp.asarray(True)   # an argument, so the branch is chosen at run time
  programs = {
      "gradient steps, written out": (jax.jit(_written_out), (params, x)),
      "gradient steps, scan unrolled": (jax.jit(_scan_unrolled), (params, x)),
      "gradient steps, fori_loop": (jax.jit(_fori_loop), (params, x)),
      "gradient steps, cond": (jax.jit(_cond), (params, x, flag)),
      "forward only, written out": (jax.jit(_forward_written_out), (params, x)),
      "forward only, fori_loop": (jax.jit(_forward_fori_loop), (params, x)),
  }
  print(timing.environment())
  print(f"{STEPS} steps of a pair of 3x3 convolutions, {c} channels, batch {args.batch}, "
        f"{args.size}x{args.size}; median of {args.rounds} rounds", flush=True)
  reference = jax.block_until_ready(programs["gradient steps, written out"][0](params, x))
  for name, (fn, fn_args) in programs.items():
    out = jax.block_until_ready(fn(*fn_args))   # compiles
    if name.startswith("gradient"):
      np.testing.assert_allclose(np.asarray(out[0]), np.asarray(reference[0]), rtol=1e-3, atol=1e-5)
  best = timing.paired({name: lambda _, fn=fn, fn_args=fn_args: fn(*fn_args)
                        for name, (fn, fn_args) in programs.items()}, args.rounds)
  for name in programs:
    kind = name.split(",")[0]
    ratio = best[name] / best[f"{kind}, written out"]
    print(f"  {name:32s} {best[name] * 1e3:9.2f} ms  {ratio:6.2f}x the written-out time")


if __name__ == "__main__":
  main()
