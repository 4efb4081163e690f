#!/usr/bin/env bash
# Installs agz_jax with JAX for TPU into ~/agz_jax/.venv (run on each TPU host).
#
#   launch/install_tpu.sh [--dry-run]
#
# --dry-run prints the commands, one per line, and runs none of them.
set -euo pipefail
# shellcheck source=SCRIPTDIR/dry_run.sh
. "$(dirname "$0")/dry_run.sh"
parse_dry_run "$@"
if [ ${#args[@]} -gt 0 ]; then
  echo "usage: $0 [--dry-run]" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
run python3 -m venv .venv
run .venv/bin/python -m pip install --quiet --upgrade pip
run .venv/bin/python -m pip install --quiet -e '.[gcs]' 'jax[tpu]'   # gcs: a gs:// workdir
run .venv/bin/python -c \
  "import jax; print(jax.process_index(), jax.device_count(), jax.devices()[0].platform)"
