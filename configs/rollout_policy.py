"""AlphaGo's fast rollout policy p_pi: a linear softmax over local patterns, from human games.

First import the human games (once):
  python -m agz_jax.data.import_sgf PATH/TO/KGS-ARCHIVES --out data/kgs
then
  python -m agz_jax.launch --config configs/rollout_policy.py --workdir workdir/rollout_policy

A fresh run harvests the pattern dictionaries from data.harvest_games training
games, then learns the weights. AlphaGo (Silver et al. 2016): 24.2% top-1 after
8 million Tygem positions, 109,747 features (69,338 3x3 and 32,207 response
patterns). configs/tree_policy.py adds the tree policy's features.
"""

import ml_collections

from configs import sl_policy_19x19


def fast_policy_model(features: str, num_3x3: int, num_response: int, num_diamond: int):
  """The model section of a fast policy; num_features follows the dictionary sizes."""
  from agz_jax.training import rollout_policy  # pylint: disable=import-outside-toplevel
  m = ml_collections.ConfigDict()
  m.kind = "fast_policy"
  m.features = features  # "rollout" (p_pi) or "tree" (p_tau)
  m.dtype = "float32"
  m.num_3x3 = num_3x3  # dictionary capacities: the most frequent patterns kept
  m.num_response = num_response
  m.num_diamond = num_diamond  # the tree policy's 12-point diamonds around the move
  constant = rollout_policy.feature_count(ml_collections.ConfigDict(
      {"features": features, "num_3x3": 0, "num_response": 0, "num_diamond": 0}))
  # Kept equal to the groups' total when a dictionary size is overridden on the command line.
  m.num_features = m.get_ref("num_3x3") + m.get_ref("num_response") + m.get_ref("num_diamond") + constant
  return m


def get_config() -> ml_collections.ConfigDict:
  c = sl_policy_19x19.get_config()
  c.task = "rollout_policy"
  c.steps = 20_000
  c.log_every = 200
  c.model = fast_policy_model("rollout", num_3x3=69_338, num_response=32_207, num_diamond=0)

  c.data.games_per_batch = 16
  c.data.positions_per_game = 32
  c.data.harvest_games = 4000  # training games whose patterns are counted
  c.data.harvest_chunk = 16  # games replayed at once while harvesting
  c.data.min_count = 2  # a pattern seen fewer times is left out

  c.train.optimizer = "adam"
  c.train.learning_rate = 0.01
  c.train.lr_halving_steps = 5000
  c.train.weight_decay = 0.0

  c.eval.every = 1000
  c.eval.num_positions = 8192
  c.checkpoint.every = 1000
  c.mesh.cpu_devices = 2  # one device per core: each samples and replays half the minibatch
  return c
