"""AlphaGo's value network on 2 CPU cores, from one position per self-play game.

First the data (SL policy to move U-1, a random move U, the RL policy to the end):
  python -m agz_jax.data.value_data --sl pretrained/alphago-19x19/sl_policy \\
      --rl workdir/rl_policy_cpu --games 20000 --out data/value_selfplay
then
  python -m agz_jax.launch --config configs/value_cpu.py --workdir workdir/value_cpu

The paper's over-fitting comparison trains the same network on every position
of the human games instead (their winner as the target):
  python -m agz_jax.launch --config configs/value_cpu.py --workdir workdir/value_human \\
      --config.value.source=human
or on a few positions per even human game, their planes computed once:
  python -m agz_jax.data.human_value --data data/human --out data/value_human1
  python -m agz_jax.launch --config configs/value_cpu.py --workdir workdir/value_human1 \\
      --config.value.source=human_cache --config.value.data_dir=data/value_human1
starting, with --config.value.init_from=pretrained/alphago-19x19/sl_policy, from the SL
policy's convolutions (the paper built its value network on them).
"""

import ml_collections


def get_config() -> ml_collections.ConfigDict:
  c = ml_collections.ConfigDict()
  c.task = "value"
  c.seed = 0
  c.steps = 20_000
  c.log_every = 100

  c.game = ml_collections.ConfigDict({"name": "go", "size": 19, "komi": 7.5, "history": 8,
                                      "max_moves": 722})
  c.model = ml_collections.ConfigDict({"kind": "value", "encoding": "alphago49", "layers": 6,
                                       "filters": 48, "hidden": 256, "relu_1x1": False,
                                       "dtype": "float32"})

  c.value = ml_collections.ConfigDict()
  c.value.source = "selfplay"  # "human_cache" (data.human_value), "human" (every human position)
  c.value.data_dir = "data/value_selfplay"  # python -m agz_jax.data.value_data --out
  c.value.test_fraction = 0.05  # of the self-play games, held out
  c.value.init_from = ""  # an SL policy whose convolutions the network starts from

  c.data = ml_collections.ConfigDict()  # the human games (value.source = "human")
  c.data.dir = "data/kgs"
  c.data.val_from = "2017-05-01"
  c.data.max_games = 0
  c.data.games_per_batch = 16
  c.data.positions_per_game = 2

  c.train = ml_collections.ConfigDict()
  c.train.batch_size = 32  # self-play positions per step (the paper: 32)
  c.train.optimizer = "sgd"
  c.train.learning_rate = 0.003  # as the SL policy (the paper)
  c.train.momentum = 0.9
  c.train.lr_halving_steps = 10_000
  c.train.weight_decay = 0.0
  c.train.clip_norm = 1.0

  c.eval = ml_collections.ConfigDict()
  c.eval.every = 1000
  c.eval.num_positions = 2048
  c.eval.seed = 12345

  c.checkpoint = ml_collections.ConfigDict()
  c.checkpoint.every = 1000
  c.checkpoint.keep = 3

  c.mesh = ml_collections.ConfigDict()
  c.mesh.num_devices = -1
  c.mesh.cpu_devices = 2
  return c
