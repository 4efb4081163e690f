"""AlphaGo Zero on 9x9 with what helped in the KataGo ablation, for 2 CPU cores.

The run behind the shipped `pretrained/zero-9x9` network: at most 3 hours of
wall time on 2 cores, stopped by --time_limit, a checkpoint every 100
iterations (kept for the Elo curve in BENCHMARKS.md):

  python -m agz_jax.launch --config configs/zero_9x9_cpu.py \\
      --workdir workdir/zero_9x9 --time_limit 8400

From the ablation (BENCHMARKS.md, "KataGo's improvements on 9x9"): the
ownership and score targets and the opponent's-reply head are on; global
pooling and playout cap randomization, which cost Elo at this size, are off.
"""

from configs import cpu_9x9


def get_config():
  c = cpu_9x9.get_config()  # Gumbel search at 16 simulations, Adam
  c.iterations = 100_000  # the run stops at --time_limit
  c.mesh.cpu_devices = 2  # one device per core
  c.model.blocks = 4
  c.model.channels = 48
  c.model.value_hidden = 64
  c.model.ownership_head = True
  c.model.score_head = True
  c.model.opponent_policy_head = True
  c.selfplay.num_games = 128  # 64 per device, as each ablation arm had
  c.selfplay.resign_min_moves = 30
  c.replay.rows_per_game = 192
  c.replay.min_ready = 2048
  c.train.batch_size = 256  # each position is trained on about once
  c.train.updates_per_iteration = 8
  c.train.learning_rate = 1e-3
  c.train.lr_boundaries = (12_000,)  # about 70% into a 140-minute run
  c.train.lr_decay = 0.3
  c.checkpoint.every = 100
  c.checkpoint.keep = 60
  c.eval.every = 100
  return c
