"""19x19 on a Cloud TPU v4 pod slice: the AlphaGo Zero 20-block, 256-filter network.

Pod-scale batches: 4096 games in flight and minibatches of 4096 over every chip
of every host (both must be multiples of the number of chips). AGZ's step
schedule: learning rate 0.01, divided by 10 after 400k and 600k updates.

  python -m agz_jax.launch --config tpu_v4.py --workdir gs://BUCKET/agz_19x19
  (from a human-game start: --config.init_from=DIR, a checkpoint of
   configs/sl_dual_19x19.py with this config's model sizes)
  (run on every host of the slice, e.g. with launch/run_tpu.sh)
"""

from configs import default


def get_config():
  c = default.get_config()
  c.iterations = 100_000
  c.game.size = 19
  c.model.blocks = 20
  c.model.channels = 256
  c.model.dtype = "bfloat16"
  c.search.num_simulations = 128
  c.search.max_num_considered_actions = 16
  c.selfplay.num_games = 4096
  c.selfplay.steps_per_iteration = 32
  c.selfplay.temperature_moves = 30
  c.selfplay.resign_min_moves = 60
  c.selfplay.min_pass_moves = 150
  c.replay.rows_per_game = 768  # ~3.1M positions, ~24 GB over the slice
  c.replay.min_ready = 262_144
  c.train.batch_size = 4096
  c.train.updates_per_iteration = 32
  c.train.learning_rate = 0.01
  c.train.lr_boundaries = (400_000, 600_000)
  c.checkpoint.every = 20
  c.eval.every = 100
  c.eval.num_games = 512
  c.eval.num_simulations = 128
  return c
