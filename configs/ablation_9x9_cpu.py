"""KataGo's improvements on 9x9, all switched on: the base of the ablation in BENCHMARKS.md.

Each arm runs for the same wall time on one pinned core; an arm switches one
improvement off with an override, the baseline switches all of them off:

  taskset -c 0 python -m agz_jax.launch --config configs/ablation_9x9_cpu.py \\
      --workdir workdir/ablation/all --time_limit 1800
  taskset -c 1 python -m agz_jax.launch --config configs/ablation_9x9_cpu.py \\
      --workdir workdir/ablation/no_pooling --time_limit 1800 --config.model.global_pooling=False

The search is Gumbel's, as in every CPU config: forced playouts are for the
PUCT search only; their pair (bench/katago_ablation.sh puct_forced | puct) sets
--config.search.algorithm=puct, with and without --config.search.forced_playouts=True.
"""

from configs import cpu_9x9


def get_config():
  c = cpu_9x9.get_config()  # its search, games, buffer and optimizer; a larger network
  c.iterations = 100_000  # the arms stop at --time_limit
  c.mesh.cpu_devices = 1  # one pinned core per arm
  c.model.blocks = 3
  c.model.channels = 48
  c.model.global_pooling = True
  c.model.ownership_head = True
  c.model.score_head = True
  c.model.opponent_policy_head = True
  c.selfplay.playout_cap_randomization = True
  c.selfplay.full_search_prob = 0.25
  c.selfplay.cheap_simulations = 4
  c.replay.min_ready = 1024
  c.checkpoint.keep = 2
  return c
