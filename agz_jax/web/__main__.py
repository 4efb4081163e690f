from agz_jax.web import main

main()
