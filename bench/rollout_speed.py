"""Rollouts per second: the fast rollout policy against uniformly random play, in the same run.

From a batch of mid-game positions (move 30 on 9x9, 100 on 19x19: random sensible play
from the empty board, or human positions with --data), every game is played to its end
twice with `alphago.rollout.rollouts`: once with uniformly random sensible moves, once
sampling the rollout policy p_pi (its patterns and weights from a rollout_policy
checkpoint, or, without one, dictionaries harvested from the start positions and zero
weights: the same work per move, random-like games). Both loops are the same code with the
same lanes; the policy's only extra cost is its features and logits. Rollouts play by the
simple ko rule; p_pi is timed a third time under positional superko (what the rollouts
played before), the peer of the simple-ko figure. Also reported: the
rollouts' lengths (a batched loop waits for its longest game) and the time of one move's
sampling per position, with and without the policy. "p_pi, every device" plays the same
games split over every device (on a CPU, one device per core: --cpu-devices), each
device's share dispatched at once and played by its own loop, as the AlphaGo player's
trees are searched.

  python bench/rollout_speed.py --policy workdir/rollout_policy
  python bench/rollout_speed.py --size 9 --batch 256 --repeats 2
"""

import argparse
import functools
import os

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import alphago, checkpoint, go, nets, parallel
from agz_jax.alphago import patterns, rollout

import timing

START_MOVE = {9: 30, 13: 60, 19: 100}


def start_positions(cfg: go.GoConfig, batch: int, move: int, seed: int) -> go.GoState:
  """`batch` positions after `move` random sensible moves from the empty board."""
  def game(key):
    def body(state, k):
      action = rollout.sample_move(cfg, rollout.uniform_logits(cfg), jax.tree.map(
          lambda x: x[None], state), k)[0]
      return go.step(cfg, state, action), None
    return jax.lax.scan(body, go.init(cfg), jax.random.split(key, move))[0]
  return jax.jit(jax.vmap(game))(jax.random.split(jax.random.PRNGKey(seed), batch))


def human_positions(cfg: go.GoConfig, data_dir: str, batch: int, move: int, seed: int):
  from agz_jax import data  # pylint: disable=import-outside-toplevel
  from agz_jax.data import positions  # pylint: disable=import-outside-toplevel
  archive = data.load(data_dir)
  lengths = np.diff(archive.offsets)
  rows = np.flatnonzero(lengths > move + 50)
  rows = np.random.default_rng(seed).choice(rows, batch, replace=len(rows) < batch)
  table = jax.tree.map(jnp.asarray, positions.make_table(archive, rows))
  return jax.jit(functools.partial(positions.replay_positions, cfg))(
      table, jnp.arange(batch), jnp.full((batch, 1), move, jnp.int32))


def load_policy(cfg: go.GoConfig, path: str | None, starts: go.GoState):
  """(logits_fn, description) of the rollout policy, as the AlphaGo search plays it."""
  if path:
    config, variables = checkpoint.load_network(path)
    tables = patterns.make_tables(variables["patterns"])
    model = nets.make(config.model)
    params = jax.tree.map(jnp.asarray, variables["params"])
    groups = alphago.patterns.groups_of(config.model)
    what = f"trained p_pi ({path})"
  else:
    counter = patterns.PatternCounter()
    counter.add(jax.jit(jax.vmap(functools.partial(patterns.harvest_codes, cfg)))(starts))
    codes = {k: counter.dictionary(k, c, 1) for k, c in (("3x3", 69_338), ("response", 32_207))}
    tables = patterns.make_tables(codes)
    groups = patterns.ROLLOUT_GROUPS
    model = nets.FastPolicy(num_features=patterns.num_features(tables, groups))
    params = model.init(jax.random.PRNGKey(0), jnp.zeros((1, cfg.num_points, 1), jnp.int32))["params"]
    what = "untrained p_pi (zero weights, dictionaries of the start positions)"
  fast = alphago.rollout_logits(cfg, model, groups)
  variables = {"params": params, "tables": tables}
  return (lambda states: fast(variables, states)), what


def measure(size: int, batch: int, repeats: int, policy: str | None, data_dir: str | None,
            lanes: int | None, max_moves: int) -> dict:
  cfg = go.GoConfig(size=size, komi=7.5)
  move = START_MOVE.get(size, size * size // 4)
  starts = (human_positions(cfg, data_dir, batch, move, 0) if data_dir
            else start_positions(cfg, batch, move, 0))
  logits_fn, what = load_policy(cfg, policy, starts)
  print(f"{size}x{size}: {batch} playouts from move {move} "
        f"({'human' if data_dir else 'random sensible'} positions), {lanes or batch} lanes, "
        f"cap {max_moves} moves; policy: {what}")
  out = {}
  for name, fn, superko in (("random", rollout.uniform_logits(cfg), False),
                            ("p_pi", logits_fn, False), ("p_pi superko", logits_fn, True)):
    run = jax.jit(functools.partial(rollout.rollouts, cfg, fn, lanes=lanes, max_moves=max_moves,
                                    with_lengths=True, superko=superko))
    seconds = timing.seconds(run, starts, jax.random.PRNGKey(1), repeats=repeats)
    results, lengths = map(np.asarray, run(starts, jax.random.PRNGKey(1)))
    move_fn = jax.jit(functools.partial(rollout.sample_move, cfg, fn, superko=superko))
    move_s = timing.seconds(move_fn, starts, jax.random.PRNGKey(2), repeats=repeats)
    out[name] = {"playouts_per_s": batch / seconds, "moves_per_s": lengths.sum() / seconds,
                 "mean_length": float(lengths.mean()), "max_length": int(lengths.max()),
                 "black_wins": float(np.mean(np.asarray(results) * np.asarray(starts.to_play) > 0)),
                 "us_per_move_per_position": 1e6 * move_s / batch}
    r = out[name]
    print(f"  {name:12s}: {r['playouts_per_s']:7.1f} playouts/s | {r['moves_per_s']:9,.0f} moves/s | "
          f"length mean {r['mean_length']:.0f} max {r['max_length']} | one move "
          f"{r['us_per_move_per_position']:.0f} us per position | black wins {r['black_wins']:.2f}")
  devices = jax.local_devices()
  if len(devices) > 1:
    run = jax.jit(functools.partial(rollout.rollouts, cfg, logits_fn, lanes=lanes,
                                    max_moves=max_moves, with_lengths=True))
    shares = np.array_split(np.arange(batch), len(devices))
    split = [(jax.device_put(jax.tree.map(lambda x: x[idx], starts), d),
              jax.device_put(jax.random.fold_in(jax.random.PRNGKey(1), i), d))
             for i, (idx, d) in enumerate(zip(shares, devices))]
    every_device = lambda parts: [run(*part) for part in parts]
    seconds = timing.seconds(every_device, split, repeats=repeats)
    outs = every_device(split)
    lengths = np.concatenate([np.asarray(lengths) for _, lengths in outs])
    name = f"p_pi, {len(devices)} devices"
    out["p_pi, every device"] = {"playouts_per_s": batch / seconds,
                                 "moves_per_s": lengths.sum() / seconds}
    r = out["p_pi, every device"]
    print(f"  {name:12s}: {r['playouts_per_s']:7.1f} playouts/s | {r['moves_per_s']:9,.0f} moves/s "
          f"| {r['playouts_per_s'] / out['p_pi']['playouts_per_s']:.2f}x one device")
  ratio = out["p_pi"]["moves_per_s"] / out["random"]["moves_per_s"]
  print(f"  p_pi moves at {ratio:.2f}x the random-play move rate; playouts "
        f"{out['p_pi']['playouts_per_s'] / out['random']['playouts_per_s']:.2f}x")
  out["ratio_moves"] = ratio
  print(f"  simple ko against positional superko: p_pi playouts "
        f"{out['p_pi']['playouts_per_s'] / out['p_pi superko']['playouts_per_s']:.2f}x, moves "
        f"{out['p_pi']['moves_per_s'] / out['p_pi superko']['moves_per_s']:.2f}x")
  return out


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--size", type=int, action="append", help="board size (repeat; default 9 and 19)")
  parser.add_argument("--batch", type=int, default=256, help="playouts per run")
  parser.add_argument("--lanes", type=int, default=None, help="games played at once (default: batch)")
  parser.add_argument("--max-moves", type=int, default=500, help="a rollout's move cap")
  parser.add_argument("--repeats", type=int, default=3)
  parser.add_argument("--policy", default=None, help="a rollout_policy workdir or checkpoint")
  parser.add_argument("--data", default=None, help="imported human games (19x19) for the starts")
  parser.add_argument("--cpu-devices", type=int, default=len(os.sched_getaffinity(0)),
                      help="without an accelerator: CPU devices for the every-device line "
                           "(default: one per core this process may use)")
  args = parser.parse_args()
  parallel.use_cpu_devices(args.cpu_devices)
  print(timing.environment())
  for size in args.size or [9, 19]:
    measure(size, args.batch, args.repeats, args.policy, args.data if size == 19 else None,
            args.lanes, args.max_moves)


if __name__ == "__main__":
  main()
