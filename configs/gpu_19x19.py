"""19x19 on one GPU: a 15x192 network in bfloat16, 512 games in flight.

  python -m agz_jax.launch --config configs/gpu_19x19.py --workdir workdir/gpu_19x19
  (from a human-game start: --config.init_from=DIR, a checkpoint of
   configs/sl_dual_19x19.py with this config's model sizes)
"""

from configs import default


def get_config():
  c = default.get_config()
  c.iterations = 5000
  c.game.size = 19
  c.model.blocks = 15
  c.model.channels = 192
  c.model.dtype = "bfloat16"
  c.search.num_simulations = 64
  c.selfplay.num_games = 512
  c.selfplay.steps_per_iteration = 32
  c.selfplay.temperature_moves = 30  # AGZ: 30 moves
  c.selfplay.resign_min_moves = 60
  c.selfplay.min_pass_moves = 150
  c.replay.rows_per_game = 768  # ~393k positions, ~3 GB
  c.replay.min_ready = 32768
  c.train.batch_size = 512
  c.train.updates_per_iteration = 16
  c.train.learning_rate = 0.02
  c.train.lr_boundaries = (60_000, 75_000)
  c.checkpoint.every = 20
  c.eval.every = 50
  c.eval.num_games = 128
  c.eval.num_simulations = 64
  return c
