"""AlphaGo Zero's dual network (policy and value heads) learned from human games, 19x19.

First import the human games (once; KGS 6d+ and Tom 9-dan, about 86,000 games):
  python -m agz_jax.data.import_sgf ../shared/data/kgs ../shared/data/tom --out data/human
then
  python -m agz_jax.launch --config configs/sl_dual_19x19.py --workdir workdir/sl_dual_19x19

Held out, never trained on: KGS's games from 2017-05 and Tom's from 2011-08 on
(`data.val_from`). The policy's top-1 is measured on KGS 2017-05 positions, the
value's MSE on the held-out even games of both. These sizes suit 2 CPU cores;
on an accelerator, `python -m agz_jax.timed_training` trains a larger one for a fixed time.
"""

import ml_collections

from configs import default


def get_config() -> ml_collections.ConfigDict:
  c = default.get_config()
  c.task = "sl_dual"
  c.steps = 40_000
  c.log_every = 100

  c.game.size = 19
  c.game.komi = 7.5
  c.game.max_moves = 722  # covers the longest imported game (2 * 19 * 19)

  c.model.kind = "resnet"
  c.model.encoding = "agz17"
  c.model.blocks = 6
  c.model.channels = 64
  c.model.value_hidden = 256
  c.model.dtype = "float32"

  c.data = ml_collections.ConfigDict()
  c.data.dir = "data/human"  # output of python -m agz_jax.data.import_sgf
  # Held-out games: KGS from 2017-05-01 (835 games), Tom (sources "tom-...") from 2011-08-01 (the
  # last five months: 524 games; its months thin out at the end).
  c.data.val_from = "2017-05-01,tom-=2011-08-01"
  c.data.max_games = 0  # 0: every training game
  c.data.games_per_batch = 64  # games replayed per step
  c.data.positions_per_game = 1  # one position per game: the value head cannot learn whole games
  c.data.value_komi = (5.5, 7.5)  # even games with a komi in this range train the value

  c.train.optimizer = "sgd"
  c.train.learning_rate = 0.05
  c.train.momentum = 0.9
  c.train.lr_halving_steps = 10_000
  c.train.weight_decay = 1e-4
  c.train.clip_norm = 1.0
  c.train.value_weight = 0.25  # AlphaGo Zero's supervised run: 0.01

  c.eval = ml_collections.ConfigDict()
  c.eval.every = 1000
  c.eval.policy_source = "KGS"  # top-1 on these held-out games (sources starting so)
  c.eval.num_positions = 2048  # fixed policy positions
  c.eval.num_value_positions = 2048  # fixed value positions, held out and from training games
  c.eval.chunk = 256  # positions evaluated at once
  c.eval.seed = 12345

  # How the trained network searches when it plays (this task never searches): AlphaGo Zero's
  # PUCT, which grows one compiled tree under a clock and keeps the subtree of the position
  # reached, rather than Gumbel search, which compiles a program per simulation count.
  c.search.algorithm = "puct"

  c.checkpoint.every = 1000
  c.checkpoint.keep = 3

  c.mesh.cpu_devices = 2  # one device per core: each samples and replays half the minibatch
  return c
