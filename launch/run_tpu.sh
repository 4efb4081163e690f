#!/usr/bin/env bash
# Starts training on every host of a TPU pod slice, in the background, logging to ~/train.log.
# On a pod, jax.distributed finds the other hosts by itself.
#
#   launch/run_tpu.sh [--dry-run] NAME ZONE WORKDIR [CONFIG=tpu_v4.py] [--config.key=value ...]
#   launch/run_tpu.sh agz-v4 us-central2-b gs://BUCKET/agz_19x19
#
# Preemption: the trainer checkpoints on SIGTERM and resumes from WORKDIR when
# started again with the same command. --dry-run prints the gcloud command and
# runs nothing.
set -euo pipefail
# shellcheck source=SCRIPTDIR/dry_run.sh
. "$(dirname "$0")/dry_run.sh"
parse_dry_run "$@"
set -- ${args[@]+"${args[@]}"}
if [ $# -lt 3 ]; then
  echo "usage: $0 [--dry-run] NAME ZONE WORKDIR [CONFIG] [--config.key=value ...]" >&2
  exit 2
fi
name=$1 zone=$2 workdir=$3 config=tpu_v4.py
shift 3
if [ $# -gt 0 ] && [[ $1 != --* ]]; then  # CONFIG may be left out before the overrides
  config=$1
  shift
fi
# The remote shell sees every argument quoted, as typed here.
launch=$(printf ' %q' python -m agz_jax.launch --config "$config" --workdir "$workdir" "$@")
run gcloud compute tpus tpu-vm ssh "$name" --zone "$zone" --worker=all --command \
  "cd agz_jax && . .venv/bin/activate && nohup${launch} > ~/train.log 2>&1 &"
if [ "$dry_run" = 1 ]; then
  exit 0
fi
echo "started on all workers of $name; follow with:"
echo "  gcloud compute tpus tpu-vm ssh $name --zone $zone --worker=0 --command 'tail -f ~/train.log'"
