"""Trains the dual network on human games for a fixed number of minutes, then ships it.

  python -m agz_jax.timed_training --data data/human --out OUT --minutes 8
  python -m agz_jax.timed_training --data data/human --out OUT --smoke   # a CPU check

For an accelerator lent for a short while: it checks what it needs first (an
accelerator, the imported games, the output folder) and says what it skips,
trains `configs/sl_dual_19x19.py` at the size given (bfloat16, 1,024 games a
step, one position of each), and writes to OUT:

  NAME/                 the network, as `python -m agz_jax.export` writes it
                        (`--pretrained`-ready once copied to pretrained/)
  NAME.tar.gz           the same folder as one file
  metrics.jsonl         the run's metrics (top-1, value MSE by move number, ...)

`--init-from pretrained/human-19x19` trains the shipped network on (a second
lease's minutes add to the first's), with `--value-weight` to weigh its value
head more.

The learning rate follows the clock: a first stretch of `--calibrate` seconds
measures the steps per second, then the run resumes with `steps` set to what
the remaining time allows and the step size halved at each third of them, so
that the last third trains at a quarter of the first step size whatever the
device. Compiled programs are cached in OUT's workdir, so the resumed run
does not compile again.
"""

import argparse
import json
import os
import sys
import time

from agz_jax import config_files, paths

# The input encodings a dual network of this command may read.
ENCODINGS = ("agz17", "katago", "katago_noladders")


def _config(args, accelerator: bool):
  c = config_files.load(os.path.join(config_files.CONFIGS, "sl_dual_19x19.py")).get_config()
  c.data.dir = args.data
  c.model.blocks, c.model.channels = args.blocks, args.channels
  c.model.encoding = args.encoding
  c.model.dtype = "bfloat16" if accelerator else "float32"
  c.data.games_per_batch = args.games_per_batch
  c.train.learning_rate = args.learning_rate
  if args.value_weight is not None:
    c.train.value_weight = args.value_weight
  c.init_from = args.init_from or ""
  c.train.clip_norm = 5.0
  c.eval.num_positions = c.eval.num_value_positions = 4096
  c.eval.chunk = 512
  c.mesh.cpu_devices = 1
  c.log_every = 50
  c.checkpoint.keep = 2
  if args.smoke:  # the smallest run that goes through every piece
    c.model.blocks, c.model.channels, c.model.value_hidden = 1, 8, 8
    c.data.games_per_batch = 4
    c.eval.num_positions = c.eval.num_value_positions = c.eval.chunk = 8
    c.log_every = 1
  return c


def _check(args) -> tuple[bool, list[str]]:
  """(on an accelerator, what is skipped); exits with one line when a prerequisite is missing."""
  import jax  # pylint: disable=import-outside-toplevel
  from agz_jax import data  # pylint: disable=import-outside-toplevel
  platform = jax.devices()[0].platform
  accelerator = platform != "cpu"
  skipped = []
  if not accelerator and not args.smoke:
    sys.exit("timed_training: JAX sees no accelerator (platform cpu); on a CPU use --smoke to "
             "check the command, or train with python -m agz_jax.launch --config "
             "configs/sl_dual_19x19.py")
  if not accelerator:
    skipped.append("bfloat16 (CPU: float32)")
  try:
    archive = data.load(args.data)
  except (FileNotFoundError, ValueError) as e:
    sys.exit(f"timed_training: {e}")
  if archive.size != 19:
    sys.exit(f"timed_training: {args.data} holds {archive.size}x{archive.size} games; this "
             "command trains on 19x19")
  os.makedirs(args.out, exist_ok=True)
  if os.path.exists(os.path.join(args.out, args.name)):
    sys.exit(f"timed_training: {os.path.join(args.out, args.name)} exists; give another --out "
             "or --name")
  print(f"timed_training: {len(jax.devices())} {jax.devices()[0].device_kind} device(s), "
        f"{archive.num_games:,} games in {args.data}, output to {args.out}", flush=True)
  return accelerator, skipped


def _metrics(workdir: str) -> list[dict]:
  """The rows of the run's metrics.jsonl (a local workdir or a URL)."""
  text = (paths.path(workdir) / "metrics.jsonl").read_text()
  return [json.loads(line) for line in text.splitlines() if line.strip()]


def _last_speed(workdir: str) -> tuple[int, float]:
  """(last step, seconds per step at the last report that did not compile)."""
  rows = _metrics(workdir)
  timed = [r for r in rows if r["iteration"] > 1] or rows
  return rows[-1]["iteration"], timed[-1]["seconds_per_step"]


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(prog="python -m agz_jax.timed_training",
                                   description=__doc__.split("\n\n")[0])
  parser.add_argument("--data", default="data/human", help="imported games (import_sgf --out)")
  parser.add_argument("--out", required=True, help="folder for the network and the metrics")
  parser.add_argument("--minutes", type=float, default=8.0, help="training time, compiling "
                      "included (default 8)")
  parser.add_argument("--calibrate", type=float, default=90.0,
                      help="seconds of the first stretch that measures the speed (default 90)")
  parser.add_argument("--blocks", type=int, default=10)
  parser.add_argument("--channels", type=int, default=128)
  parser.add_argument("--encoding", default="agz17", choices=ENCODINGS,
                      help="the network's input planes: AlphaGo Zero's 17 (default) or KataGo's, "
                           "with or without its ladder planes")
  parser.add_argument("--games-per-batch", type=int, default=1024)
  parser.add_argument("--learning-rate", type=float, default=0.1)
  parser.add_argument("--value-weight", type=float, default=None,
                      help="the value loss's weight against the policy's (default: the "
                           "config's, 0.25)")
  parser.add_argument("--init-from", default=None,
                      help="start from this dual network (e.g. pretrained/human-19x19) instead "
                           "of random weights; --blocks and --channels must be its")
  parser.add_argument("--name", default="human-19x19", help="the network's folder name in OUT")
  parser.add_argument("--workdir", default=None, help="training workdir (default OUT/NAME-run)")
  parser.add_argument("--smoke", action="store_true",
                      help="a tiny network for a few steps: checks the command on a CPU")
  args = parser.parse_args(argv)
  if args.smoke:  # one step, then three more resumed: every piece, in a minute or two
    args.calibrate = 0.0
  accelerator, skipped = _check(args)
  workdir = args.workdir or os.path.join(args.out, f"{args.name}-run")
  from agz_jax import checkpoint, parallel, training  # pylint: disable=import-outside-toplevel
  parallel.use_compile_cache(os.path.join(workdir, "compiled"), min_compile_seconds=0.0)
  start = time.perf_counter()
  config = _config(args, accelerator)
  budget = 60.0 * args.minutes
  config.steps = 10**9
  config.eval.every = config.checkpoint.every = 10**9  # the stretch ends with both
  try:
    training.train_and_evaluate(config, workdir, time_limit_s=min(args.calibrate, budget))
  except (FileNotFoundError, checkpoint.CheckpointMismatch) as e:  # a network to start from
    sys.exit(f"timed_training: {e}")                               # not there, or not fitting
  done, per_step = _last_speed(workdir)
  left = budget - (time.perf_counter() - start)
  steps = done + max(int(left / max(per_step, 1e-6) * 0.9), 1)  # 10% for evaluations, saves
  if args.smoke:
    steps, left = done + 3, None
  config.steps = steps
  config.train.lr_halving_steps = max(steps // 3, 1)
  config.eval.every = config.checkpoint.every = max((steps - done) // 4, 1)
  print(f"timed_training: first stretch: {done} step(s) at {per_step * 1000:.1f} ms a step; "
        f"{steps - done} more in the time left, the step size halved every "
        f"{config.train.lr_halving_steps} steps", flush=True)
  if left is None or left > 0:
    training.train_and_evaluate(config, workdir, time_limit_s=left)
  out = checkpoint.export_with_archive(workdir, args.out, args.name)
  metrics = paths.path(workdir) / "metrics.jsonl"
  with open(os.path.join(args.out, "metrics.jsonl"), "w", encoding="utf-8") as f:
    f.write(metrics.read_text())
  rows = _metrics(workdir)
  final = [r for r in rows if "val_top1" in r][-1]
  print(f"timed_training: {final['iteration']} steps in {time.perf_counter() - start:.0f} s; "
        f"held-out top-1 {final['val_top1']:.3f}, value MSE {final['val_mse']:.3f} (training "
        f"positions {final['train_mse']:.3f}); the network is in {out}", flush=True)
  if skipped:
    print(f"timed_training: skipped: {'; '.join(skipped)}", flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main())
