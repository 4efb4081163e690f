"""The env part: steps/s of agz_jax.go against pgx's Go at large batches (bench/env_speed.py)."""

from suite.common import PGX_MISSING, Record, pgx_version


def run(rec: Record, sizes: dict, deadline: float, args) -> None:
  del deadline, args
  import env_speed  # pylint: disable=import-outside-toplevel
  peer = pgx_version() is not None
  if not peer:
    rec.add({}, skipped=[f"the pgx comparison: {PGX_MISSING}"])
  for size, batch in sizes["runs"]:
    f = env_speed.measure(size, batch, sizes["steps"], sizes["repeats"], peer=peer)
    key = f"{size}x{size}_b{batch}"
    rows = [(f"{size}x{size}, batch {batch}: agz_jax steps/s (+ features)",
             f"{f['steps_per_s']:,.0f} ({f['steps_per_s_with_features']:,.0f})")]
    if peer:
      rows.append((f"{size}x{size}, batch {batch}: pgx steps/s, ratio (with features)",
                   f"{f['pgx_steps_per_s']:,.0f}, **{f['ratio']:.2f}x** "
                   f"({f['ratio_with_features']:.2f}x)"))
    rec.add({f"{key}_{k}": v for k, v in f.items()}, rows)
