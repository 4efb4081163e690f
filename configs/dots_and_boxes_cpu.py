"""AlphaZero on Dots and Boxes (3 x 3 boxes) for 2 CPU cores, within minutes.

  python -m agz_jax.launch --config configs/dots_and_boxes_cpu.py --workdir workdir/dots_3x3
  python -m agz_jax.tournament --player boxes=workdir/dots_3x3 --opponent random \\
      --opponent greedy --games 100 --simulations 64 --out matches/dots_3x3

The same AlphaZero core as Go: only the game section and the network's
encoding differ. `--config.game.rows=5 --config.game.cols=5` plays 5 x 5
(raise replay.rows_per_game to at least 60 + selfplay.steps_per_iteration).
"""

import ml_collections

from configs import default


def get_config():
  c = default.get_config()
  c.iterations = 300
  c.game = ml_collections.ConfigDict({"name": "dots_and_boxes", "rows": 3, "cols": 3})
  c.model.encoding = "boxes"
  c.model.blocks = 3
  c.model.channels = 32
  c.model.value_hidden = 64
  c.model.ownership_head = True  # who ends up with each box
  c.model.score_head = True  # the final box margin
  c.search.num_simulations = 32
  c.search.max_num_considered_actions = 16
  c.selfplay.num_games = 128
  c.selfplay.steps_per_iteration = 8
  c.selfplay.temperature_moves = 6
  c.selfplay.resign_threshold = -1.0  # games of 24 lines: never resign
  c.replay.rows_per_game = 48  # >= 24 lines + 8 steps
  c.replay.min_ready = 1024
  c.train.batch_size = 128
  c.train.updates_per_iteration = 8
  c.train.optimizer = "adam"
  c.train.learning_rate = 1e-3
  c.checkpoint.every = 50
  c.eval.every = 50
  c.eval.num_games = 32
  c.eval.num_simulations = 16
  c.log.sgf_slots = 0  # no record format for this game
  c.mesh.cpu_devices = 2  # one per core
  return c
