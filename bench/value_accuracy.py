"""AlphaGo's Figure 2b: how well the value network and rollouts predict human games' results.

Positions are drawn from held-out human games (dated `--val-from` or later,
never trained on), each valued (a) by the value network, (b) by the mean
outcome of `--rollouts` games played out with the fast rollout policy (none
with `--rollouts 0`). For each range of move numbers: the mean squared error
against the game's real result (+1 / -1 from the view of the player to move;
games without a known result are left out). Several value networks may be
compared on the same positions (`--value NAME=DIR`, repeated). Writes
OUT/value_accuracy.json, a markdown table OUT/value_accuracy.md and the
picture OUT/value_accuracy.png.

Each value network's row also has its calibration: the scale a in [0, 1] that
brings a * v nearest the results in the range (least squares, a = sum(vz) /
sum(v^2)), with the error of a * v. A range where a is small is one where the
network's value says more than it knows; a PUCT search can take those scales
as `search.value_scale` (`--value-scale` of the GTP engine), one per range.

  python bench/value_accuracy.py --value workdir/value_cpu \\
      --rollout pretrained/alphago-19x19/rollout_policy --data data/kgs --out figures/value
  python bench/value_accuracy.py --value "self-play=workdir/value_cpu" \\
      --value "human games=workdir/value_human" ...
  python bench/value_accuracy.py --value "dual=workdir/sl_dual_19x19" \\
      --value "value_net=pretrained/alphago-19x19/value_net" \\
      --rollout pretrained/alphago-19x19/rollout_policy --data data/human \\
      --val-from 2017-05-01,tom-=2011-08-01 --even --out figures/value_dual
  python bench/value_accuracy.py --value pretrained/human-19x19 --rollouts 0 \\
      --data data/human --val-from 2017-05-01,tom-=2011-08-01 --even --positions 8192 \\
      --batch 64 --out figures/value_scale

A dual network (AlphaGo Zero's resnet, task sl_dual) is valued by its value head.
"""

import argparse
import functools
import json
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import alphago, checkpoint, data, go, nets
from agz_jax.data import positions


def named(specs: list[str]) -> dict[str, str]:
  """{name: checkpoint} from `--value` arguments, each DIR or NAME=DIR."""
  if len(specs) == 1 and "=" not in specs[0]:
    return {"value network": specs[0]}
  out = {}
  for spec in specs:
    name, _, path = spec.rpartition("=")
    name = name or os.path.basename(os.path.normpath(path))
    if name in out:
      raise ValueError(f"two value networks named {name!r}: name them with --value NAME=DIR")
    out[name] = path
  return out


def load_value(value_path: str):
  """(config, model, variables) of a value network's checkpoint, or of a dual network's
  (AlphaGo Zero's resnet: its value head)."""
  value_config, value_vars = checkpoint.load_network(value_path)
  if value_config.model.kind != "value" and not nets.has_value(value_config.model):
    raise ValueError(f"{value_path} holds a {value_config.model.kind!r} network, which has no "
                     "value: give a value network (task value) or a dual network (resnet)")
  return value_config, nets.make(value_config.model), jax.tree.map(jnp.asarray, value_vars)


def value_of(model, variables, planes):
  """[B] values of the player to move: a value network's output or a dual network's value head."""
  out = model.apply(variables, planes)
  return out[1] if isinstance(out, tuple) else out


def load_rollout(rollout_path: str):
  """(model, pattern groups, variables) of a fast rollout policy's checkpoint."""
  rollout_config, rollout_vars = checkpoint.load_network(rollout_path)
  if rollout_config.model.kind != "fast_policy":
    raise ValueError(f"{rollout_path} holds a {rollout_config.model.kind!r} network, not a fast "
                     "rollout policy (task rollout_policy)")
  return (nets.make(rollout_config.model), alphago.patterns.groups_of(rollout_config.model),
          {"params": jax.tree.map(jnp.asarray, rollout_vars["params"]),
           "tables": alphago.patterns.make_tables(rollout_vars["patterns"])})


def evaluate(cfg, encodings, value_models, rollout_model, groups, rollouts: int, max_moves: int,
             value_vars, rollout_vars, states, key):
  """([[B] per value network], [B] mean rollout outcome or None without rollouts) for the players
  to move in `states`."""
  planes = {e: go.features(cfg, states, e) for e in set(encodings)}
  v = [value_of(m, p, planes[e]) for m, p, e in zip(value_models, value_vars, encodings)]
  if not rollouts:
    return v, None
  fast = alphago.rollout_logits(cfg, rollout_model, groups)
  starts = jax.tree.map(lambda x: jnp.repeat(x, rollouts, axis=0), states)
  z = alphago.rollout.rollouts(cfg, lambda s: fast(rollout_vars, s), starts, key, max_moves=max_moves)
  return v, jnp.mean(z.reshape(-1, rollouts), axis=1)


def buckets(move_number: np.ndarray, target: np.ndarray, predictions: dict, width: int) -> list:
  """Rows {moves: 'a-b', positions, <name>: MSE} by ranges of `width` move numbers."""
  rows = []
  for start in range(0, int(move_number.max()) + 1, width):
    here = (move_number >= start) & (move_number < start + width)
    if not here.any():
      continue
    row = {"moves": f"{start}-{start + width - 1}", "positions": int(here.sum())}
    for name, p in predictions.items():
      row[name] = float(np.mean((p[here] - target[here]) ** 2))
    rows.append(row)
  return rows


def calibration(move_number: np.ndarray, target: np.ndarray, value: np.ndarray,
                width: int) -> list:
  """[(scale, MSE of scale * value or None)] for every range of `width` move numbers up to the
  last position's: the least-squares scale of `value` against `target` in the range, clipped
  to [0, 1]; a range without positions takes the range before's scale (1 for the first), so
  that entry i covers moves i * width onwards, as search.value_scale reads it."""
  out, scale = [], 1.0
  for start in range(0, int(move_number.max()) + 1, width):
    here = (move_number >= start) & (move_number < start + width)
    if not here.any():
      out.append((scale, None))
      continue
    v, z = value[here], target[here]
    scale = float(np.clip(np.sum(v * z) / max(float(np.sum(v * v)), 1e-12), 0.0, 1.0))
    out.append((scale, float(np.mean((scale * v - z) ** 2))))
  return out


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--value", required=True, action="append",
                      help="a value network's checkpoint, DIR or NAME=DIR (repeat to compare)")
  parser.add_argument("--rollout", default=None,
                      help="the fast rollout policy's checkpoint (needed unless --rollouts 0)")
  parser.add_argument("--data", default="data/kgs", help="imported human games")
  parser.add_argument("--val-from", default="2017-05-01",
                      help="held-out games: from this date (or per source, as data.val_from: "
                      "'2017-05-01,tom-=2011-08-01')")
  parser.add_argument("--even", action="store_true",
                      help="only even games with a komi from 5.5 to 7.5 (those sl_dual's value "
                      "head is trained and measured on)")
  parser.add_argument("--positions", type=int, default=1000)
  parser.add_argument("--rollouts", type=int, default=100,
                      help="rollouts per position (0: the value networks alone)")
  parser.add_argument("--batch", type=int, default=8, help="positions valued at once")
  parser.add_argument("--bucket", type=int, default=50, help="move numbers per row")
  parser.add_argument("--max-rollout-moves", type=int, default=500)
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--out", required=True, help="output folder")
  args = parser.parse_args(argv)
  try:
    values_at = named(args.value)
    loaded = [load_value(path) for path in values_at.values()]
    value_config, first = loaded[0][0], next(iter(values_at.values()))
    for (config, _, _), path in zip(loaded[1:], list(values_at.values())[1:]):
      if config.game.size != value_config.game.size:
        raise ValueError(f"{path} plays {config.game.size}x{config.game.size}, {first} "
                         f"{value_config.game.size}x{value_config.game.size}: compare networks "
                         "of one board size")
    if args.rollouts < 0:
      raise ValueError(f"--rollouts must be 0 or more, got {args.rollouts}")
    if args.rollouts and args.rollout is None:
      raise ValueError("rollouts need a fast rollout policy: give --rollout DIR, or --rollouts 0 "
                       "for the value networks alone")
    rollout_model, groups, rollout_vars = (load_rollout(args.rollout) if args.rollouts
                                           else (None, None, None))
    archive = data.load(args.data)
    _, val_idx = data.split_by_date(archive, args.val_from)
    val_idx = val_idx[archive.winner[val_idx] != 0]
    if args.even:
      val_idx = val_idx[data.value_games(archive, (5.5, 7.5))[val_idx]]
    if not len(val_idx):
      raise ValueError(f"no held-out game with a known result dated {args.val_from} or later "
                       f"in {args.data}")
    if archive.size != value_config.game.size:
      raise ValueError(f"{args.data} holds {archive.size}x{archive.size} games; the value "
                       f"network plays {value_config.game.size}x{value_config.game.size}")
  except (ValueError, FileNotFoundError) as e:
    print(f"value_accuracy: {e}", file=sys.stderr)
    return 2
  size = archive.size
  cfg = go.GoConfig(size=size, komi=value_config.game.komi, history=8,
                    max_moves=int(np.diff(archive.offsets).max()) + 1)
  table = jax.tree.map(jnp.asarray, positions.make_table(archive, val_idx))
  sample = jax.jit(functools.partial(positions.sample_states, cfg, num_games=args.batch,
                                     positions_per_game=1))
  run = jax.jit(functools.partial(evaluate, cfg, [c.model.encoding for c, _, _ in loaded],
                                  [m for _, m, _ in loaded], rollout_model, groups,
                                  args.rollouts, args.max_rollout_moves))
  value_params = [p for _, _, p in loaded]
  key = jax.random.PRNGKey(args.seed)
  values, means, targets, moves = [[] for _ in loaded], [], [], []
  started = time.monotonic()
  for i in range(-(-args.positions // args.batch)):
    states, _, game, move_number = sample(table, jax.random.fold_in(key, 2 * i))
    v, z = jax.device_get(run(value_params, rollout_vars, states, jax.random.fold_in(key, 2 * i + 1)))
    for column, vi in zip(values, v):
      column.append(vi)
    means.append(z)
    targets.append(np.asarray(table.winner[game]) * np.asarray(states.to_play))
    moves.append(np.asarray(move_number))
    done = (i + 1) * args.batch
    print(f"{min(done, args.positions)}/{args.positions} positions, "
          f"{done / (time.monotonic() - started):.2f}/s", flush=True)
  values = [np.concatenate(x)[:args.positions].astype(np.float64) for x in values]
  targets, moves = (np.concatenate(x)[:args.positions].astype(np.float64)
                    for x in (targets, moves))
  names = dict(zip(values_at, values))
  if args.rollouts:
    names[f"{args.rollouts} rollouts"] = np.concatenate(means)[:args.positions].astype(np.float64)
  moves = moves.astype(int)
  rows = buckets(moves, targets, names, args.bucket)
  overall = {name: float(np.mean((p - targets) ** 2)) for name, p in names.items()}
  scales = {}
  for name, v in zip(values_at, values):
    fitted = calibration(moves, targets, v, args.bucket)
    for row, (scale, mse) in zip(rows, [f for f in fitted if f[1] is not None]):
      row[f"{name} scale"], row[f"{name} scaled"] = scale, mse
    scales[name] = [scale for scale, _ in fitted]
  os.makedirs(args.out, exist_ok=True)
  with open(os.path.join(args.out, "value_accuracy.json"), "w", encoding="utf-8") as f:
    json.dump({"rows": rows, "overall": overall, "value_scale": scales, "args": vars(args)}, f,
              indent=1)
  columns = list(names) + [f"{n} {part}" for n in values_at for part in ("scale", "scaled")]
  header = [f"MSE, {n}" for n in names] + [
      f"{n}: {part}" for n in values_at for part in ("scale a", "MSE of a * v")]
  lines = ["| moves | positions | " + " | ".join(header) + " |",
           "|---|---|" + "---|" * len(columns)]
  lines += [f"| {r['moves']} | {r['positions']} | " + " | ".join(f"{r[c]:.3f}" for c in columns)
            + " |" for r in rows]
  lines.append("| all | " + f"{len(targets)} | " + " | ".join(f"{overall[n]:.3f}" for n in names)
               + " |" + " |" * (len(columns) - len(names)))
  for name, scale in scales.items():
    lines.append(f"\n{name}: search.value_scale = ({', '.join(f'{a:.2f}' for a in scale)},) "
                 f"with search.value_scale_moves = {args.bucket}")
  with open(os.path.join(args.out, "value_accuracy.md"), "w", encoding="utf-8") as f:
    f.write("\n".join(lines) + "\n")
  import matplotlib  # pylint: disable=import-outside-toplevel
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel
  fig, ax = plt.subplots(figsize=(7, 4))
  centres = [int(r["moves"].split("-")[0]) + args.bucket / 2 for r in rows]
  for name in names:
    ax.plot(centres, [r[name] for r in rows], marker="o", label=name)
  ax.set(title="Predicting held-out human games' results (AlphaGo's Fig. 2b)",
         xlabel="move number", ylabel="mean squared error")
  ax.grid(alpha=0.3)
  ax.legend()
  fig.tight_layout()
  fig.savefig(os.path.join(args.out, "value_accuracy.png"), dpi=100)
  print("\n".join(lines))
  return 0


if __name__ == "__main__":
  sys.exit(main())
