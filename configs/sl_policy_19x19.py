"""AlphaGo's SL policy network at full size: 13 layers of 192 filters on the 48 planes.

First import the human games (once):
  python -m agz_jax.data.import_sgf PATH/TO/KGS-ARCHIVES --out data/kgs
then
  python -m agz_jax.launch --config configs/sl_policy_19x19.py --workdir workdir/sl_policy_19x19

Trains on every game dated before data.val_from and validates on the rest (the
KGS 6d+ archives: 2017-05 is validation). AlphaGo: SGD, step size 0.003 halved
every 80 million steps, minibatches of 16 on each of 50 GPUs, 57% top-1 after
weeks; here one device takes minibatches of games_per_batch * positions_per_game.
"""

import ml_collections


def get_config() -> ml_collections.ConfigDict:
  c = ml_collections.ConfigDict()
  c.task = "sl_policy"
  c.seed = 0
  c.steps = 200_000
  c.log_every = 100  # steps between progress lines

  c.game = ml_collections.ConfigDict()  # the rules only
  c.game.name = "go"
  c.game.size = 19
  c.game.komi = 7.5  # not used by the policy; kept for the game rules
  c.game.history = 8
  c.game.max_moves = 722  # covers the longest imported game (2 * 19 * 19)

  c.model = ml_collections.ConfigDict()
  c.model.kind = "policy"  # AlphaGo's policy CNN
  c.model.encoding = "alphago48"  # or "agz17" to compare input planes
  c.model.layers = 13  # the 5x5 layer, 11 3x3 layers and the 1x1 output layer
  c.model.filters = 192
  c.model.dtype = "bfloat16"  # compute dtype; parameters stay float32

  c.data = ml_collections.ConfigDict()
  c.data.dir = "data/kgs"  # output of python -m agz_jax.data.import_sgf
  c.data.val_from = "2017-05-01"  # games from this date on are validation only
  c.data.max_games = 0  # 0: every training game
  c.data.games_per_batch = 64  # games replayed per step
  c.data.positions_per_game = 4  # positions taken from each replayed game

  c.train = ml_collections.ConfigDict()
  c.train.optimizer = "sgd"  # or "adam"
  c.train.learning_rate = 0.003  # AlphaGo's step size
  c.train.momentum = 0.9
  c.train.lr_halving_steps = 80_000_000  # AlphaGo: halved every 80M steps (of 16 positions)
  c.train.weight_decay = 0.0
  c.train.clip_norm = 0.0  # > 0: the gradient's global norm is capped there

  c.eval = ml_collections.ConfigDict()
  c.eval.every = 1000  # steps
  c.eval.num_positions = 8192  # fixed validation positions
  c.eval.seed = 12345

  c.checkpoint = ml_collections.ConfigDict()
  c.checkpoint.every = 1000
  c.checkpoint.keep = 3

  c.mesh = ml_collections.ConfigDict()
  c.mesh.num_devices = -1
  c.mesh.cpu_devices = 1  # see configs/default.py
  return c
