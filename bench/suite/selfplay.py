"""The selfplay part: self-play positions/s against pgx + mctx, and the network's share of
the device's bf16 peak (bench/selfplay_speed.py)."""

from suite.common import PGX_MISSING, Record, pgx_version


def run(rec: Record, sizes: dict, deadline: float, args) -> None:
  del deadline, args
  import selfplay_speed  # pylint: disable=import-outside-toplevel
  peer = pgx_version() is not None
  argv = [f"--{k}={v}" for k, v in sizes.items()] + ([] if peer else ["--no-pgx"])
  f = selfplay_speed.measure(selfplay_speed.arguments(argv))
  setting = (f"9x9, B {sizes['batch']}, {sizes['simulations']} sims, {sizes['blocks']}x"
             f"{sizes['channels']} {sizes['dtype']}")
  rows = [(f"{setting}: agz_jax positions/s", f"{f['positions_per_s']:,.1f} "
           f"({f['evaluations_per_position']:.2f} evaluations per position)")]
  skipped = [] if peer else [f"the pgx + mctx comparison: {PGX_MISSING}"]
  if peer:
    rows.append((f"{setting}: pgx + mctx positions/s, ratio (median of rounds)",
                 f"{f['pgx_positions_per_s']:,.1f}, **{f['ratio']:.2f}x** "
                 f"({f['ratio_median']:.2f}x)"))
  rows.append(("network FLOPs per evaluation (layer shapes; XLA cost analysis)",
               f"{f['network_flops_per_evaluation'] / 1e6:,.1f} M; "
               + (f"{f['xla_flops_per_evaluation'] / 1e6:,.1f} M"
                  + (f" ({selfplay_speed.UNCOUNTED})" if f["xla_flops_per_evaluation"]
                     < f["network_flops_per_evaluation"] / 2 else "")
                  if "xla_flops_per_evaluation" in f else "not given by XLA")))
  if "peak_share_not_reported" in f:
    skipped.append(f"the network's share of the bf16 peak: {f.pop('peak_share_not_reported')}")
  else:
    rows.append((f"network during self-play: TFLOP/s, share of the {f['peak_tflops']:g} "
                 f"TFLOP/s bf16 peak", f"{f['selfplay_tflops']:.1f}, "
                 f"**{f['selfplay_peak_share']:.1%}** (network alone "
                 f"{f['network_alone_peak_share']:.1%})"))
  rec.add(f, rows, skipped)
