"""9x9 on one GPU: a 10x128 network in bfloat16, 1024 games in flight.

  python -m agz_jax.launch --config configs/gpu_9x9.py --workdir workdir/gpu_9x9
"""

from configs import default


def get_config():
  c = default.get_config()
  c.iterations = 2000
  c.model.blocks = 10
  c.model.channels = 128
  c.model.dtype = "bfloat16"
  c.search.num_simulations = 64
  c.selfplay.num_games = 1024
  c.selfplay.steps_per_iteration = 32
  c.replay.rows_per_game = 224  # ~229k positions
  c.replay.min_ready = 16384
  c.train.batch_size = 1024
  c.train.updates_per_iteration = 24
  c.train.learning_rate = 0.02
  c.train.lr_boundaries = (30_000, 45_000)
  c.checkpoint.every = 25
  c.eval.every = 25
  c.eval.num_games = 256
  c.eval.num_simulations = 64
  return c
