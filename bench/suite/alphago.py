"""The alphago part: AlphaGo's 48 planes against the 17 (the ladder reader's lanes swept,
the ladders read on the host and on the device, XLA's loops in command buffers), and
rollouts of the shipped rollout policy against random playouts."""

import json
import os
import subprocess
import sys
import time

from suite.common import BENCH, LOOP_GRAPHS, REPO, Record, child_environment, data_kind


def run(rec: Record, sizes: dict, deadline: float, args) -> None:
  """AlphaGo's planes (how many ladder lanes an accelerator wants) and its rollouts."""
  import features_speed  # pylint: disable=import-outside-toplevel
  from agz_jax import alphago, go  # pylint: disable=import-outside-toplevel
  size, repeats = sizes["size"], sizes["repeats"]
  cfg = go.GoConfig(size=size, komi=7.5, history=8)
  human = size == 19 and data_kind(args.data) == "archive"
  where = "human positions" if human else f"positions after {sizes['random_moves']} random moves"
  default, reader_default = alphago.ladder_settings().lanes, alphago.ladder_settings().reader
  other = {"host": "device", "device": "host"}[reader_default]
  positions = {}

  def states_of(batch):
    if batch not in positions:
      positions[batch] = (features_speed.human_positions(cfg, args.data, batch, 0) if human else
                          features_speed.random_positions(cfg, batch, sizes["random_moves"], 0))
    return positions[batch]

  def planes(batch, fraction, place=None):
    """The 48 planes at `fraction` ladder lanes per position, read where `place` says (the
    backend's default, else on the device: the lanes are a device setting). None: the 17, and
    the 48 without the ladder reading, the planes' cost apart from the reading."""
    key, states = f"{size}x{size}_b{batch}", states_of(batch)
    if fraction is None:
      plain = features_speed.positions_per_second(cfg, "agz17", states, repeats)
      bare = features_speed.positions_per_second(cfg, "without ladders", states, repeats)
      rec.add({f"{key}_agz17_per_s": plain, f"{key}_alphago48_no_ladders_per_s": bare},
              [(f"{size}x{size}, batch {batch}, {where}: 17 planes; 48 without the ladder "
                f"reading, positions/s", f"{plain:,.0f}; {bare:,.0f}")])
      return
    plain = rec.data["figures"][f"{key}_agz17_per_s"]
    place = place or (reader_default if fraction == default else "device")
    rate = features_speed.positions_per_second(
        cfg, "alphago48", states, repeats, features_speed.ladder_settings(place, fraction))
    if place == "host":  # the lanes there are the CPU's, whatever this backend's
      rec.add({f"{key}_alphago48_host_per_s": rate},
              [(f"{size}x{size}, batch {batch}: 48 planes, the ladders read on the host's CPU"
                f"{' (the default)' if place == reader_default else ''}, positions/s "
                f"(ratio to 17)", f"{rate:,.0f} ({rate / plain:.4f}x)")])
      return
    rec.add({f"{key}_alphago48_lanes{fraction:g}_per_s": rate},
            [(f"{size}x{size}, batch {batch}: 48 planes, read on the device"
              f"{' (the default)' if place == reader_default else ''}, {fraction:g} ladder "
              f"lanes per position{' (the default)' if fraction == default else ''}, "
              f"positions/s (ratio to 17)", f"{rate:,.0f} ({rate / plain:.4f}x)")])

  def graphs(batch):
    """The 48 planes again with XLA's loops recorded in command buffers (CUDA graphs with
    conditional nodes), in a process of its own: XLA reads its flags once, at start-up."""
    key, plain = f"{size}x{size}_b{batch}", rec.data["figures"][f"{size}x{size}_b{batch}_agz17_per_s"]
    argv = json.dumps({"size": size, "data": args.data, "batch": batch, "human": human,
                       "moves": sizes["random_moves"], "repeats": repeats})
    env = child_environment(args.smoke)
    env["XLA_FLAGS"] = f"{env.get('XLA_FLAGS', '')} {LOOP_GRAPHS}".strip()
    try:
      done = subprocess.run([sys.executable, os.path.join(BENCH, "suite", "loop_graphs.py"), argv],
                            env=env, capture_output=True, text=True, cwd=REPO, check=True,
                            timeout=max(10.0, deadline - time.perf_counter() - 5))
      rate = float(done.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError) as e:
      last = (getattr(e, "stderr", None) or "").strip().splitlines()[-1:]
      rec.add({}, skipped=[f"batch {batch} with loops in command buffers: "
                           f"{type(e).__name__} {' '.join(last)}"[:300]])
      return
    rec.add({f"{key}_alphago48_loop_graphs_per_s": rate},
            [(f"{size}x{size}, batch {batch}: 48 planes, read on the device at the default "
              f"lanes, XLA's loops in command "
              f"buffers (`XLA_FLAGS={LOOP_GRAPHS}`), positions/s (ratio to 17)",
              f"{rate:,.0f} ({rate / plain:.4f}x)")])

  def reader(batch):
    """Where the reading's time goes (bench/ladder_reader.py): moves tried, the cost of one,
    and the longest reading alone on one lane, the floor under any number of lanes."""
    import ladder_reader  # pylint: disable=import-outside-toplevel
    f = ladder_reader.measure(cfg, states_of(batch), repeats)  # the reader on the device
    key = f"{size}x{size}_b{batch}_reader"
    rec.add({f"{key}_{k}": v for k, v in f.items()})
    if "tries" in f:
      rec.add({}, [(f"{size}x{size}, batch {batch}: ladders (undecided where they start), moves "
                    f"tried, the longest reading", f"{f['ladders']:,} ({f['undecided']:,}), "
                    f"{f['tries']:,}, {f['tries_longest']:,}"),
                   ("the ladder reading: us per ladder, per move tried; the longest reading "
                    "alone on one lane", f"{f['us_per_ladder']:,.1f}, {f['us_per_move']:,.2f}; "
                    f"{f['longest_alone_s'] * 1e3:,.2f} ms "
                    f"({f['longest_alone_s'] / f['tries_longest'] * 1e6:,.1f} us per move)")])

  # Most telling first (a short budget keeps those): the first batch's 17 planes and the 48
  # without the reading, the 48 with the default reader, with the other one, on the device with
  # the loops in command buffers, the rollouts, where the reading's time goes, then the rest.
  first, *others = sizes["batches"]
  sweep = [f for f in sizes["lane_fractions"] if f != default]
  steps = [(first, None), (first, default), ("other", first), ("graphs", first), "rollouts",
           ("reader", first)] + [(first, f) for f in sweep] + [
               (b, f) for b in others for f in [None, default] + sweep]
  names = {"graphs": " with loops in command buffers", "reader": ": where the reading's time goes",
           "other": f": the ladders read on the {other}"}
  for i, step in enumerate(steps):
    if time.perf_counter() > deadline - (60 if step == "rollouts" else 30):
      rec.add({}, skipped=[", ".join(
          s if s == "rollouts" else f"batch {s[1]}{names[s[0]]}" if s[0] in names else
          f"batch {s[0]}" + ("" if s[1] is None else f" at {s[1]:g} lanes") for s in steps[i:])
          + ": the part's time was spent"])
      return
    if step == "rollouts":
      rollouts(rec, sizes, size, human, args)
    elif step[0] == "graphs":
      graphs(step[1])
    elif step[0] == "reader":
      reader(step[1])
    elif step[0] == "other":
      planes(step[1], default, other)
    else:
      planes(*step)


def rollouts(rec: Record, sizes: dict, size: int, human: bool, args) -> None:
  """The shipped rollout policy's playouts against random playouts (bench/rollout_speed.py)."""
  import rollout_speed  # pylint: disable=import-outside-toplevel
  policy = sizes["rollout_policy"] and os.path.join(REPO, sizes["rollout_policy"])
  r = rollout_speed.measure(size, sizes["rollout_batch"], sizes["repeats"], policy,
                            args.data if human else None, None, 500)
  rec.add({"rollout_random_playouts_per_s": r["random"]["playouts_per_s"],
           "rollout_p_pi_playouts_per_s": r["p_pi"]["playouts_per_s"],
           "rollout_p_pi_moves_ratio": r["ratio_moves"]},
          [(f"{size}x{size}, {sizes['rollout_batch']} playouts from move "
            f"{rollout_speed.START_MOVE.get(size)}: p_pi playouts/s, moves/s (random play)",
            f"{r['p_pi']['playouts_per_s']:,.0f}, {r['p_pi']['moves_per_s']:,.0f} "
            f"({r['random']['playouts_per_s']:,.0f}, {r['random']['moves_per_s']:,.0f}); "
            f"p_pi moves at **{r['ratio_moves']:.2f}x** the random rate")])
