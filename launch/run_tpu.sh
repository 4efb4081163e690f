#!/usr/bin/env bash
# Starts training on every host of a TPU pod slice, in the background, logging to ~/train.log.
# On a pod, jax.distributed finds the other hosts by itself.
#
#   launch/run_tpu.sh NAME ZONE WORKDIR [CONFIG=tpu_v4.py] [--config.key=value ...]
#   launch/run_tpu.sh agz-v4 us-central2-b gs://BUCKET/agz_19x19
#
# Preemption: the trainer checkpoints on SIGTERM and resumes from WORKDIR when
# started again with the same command.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 NAME ZONE WORKDIR [CONFIG] [--config.key=value ...]" >&2
  exit 2
fi
name=$1 zone=$2 workdir=$3 config=${4:-tpu_v4.py}
shift $(( $# >= 4 ? 4 : 3 ))
gcloud compute tpus tpu-vm ssh "$name" --zone "$zone" --worker=all --command "
  cd agz_jax && . .venv/bin/activate &&
  nohup python -m agz_jax.launch --config $config --workdir $workdir $* > ~/train.log 2>&1 &"
echo "started on all workers of $name; follow with:"
echo "  gcloud compute tpus tpu-vm ssh $name --zone $zone --worker=0 --command 'tail -f ~/train.log'"
