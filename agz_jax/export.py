"""Ship a trained network: copy what play needs of a checkpoint into a folder.

  python -m agz_jax.export workdir/zero_9x9 pretrained/zero-9x9
  python -m agz_jax.export workdir/sl_dual_19x19 pretrained/human-19x19 --dtype bfloat16
  python -m agz_jax.gtp --pretrained zero-9x9        # once it is in pretrained/

The folder holds the network's parameters and the run's config (a few MB at
most for the CPU-sized networks), not the training state (optimizer, replay
buffer, games in progress). Every player, `--checkpoint` and `--pretrained`
reads it like a checkpoint.
"""

import argparse
import sys

from agz_jax import checkpoint, paths


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description="Copy a checkpoint's network for shipping.")
  parser.add_argument("checkpoint", help="a training workdir (its newest checkpoint) or a checkpoint")
  parser.add_argument("out", help="the new folder")
  parser.add_argument("--dtype", choices=("bfloat16",), default=None,
                      help="store the float32 parameters in bfloat16: half the size, played "
                      "in float32")
  args = parser.parse_args(argv)
  try:
    out = checkpoint.export_network(args.checkpoint, args.out, dtype=args.dtype)
  except (FileNotFoundError, FileExistsError, paths.UnsupportedPath) as e:
    print(f"export: {e}", file=sys.stderr)
    return 2
  print(f"network of {checkpoint.find_checkpoint(args.checkpoint)} written to {out}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
