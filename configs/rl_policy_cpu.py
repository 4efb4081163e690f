"""AlphaGo's RL policy by policy gradient, from the shipped SL policy, on 2 CPU cores.

  python -m agz_jax.launch --config configs/rl_policy_cpu.py --workdir workdir/rl_policy_cpu

It starts from pretrained/alphago-19x19/sl_policy (6 x 48 on the 48 planes);
--config.rl.init_from=workdir/sl_policy_cpu starts from another SL run (its
model and game must match this config's). AlphaGo (Nature 2016): minibatches
of n = 128 games, the current policy joins the opponent pool every 500
iterations, SGD at 0.001, 10,000 minibatches.
"""

import ml_collections


def get_config() -> ml_collections.ConfigDict:
  c = ml_collections.ConfigDict()
  c.task = "rl_policy"
  c.seed = 0
  c.iterations = 100_000  # stop with --time_limit
  c.log_every = 1

  c.game = ml_collections.ConfigDict({"name": "go", "size": 19, "komi": 7.5, "history": 8,
                                      "max_moves": 722})
  c.model = ml_collections.ConfigDict({"kind": "policy", "encoding": "alphago48", "layers": 6,
                                       "filters": 48, "dtype": "float32"})

  c.rl = ml_collections.ConfigDict()
  c.rl.init_from = "pretrained/alphago-19x19/sl_policy"  # the SL policy checkpoint
  c.rl.games = 32  # n, games per iteration (over all devices), half with each colour
  c.rl.pool_every = 25  # K: the current policy joins the opponent pool every K iterations
  c.rl.pool_size = 16  # snapshots kept on device (the oldest is replaced)
  c.rl.max_moves = 500  # a game still going is scored here
  c.rl.chunk = 8  # plies per forward pass of the update

  c.train = ml_collections.ConfigDict()
  c.train.optimizer = "sgd"
  c.train.learning_rate = 0.001  # AlphaGo's alpha; a step moves the policy by a KL of ~0.025 here
  c.train.momentum = 0.0  # vanilla SGD, as the paper
  c.train.lr_boundaries = ()
  c.train.lr_decay = 0.1
  c.train.weight_decay = 0.0

  c.eval = ml_collections.ConfigDict()
  c.eval.every = 20  # iterations: a match against the SL policy
  c.eval.num_games = 64
  c.eval.seed = 2016

  c.checkpoint = ml_collections.ConfigDict()
  c.checkpoint.every = 25
  c.checkpoint.keep = 4

  c.mesh = ml_collections.ConfigDict()
  c.mesh.num_devices = -1
  c.mesh.cpu_devices = 2  # one per core
  return c
