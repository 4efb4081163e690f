"""Base config of AlphaGo Zero training; the hardware configs import and override it.

  python -m agz_jax.launch --config configs/default.py --workdir /tmp/agz
"""

import ml_collections
from ml_collections import config_dict


def get_config() -> ml_collections.ConfigDict:
  c = ml_collections.ConfigDict()
  c.task = "selfplay"  # AlphaGo Zero self-play training (configs/sl_policy_*.py: "sl_policy")
  c.seed = 0
  c.iterations = 100  # each: T self-play steps on B games, then K updates
  # A checkpoint whose network starts a fresh run (a dual network learned from human games,
  # configs/sl_dual_19x19.py, as a user without weeks of a pod would start); "" starts from
  # random weights. Its model must be this config's (blocks, channels, encoding, switches).
  c.init_from = ""

  c.game = ml_collections.ConfigDict()  # the rules only
  c.game.name = "go"
  c.game.size = 9
  c.game.komi = 7.5
  c.game.history = 8  # positions a state keeps for the encodings (AGZ: 8 -> 17 planes)
  c.game.max_moves = config_dict.placeholder(int)  # None: 2 * size * size

  c.model = ml_collections.ConfigDict()
  c.model.kind = "resnet"  # AlphaGo Zero's dual-head residual network
  c.model.encoding = "agz17"  # its input planes: "agz17", "alphago48" or "alphago49"
  c.model.blocks = 6  # AGZ: 20 or 40
  c.model.channels = 64  # AGZ: 256
  c.model.value_hidden = 256
  c.model.dtype = "float32"  # or "bfloat16" (compute; parameters stay float32)
  # KataGo's additions (Wu 2019, "Accelerating Self-Play Learning in Go"), each a switch:
  c.model.global_pooling = False  # channel mean and max -> dense -> biases, in blocks and heads
  c.model.ownership_head = False  # final owner of each point (weight train.ownership_weight)
  c.model.score_head = False  # final score margin (weight train.score_weight)
  c.model.opponent_policy_head = False  # the opponent's reply (train.opponent_policy_weight)

  c.search = ml_collections.ConfigDict()
  c.search.algorithm = "gumbel"  # or "puct" (AGZ, with Dirichlet noise at the root), "alphago"
  c.search.num_simulations = 32
  c.search.max_num_considered_actions = 16  # gumbel
  c.search.gumbel_scale = 1.0  # gumbel
  c.search.dirichlet_alpha = config_dict.placeholder(float)  # puct; None: 0.03 * 361 / P
  c.search.dirichlet_fraction = 0.25  # puct
  c.search.pb_c_init = 1.25  # puct
  c.search.pb_c_base = 19652.0  # puct
  c.search.c_puct = 5.0  # alphago (the 2016 search; its players build their own settings)
  c.search.q_transform = "siblings"  # puct: Q stretched between siblings, or "bounded" ([-1, 1])
  c.search.first_play = "loss"  # puct: an unvisited child's value: "loss", "parent", "reduction"
  c.search.fpu_reduction = 0.2  # puct, first_play "reduction": parent - this * sqrt(visited prior)
  c.search.prior_temperature = 1.0  # puct: the prior is softmax(logits / this) at every node
  # puct: the value at move m times value_scale[m // value_scale_moves] (the last entry after
  # its range); () unscaled. bench/value_accuracy.py fits it on held-out games.
  c.search.value_scale = ()
  c.search.value_scale_moves = 50
  c.search.forced_playouts = False  # puct: KataGo's forced playouts + policy target pruning
  c.search.forced_playouts_k = 2.0  # puct: a child gets sqrt(k * prior * visits) visits

  c.selfplay = ml_collections.ConfigDict()
  c.selfplay.num_games = 256  # B, games in progress at once (over all devices)
  c.selfplay.steps_per_iteration = 16  # T, searched moves per game per iteration
  c.selfplay.temperature_moves = 10  # sample from the search policy for this many moves
  c.selfplay.resign_threshold = -0.9  # resign below this searched value; -1 never resigns
  c.selfplay.resign_min_moves = 20
  c.selfplay.no_resign_fraction = 0.1  # AGZ: 10% of games never resign
  # Before this many moves pass is searched only when nothing else is legal:
  # from scratch, komi otherwise teaches both sides to pass at once.
  c.selfplay.min_pass_moves = 40
  # KataGo's playout cap randomization: a step searches in full with probability
  # full_search_prob (its positions train the policy), otherwise with
  # cheap_simulations and no root noise (they train only the value).
  c.selfplay.playout_cap_randomization = False
  c.selfplay.full_search_prob = 0.25
  c.selfplay.cheap_simulations = 8

  c.replay = ml_collections.ConfigDict()
  c.replay.rows_per_game = 192  # R >= max_moves + T: B * R recent positions
  c.replay.min_ready = 2048  # no updates before this many positions have results

  c.train = ml_collections.ConfigDict()
  c.train.batch_size = 256  # M
  c.train.updates_per_iteration = 8  # K
  c.train.optimizer = "sgd"  # or "adam"
  c.train.learning_rate = 0.02
  c.train.momentum = 0.9  # sgd
  c.train.lr_boundaries = (100_000, 200_000)  # in updates; AGZ: 0.01 -> 0.001 -> 0.0001
  c.train.lr_decay = 0.1
  c.train.weight_decay = 1e-4  # c in the loss
  c.train.ownership_weight = 1.5  # KataGo: 1.5 per board (the points' mean cross-entropy)
  c.train.score_weight = 0.5  # squared error of margin / sqrt(points)
  c.train.opponent_policy_weight = 0.15  # KataGo: 0.15

  c.checkpoint = ml_collections.ConfigDict()
  c.checkpoint.every = 10  # iterations (also on SIGTERM and at the end)
  c.checkpoint.keep = 3

  c.eval = ml_collections.ConfigDict()
  c.eval.every = 10  # iterations; 0 never
  c.eval.num_games = 64  # half with each colour
  c.eval.num_simulations = 16
  c.eval.temperature_moves = 4
  c.eval.dirichlet_fraction = 0.0  # puct: no root noise in evaluation games
  c.eval.gating = False  # AGZ: self-play by the best network, replaced above the threshold
  c.eval.gating_threshold = 0.55

  c.log = ml_collections.ConfigDict()
  c.log.sgf_slots = 4  # game slots whose self-play games are kept as SGF (0: none)
  c.log.sgf_every = 5  # write every k-th finished game of those slots

  c.mesh = ml_collections.ConfigDict()
  c.mesh.num_devices = -1  # -1: every device of every host
  # Without an accelerator: JAX CPU devices to split the host into. XLA runs a
  # convolution on one core, so one device per core puts every core to work.
  c.mesh.cpu_devices = 1
  return c
