"""What a batch of leaves buys a search on this machine: a network's forward pass (planes
included) per position at batch 1, 2, 4, ..., against batch 1, timed in the same rounds.

A search that evaluates several leaves at once (virtual loss, one tree on every core) can
gain at most what a batch of that size gains here over one position at a time; where the
cost per position stays flat, the forward already uses every core alone.

  python bench/forward_batch.py                                   # pretrained/human-19x19
  python bench/forward_batch.py --network pretrained/zero-9x9 --batches 1 4 16
"""

import argparse
import functools

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import go, players

import timing


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--network", default=None,
                      help="a network with a value output (default: pretrained/human-19x19)")
  parser.add_argument("--batches", type=int, nargs="+", default=[1, 2, 4, 8, 16])
  parser.add_argument("--repeats", type=int, default=20, help="timed rounds (median)")
  args = parser.parse_args()
  network = players.Network.from_checkpoint(args.network or players.pretrained_path("human-19x19"))
  size = network.sizes[0]
  cfg = go.GoConfig(size=size, komi=7.5, **network.planes)
  # Positions from a random game, so that the planes are not those of an empty board.
  rng = np.random.default_rng(0)
  state, states = go.init(cfg), []
  legal_fn = jax.jit(go.legal_actions, static_argnums=0)
  for _ in range(max(args.batches)):
    legal = np.flatnonzero(np.asarray(legal_fn(cfg, state))[:-1])
    state = go.play(cfg, [int(rng.choice(legal))], state)
    states.append(state)

  @functools.partial(jax.jit, static_argnums=0)
  def forward(batch, variables, positions):
    del batch
    planes = go.features(cfg, positions, network.encoding)
    return network.model.apply(variables, planes)

  calls = {}
  for b in args.batches:
    batch = jax.tree.map(lambda *x: jnp.stack(x), *states[:b])
    calls[b] = functools.partial(lambda b, batch, _: forward(b, network.variables, batch), b, batch)
  times = timing.paired(calls, args.repeats)
  print(f"{network.name} ({network.encoding}), {size}x{size}, median of {args.repeats} rounds; "
        f"{timing.environment()}")
  print("| batch | ms per forward | ms per position | positions/s | against batch 1 |")
  print("|---|---|---|---|---|")
  one = times[args.batches[0]] / args.batches[0]
  for b in args.batches:
    per = times[b] / b
    print(f"| {b} | {1e3 * times[b]:.1f} | {1e3 * per:.2f} | {1 / per:,.0f} | {one / per:.2f}x |")


if __name__ == "__main__":
  main()
