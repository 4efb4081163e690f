#!/usr/bin/env bash
# Installs agz_jax with JAX for TPU into ~/agz_jax/.venv (run on each TPU host).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
. .venv/bin/activate
pip install --quiet --upgrade pip
pip install --quiet -e . 'jax[tpu]'
python -c "import jax; print(jax.process_index(), jax.device_count(), jax.devices()[0].platform)"
