"""AlphaGo's tree policy p_tau: the rollout policy's features and self-atari, the distance to the
last two moves and 12-point-diamond patterns around the move (141,989 features in the paper).

  python -m agz_jax.launch --config configs/tree_policy.py --workdir workdir/tree_policy

(After importing the human games as configs/rollout_policy.py says.) p_tau is the prior of
the search variants without the SL network.
"""

from configs import rollout_policy


def get_config():
  c = rollout_policy.get_config()
  c.model = rollout_policy.fast_policy_model("tree", num_3x3=69_338, num_response=32_207,
                                             num_diamond=32_207)
  return c
