"""Self-play speed of agz_jax against pgx + mctx, measured in the same run.

Ours: agz_jax.selfplay.selfplay, whose steps search (run_search, mctx over our
Go environment) and play one move in each of B games, restarting games that
end. Peer: the pgx + mctx AlphaZero loop (as in pgx's examples/alphazero): the
same mctx policy searches over pgx.go.Go, whose recurrent function steps the pgx
environment and evaluates the network on pgx's [N, N, 17] observation with
illegal actions masked by pgx's legal_action_mask, and finished games are
auto-reset. Both use the same AlphaZeroNet and parameters, board size, batch,
simulations and search algorithm, and run T steps as one jitted lax.scan per
timed call; the two alternate, round after round, after a compile and warm-up
round. Reported: the best time of each, and the median of the rounds' ratios
(steadier on a shared machine). A step is B positions for both; the peer's
network evaluates B * (simulations + 1) positions per step, ours B *
simulations plus the roots the previous search did not already evaluate
(counted). One batched network forward is also timed alone, to tell how much
of a step is the network; on an accelerator the network's share of its bf16
peak (BF16_PEAK_TFLOPS by device kind, or --peak-tflops) is estimated from its
FLOPs per evaluation, counted from the layer shapes (XLA's cost analysis of the
compiled forward is printed beside them).

  pip install -e '.[bench]'
  python bench/selfplay_speed.py                  # 9x9, batch 256, 32 simulations, 6x64 network
  python bench/selfplay_speed.py --algorithm puct --dtype bfloat16
  python bench/selfplay_speed.py --batch 32 --simulations 8 --steps 4 --blocks 1 --channels 16
  python bench/selfplay_speed.py --cpu-devices 2   # both sides' games split over 2 CPU devices
"""

import argparse
import re

import jax
import jax.numpy as jnp
import mctx
import numpy as np

from jax.sharding import PartitionSpec as P

from agz_jax import go, parallel, search

import timing
from agz_jax.game import Game
from agz_jax.nets import AlphaZeroNet
from agz_jax.selfplay import SelfPlayConfig, new_games, selfplay, spare_size

# The 2-core CPU target at 9x9: ours / peer positions per second.
CPU_TARGET = 1.2
# Self-play settings of configs/default.py; the peer has no resignation and
# plays the search's action from the first move.
SELFPLAY = dict(temperature_moves=10, resign_threshold=-0.9, resign_min_moves=20,
                no_resign_fraction=0.1)
MAX_CONSIDERED, GUMBEL_SCALE = 16, 1.0
DIRICHLET_FRACTION, PB_C_INIT, PB_C_BASE = 0.25, 1.25, 19652.0


def ours_loop(cfg: go.GoConfig, apply_fn, batch: int, steps: int, algorithm: str,
              simulations: int, mesh=None):
  """A jitted (variables, games, key) -> (games, records) of `steps` self-play steps.

  With a mesh, each device plays its shard of the games, as training does.
  """
  game = Game(go, cfg)
  evaluator = search.network(game, apply_fn, "agz17")
  settings = SelfPlayConfig(
      search=search.SearchConfig(
          algorithm=algorithm, num_simulations=simulations,
          max_num_considered_actions=MAX_CONSIDERED, gumbel_scale=GUMBEL_SCALE,
          dirichlet_alpha=None, dirichlet_fraction=DIRICHLET_FRACTION, pb_c_init=PB_C_INIT,
          pb_c_base=PB_C_BASE, c_puct=5.0),
      encoding="agz17", **SELFPLAY)

  def play(variables, games, key, first_game):
    return selfplay(game, evaluator, variables, games, key, steps, settings,
                    first_game=first_game)

  run = jax.jit(parallel.per_shard(mesh, play, games_arg=1,
                                   out_specs=(P(parallel.DATA), P(None, parallel.DATA))))
  games = new_games(game, jax.random.PRNGKey(0), batch,
                    no_resign_fraction=SELFPLAY["no_resign_fraction"])
  return run, games


def pgx_loop(cfg: go.GoConfig, apply_fn, batch: int, steps: int, algorithm: str,
             simulations: int, mesh=None):
  """The same for pgx.go.Go searched with mctx (pgx's AlphaZero example).

  With a mesh, each device runs the loop on its shard of the games with its
  own key, as the example does with pmap.
  """
  import pgx.go  # pylint: disable=import-outside-toplevel
  from pgx.experimental import auto_reset  # pylint: disable=import-outside-toplevel
  env = pgx.go.Go(size=cfg.size, komi=cfg.komi, history_length=cfg.history,
                  max_terminal_steps=cfg.max_moves)
  play = jax.vmap(auto_reset(env.step, env.init))

  def evaluate(variables, state):
    logits, value = apply_fn(variables, state.observation)
    logits = logits - jnp.max(logits, axis=-1, keepdims=True)
    return jnp.where(state.legal_action_mask, logits, jnp.finfo(logits.dtype).min), value

  def recurrent_fn(variables, rng_key, action, state):
    del rng_key
    rows = jnp.arange(action.shape[0])
    mover = state.current_player
    state = jax.vmap(env.step)(state, action)
    logits, value = evaluate(variables, state)
    over = state.terminated
    output = mctx.RecurrentFnOutput(
        reward=state.rewards[rows, mover], discount=jnp.where(over, 0.0, -1.0),
        prior_logits=logits, value=jnp.where(over, 0.0, value))
    return output, state

  def step(variables, state, key):
    k_search, k_reset = jax.random.split(key)
    rows = jnp.arange(state.current_player.shape[0])
    logits, value = evaluate(variables, state)
    root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=state)
    if algorithm == "gumbel":
      out = mctx.gumbel_muzero_policy(
          variables, k_search, root, recurrent_fn, simulations,
          invalid_actions=~state.legal_action_mask,
          max_num_considered_actions=MAX_CONSIDERED, gumbel_scale=GUMBEL_SCALE)
    else:
      out = mctx.muzero_policy(
          variables, k_search, root, recurrent_fn, simulations,
          invalid_actions=~state.legal_action_mask, dirichlet_fraction=DIRICHLET_FRACTION,
          dirichlet_alpha=go.dirichlet_alpha(cfg), pb_c_init=PB_C_INIT, pb_c_base=PB_C_BASE)
    after = play(state, out.action, jax.random.split(k_reset, rows.shape[0]))
    record = (state.observation, out.action_weights, after.rewards[rows, state.current_player],
              after.terminated)
    return after, record

  def loop(variables, state, key):
    if mesh is not None:
      key = jax.random.fold_in(key, jax.lax.axis_index(parallel.DATA))
    return jax.lax.scan(lambda s, k: step(variables, s, k), state, jax.random.split(key, steps))

  if mesh is not None:
    loop = jax.shard_map(loop, mesh=mesh, in_specs=(P(), P(parallel.DATA), P()),
                         out_specs=(P(parallel.DATA), P(None, parallel.DATA)), check_vma=False)
  state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), batch))
  return jax.jit(loop), state


def forward_loop(apply_fn):
  """A jitted (variables, planes [K, B, N, N, F]) -> [] running K batched forwards."""

  @jax.jit
  def run(variables, planes):
    def body(acc, x):
      logits, value = apply_fn(variables, x)
      return acc + jnp.sum(logits) + jnp.sum(value), None
    return jax.lax.scan(body, jnp.float32(0), planes)[0]

  return run


def network_flops(cfg: go.GoConfig, net: AlphaZeroNet) -> int:
  """FLOPs of one evaluation: 2 per multiply-add of the convolutions and dense layers.

  Zero-padded taps at the board's edge count (the hardware computes them), so
  this is ~15% above XLA's cost_analysis at 9x9, which skips them and adds the
  elementwise work.
  """
  p, c, h = cfg.num_points, net.channels, net.value_hidden
  conv3x3 = lambda c_in, c_out: 2 * p * 9 * c_in * c_out
  body = conv3x3(2 * cfg.history + 1, c) + 2 * net.blocks * conv3x3(c, c)
  policy = 2 * p * c * 2 + 2 * (2 * p) * (p + 1)
  value = 2 * p * c * 1 + 2 * p * h + 2 * h * 1
  return body + policy + value


def _chained(run, variables, carry):
  """A function of a key that calls `run` on the carry the previous call left."""
  box = [carry]

  def call(key):
    box[0], out = run(variables, box[0], key)
    return box[0], out

  return call


def _root_evaluations(records, batch: int, steps: int, devices: int) -> float:
  """Positions our network evaluated at the roots per step. Each device decides
  for its shard: all its games when more than a sub-batch lacked an evaluation,
  the sub-batch's size when some did, else none."""
  shard = batch // devices
  missing = np.asarray(records.root_evaluated).reshape(steps, devices, shard).sum(axis=2)
  spare = spare_size(shard)
  return float(np.sum(np.where(missing > spare, shard, np.where(missing > 0, spare, 0)))) / steps


# Dense (no sparsity) bf16 peak of one device, TFLOP/s, from the vendors' data sheets:
# NVIDIA H100 / H200 SXM 989 (H100 PCIe 756, H200 NVL 835), A100 312, L4 121; Google Cloud
# TPU v4 275, v5e 197, v5p 459, v6e (Trillium) 918 per chip. Matched against
# jax's device_kind, the more specific names first.
BF16_PEAK_TFLOPS = (("H100 PCIe", 756.0), ("H200 NVL", 835.0), ("H100", 989.0), ("H200", 989.0),
                    ("A100", 312.0), ("L4", 121.0), ("TPU v4", 275.0), ("TPU v5 lite", 197.0),
                    ("TPU v5e", 197.0), ("TPU v5p", 459.0), ("TPU v5", 459.0),
                    ("TPU v6 lite", 918.0), ("TPU v6e", 918.0))


def bf16_peak_tflops(device_kind: str) -> float | None:
  """The dense bf16 peak of a device kind (jax.Device.device_kind), None when unknown."""
  for name, tflops in BF16_PEAK_TFLOPS:
    if re.search(rf"\b{re.escape(name)}\b", device_kind, re.IGNORECASE):  # not L4 in L40S
      return tflops
  return None


# Why XLA's count can be far below the layer shapes' (seen on a GPU: 1.5 M against 481 M).
UNCOUNTED = "XLA's cost analysis leaves out what it hands to libraries, cuDNN's convolutions on a GPU"


def xla_flops(apply_fn, variables, planes) -> float | None:
  """FLOPs of one evaluation by XLA's cost analysis of the compiled batched forward, or None."""
  try:
    cost = jax.jit(apply_fn).lower(variables, planes).compile().cost_analysis()
  except Exception:  # pylint: disable=broad-except  # a cross-check only: not every backend has it
    return None
  cost = cost[0] if isinstance(cost, (list, tuple)) else cost
  flops = (cost or {}).get("flops")
  return float(flops) / planes.shape[0] if flops else None


def measure(args) -> dict:
  """Prints and returns positions/s of ours and (with args.pgx) the peer's, and the network's
  FLOPs and share of the device's bf16 peak (where known) on one device."""
  cfg = go.GoConfig(size=args.size)
  dtype = {"float32": jnp.float32, "bfloat16": jnp.bfloat16}[args.dtype]
  net = AlphaZeroNet(blocks=args.blocks, channels=args.channels, dtype=dtype)
  apply_fn = lambda v, x: net.apply(v, x, train=False)
  planes_shape = (args.batch, cfg.size, cfg.size, 2 * cfg.history + 1)
  variables = net.init(jax.random.PRNGKey(0), jnp.zeros(planes_shape), train=False)
  b, s, t = args.batch, args.simulations, args.steps
  evals_per_step = b * (s + 1)
  print(f"\n{cfg.size}x{cfg.size}, batch {b}, {s} simulations ({args.algorithm}), "
        f"network {args.blocks}x{args.channels} {args.dtype}, {t} steps per timed call, "
        f"median of {args.repeats}", flush=True)
  print(f"  a step = {b} positions for both; the peer's network evaluates {b} * ({s} + 1) = "
        f"{evals_per_step:,} positions per step", flush=True)

  mesh = parallel.make_mesh() if jax.device_count() > 1 else None
  run_ours, games = ours_loop(cfg, apply_fn, b, t, args.algorithm, s, mesh)
  if args.pgx:
    run_peer, state = pgx_loop(cfg, apply_fn, b, t, args.algorithm, s, mesh)
  else:
    state = None
  if mesh is not None:  # both sides' games split over the devices, parameters replicated
    games, state = jax.device_put((games, state), parallel.split_leading(mesh))
    variables = jax.device_put(variables, parallel.replicated(mesh))
    print(f"  each of {jax.device_count()} devices plays its shard of the games, for both",
          flush=True)
  forward = forward_loop(apply_fn)
  planes = jax.random.bernoulli(jax.random.PRNGKey(3), 0.3, (s + 1,) + planes_shape)
  planes = planes.astype(jnp.float32)
  ours_call = _chained(run_ours, variables, games)
  calls = {"ours": ours_call}
  if args.pgx:
    calls["peer"] = _chained(run_peer, variables, state)
  if mesh is None:  # the network alone is timed on one device
    calls["net"] = lambda key: forward(variables, planes)
  # Round r's calls take the key PRNGKey(r); the untimed round 0 compiles and warms up.
  times = timing.rounds({name: lambda r, call=call: call(jax.random.PRNGKey(r))
                         for name, call in calls.items()}, args.repeats)
  ours = float(np.median(times["ours"]))
  _, records = ours_call(jax.random.PRNGKey(args.repeats + 1))  # a steady-state call, for counts
  ours_evals = b * s + _root_evaluations(records, b, t, jax.device_count())
  ours_pos = b * t / ours
  figures = {"positions_per_s": ours_pos, "evaluations_per_position": ours_evals / b}
  print(f"  agz_jax self-play      {ours_pos:12,.1f} positions/s  "
        f"{ours_pos * ours_evals / b:12,.0f} network evaluations/s "
        f"({ours_evals / b:.2f} per position)")
  if args.pgx:
    peer = float(np.median(times["peer"]))
    median_ratio = float(np.median(np.asarray(times["peer"]) / np.asarray(times["ours"])))
    peer_pos = b * t / peer
    figures.update(pgx_positions_per_s=peer_pos, ratio=ours_pos / peer_pos,
                   ratio_median=median_ratio)
    print(f"  pgx + mctx self-play   {peer_pos:12,.1f} positions/s  "
          f"{peer_pos * (s + 1):12,.0f} network evaluations/s ({s + 1} per position)")
    line = (f"  ratio agz_jax / pgx + mctx: {ours_pos / peer_pos:.2f}x (median times), "
            f"{median_ratio:.2f}x (median of the {args.repeats} rounds' ratios)")
    if jax.default_backend() == "cpu" and cfg.size == 9:
      met = min(ours_pos / peer_pos, median_ratio) >= CPU_TARGET
      line += f"; CPU target {CPU_TARGET}x: {'met' if met else 'NOT met'}"
    print(line)
  if mesh is not None:
    return figures
  net_step = float(np.median(times["net"]))
  figures["network_evaluations_per_s"] = evals_per_step / net_step
  print(f"  network alone: {s + 1} forwards at batch {b} take {net_step * 1e3:,.1f} ms "
        f"({evals_per_step / net_step:,.0f} evaluations/s), "
        f"{net_step / (ours / t):.0%} of an agz_jax step ({ours / t * 1e3:,.1f} ms)"
        + (f", {net_step / (peer / t):.0%} of a pgx + mctx step ({peer / t * 1e3:,.1f} ms)"
           if args.pgx else ""))
  ours_net = net_step * ours_evals / evals_per_step
  print(f"  outside the network (step minus its network evaluations timed alone, noisy): "
        f"agz_jax {(ours / t - ours_net) * 1e3:,.1f} ms"
        + (f", pgx + mctx {(peer / t - net_step) * 1e3:,.1f} ms" if args.pgx else "")
        + " per step")

  flops = network_flops(cfg, net)
  counted = xla_flops(apply_fn, variables, planes[0])
  figures["network_flops_per_evaluation"] = float(flops)
  if counted:
    figures["xla_flops_per_evaluation"] = counted
  kind = jax.devices()[0].device_kind
  peak_tflops = args.peak_tflops or bf16_peak_tflops(kind)
  print(f"  network FLOPs per evaluation: {flops / 1e6:,.1f} M from the layer shapes"
        + (f", {counted / 1e6:,.1f} M by XLA's cost analysis" if counted else "")
        + (f" ({UNCOUNTED})" if counted and counted < flops / 2 else ""))
  if jax.default_backend() == "cpu" or not peak_tflops:
    reason = ("the CPU has no bf16 peak to compare with" if jax.default_backend() == "cpu"
              else f"no bf16 peak known for {kind!r} (give --peak-tflops)")
    figures["peak_share_not_reported"] = reason
    print(f"  share of the bf16 peak not reported: {reason}")
    return figures
  peak = peak_tflops * 1e12
  figures["peak_tflops"] = peak_tflops
  print(f"  share of the {peak_tflops:g} TFLOP/s bf16 peak of {kind}"
        + (" (the network runs in float32)" if args.dtype == "float32" else ""))
  for name, seconds, evals in (("agz_jax self-play", ours / t, ours_evals),
                               ("pgx + mctx self-play", peer / t if args.pgx else None,
                                evals_per_step),
                               ("network alone", net_step, evals_per_step)):
    if seconds is None:
      continue
    rate = flops * evals / seconds
    key = {"agz_jax self-play": "selfplay", "pgx + mctx self-play": "pgx_selfplay",
           "network alone": "network_alone"}[name]
    figures[f"{key}_tflops"] = rate / 1e12
    figures[f"{key}_peak_share"] = rate / peak
    print(f"    {name:22s} {rate / 1e12:8.2f} TFLOP/s = {rate / peak:6.2%} of peak")
  return figures


def arguments(argv=None) -> argparse.Namespace:
  """The command line's settings; `argv` None reads sys.argv."""
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--size", type=int, default=9, help="board size")
  parser.add_argument("--batch", type=int, default=256, help="games played at once (B)")
  parser.add_argument("--simulations", type=int, default=32, help="simulations per search")
  parser.add_argument("--algorithm", choices=("gumbel", "puct"), default="gumbel",
                      help="mctx.gumbel_muzero_policy or mctx.muzero_policy")
  parser.add_argument("--blocks", type=int, default=6, help="residual blocks")
  parser.add_argument("--channels", type=int, default=64, help="filters per convolution")
  parser.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32",
                      help="the network's compute dtype")
  parser.add_argument("--steps", type=int, default=8, help="self-play steps per timed call (T)")
  parser.add_argument("--repeats", type=int, default=7,
                      help="timed rounds (each side once per round)")
  parser.add_argument("--cpu-devices", type=int, default=1,
                      help="on a CPU: split it into this many JAX devices (one per core uses "
                           "every core: XLA runs a convolution on one core)")
  parser.add_argument("--peak-tflops", type=float, default=None,
                      help="the device's dense bf16 peak, for the network's share of it "
                           "(default: looked up by device kind, BF16_PEAK_TFLOPS)")
  parser.add_argument("--no-pgx", dest="pgx", action="store_false",
                      help="time our self-play only (pgx not installed)")
  return parser.parse_args(argv)


def main():
  args = arguments()
  if args.cpu_devices > 1:
    jax.config.update("jax_num_cpu_devices", args.cpu_devices)
  print(timing.environment())
  measure(args)

if __name__ == "__main__":
  main()
