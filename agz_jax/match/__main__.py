"""python -m agz_jax.match: see agz_jax.match."""

from agz_jax.match.cli import main

main()
