"""Tiny 9x9 run that learns visibly on 2 CPU cores in minutes (BENCHMARKS.md: the learning check).

  python -m agz_jax.launch --config configs/cpu_9x9.py --workdir workdir/cpu_9x9
"""

from configs import default


def get_config():
  c = default.get_config()
  c.iterations = 400
  c.model.blocks = 2
  c.model.channels = 32
  c.model.value_hidden = 64
  c.search.num_simulations = 16
  c.search.max_num_considered_actions = 8
  c.selfplay.num_games = 64
  c.selfplay.steps_per_iteration = 16
  c.replay.rows_per_game = 192
  c.replay.min_ready = 512
  c.train.batch_size = 128
  c.train.updates_per_iteration = 8
  c.train.optimizer = "adam"
  c.train.learning_rate = 1e-3
  c.checkpoint.every = 25
  c.eval.every = 50
  c.eval.num_games = 32
  c.eval.num_simulations = 8
  c.mesh.cpu_devices = 2  # one per core: XLA runs each convolution on a single core
  return c
