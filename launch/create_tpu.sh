#!/usr/bin/env bash
# Creates a Cloud TPU VM (or pod slice) and installs agz_jax on every host.
#
#   launch/create_tpu.sh [--dry-run] NAME ZONE [ACCELERATOR] [REPO_URL]
#   launch/create_tpu.sh agz-v4 us-central2-b v4-32 https://github.com/OWNER/agz_jax.git
#
# Needs the gcloud CLI, a project with TPU quota, and a repository URL the
# TPU hosts can clone (or copy the checkout with `gcloud ... scp` instead).
# --dry-run prints the gcloud commands, one per line, and runs none of them.
set -euo pipefail
# shellcheck source=SCRIPTDIR/dry_run.sh
. "$(dirname "$0")/dry_run.sh"
parse_dry_run "$@"
set -- ${args[@]+"${args[@]}"}
if [ $# -lt 2 ]; then
  echo "usage: $0 [--dry-run] NAME ZONE [ACCELERATOR=v4-8] [REPO_URL]" >&2
  exit 2
fi
name=$1 zone=$2 accelerator=${3:-v4-8} repo=${4:-}
version=${TPU_SOFTWARE_VERSION:-tpu-ubuntu2204-base}

run gcloud compute tpus tpu-vm create "$name" --zone "$zone" \
  --accelerator-type "$accelerator" --version "$version"

if [ -z "$repo" ]; then
  echo "created $name; copy the checkout to every worker, then run launch/install_tpu.sh there" >&2
  exit 0
fi
quoted_repo=$(printf %q "$repo")
run gcloud compute tpus tpu-vm ssh "$name" --zone "$zone" --worker=all --command \
  "set -e; git clone $quoted_repo agz_jax || (cd agz_jax && git pull); bash agz_jax/launch/install_tpu.sh"
