"""python -m agz_jax.gtp: see agz_jax.gtp."""

from agz_jax.gtp.cli import main

main()
