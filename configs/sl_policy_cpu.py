"""A small SL policy network that learns human moves on 2 CPU cores within the hour.

First import the human games (once):
  python -m agz_jax.data.import_sgf PATH/TO/KGS-ARCHIVES --out data/kgs
then
  python -m agz_jax.launch --config configs/sl_policy_cpu.py --workdir workdir/sl_policy_cpu

The full-size network (configs/sl_policy_19x19.py) is about 30 times the work
per position; this one keeps AlphaGo's shape (a 5x5 layer, 3x3 layers, a 1x1
output with per-point biases) with fewer, narrower layers.
"""

from configs import sl_policy_19x19


def get_config():
  c = sl_policy_19x19.get_config()
  c.steps = 7000
  c.log_every = 100
  c.model.layers = 6
  c.model.filters = 48
  c.model.dtype = "float32"
  c.data.games_per_batch = 16
  c.data.positions_per_game = 8
  c.train.optimizer = "sgd"
  c.train.learning_rate = 0.05  # plain SGD at 0.003 barely moves in a run this short
  c.train.lr_halving_steps = 2500
  c.train.clip_norm = 1.0  # at this step size (momentum 0.9) some seeds blow up unclipped
  c.eval.every = 500
  c.eval.num_positions = 2048
  c.checkpoint.every = 500
  c.mesh.cpu_devices = 2  # one device per core: each samples and replays half the minibatch
  return c
