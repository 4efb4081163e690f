"""The search's settings: one frozen, hashable value built once from the config."""

import dataclasses

from agz_jax.search.action_selection import FIRST_PLAY, QTransform

ALGORITHMS = ("gumbel", "puct", "alphago")
# The settings each algorithm reads, beside algorithm, num_simulations and min_pass_moves.
ALGORITHM_SETTINGS = {
    "gumbel": ("max_num_considered_actions", "gumbel_scale"),
    "puct": ("dirichlet_alpha", "dirichlet_fraction", "pb_c_init", "pb_c_base",
             "forced_playouts", "forced_playouts_k", "q_transform", "first_play",
             "fpu_reduction", "prior_temperature", "value_scale", "value_scale_moves"),
    "alphago": ("c_puct",),
}
Q_TRANSFORMS = ("siblings", "bounded")


@dataclasses.dataclass(frozen=True, kw_only=True)
class SearchConfig:
  """How to search; a static jit argument. Built from a config's `search` section
  (`from_config`), whose defaults (configs/default.py) are this class's.

  Each algorithm reads its own settings (ALGORITHM_SETTINGS), as mctx gives each policy its
  own arguments; a caller gives those of its algorithm and leaves the others at their
  defaults (the AlphaGo player: `SearchConfig(algorithm="alphago", num_simulations=n,
  c_puct=5.0)`).

  Attributes:
    algorithm: 'gumbel' (Gumbel MuZero's sequential halving, mctx), 'puct'
      (AlphaGo Zero's PUCT with Dirichlet noise at the root) or 'alphago'
      (AlphaGo's 2016 PUCT: raw Q, a constant c_puct, no noise).
    num_simulations: simulations per search.
    max_num_considered_actions: Gumbel: actions kept by sequential halving.
    gumbel_scale: Gumbel: scale of the root noise.
    dirichlet_alpha: PUCT: root noise concentration; None: the game's
      (game.dirichlet_alpha, AlphaZero's rule).
    dirichlet_fraction: PUCT: weight of the noise in the root prior (0: none).
    pb_c_init: PUCT exploration constant.
    pb_c_base: PUCT exploration base.
    c_puct: AlphaGo's exploration constant (5 in the paper).
    forced_playouts: PUCT: KataGo's forced playouts at the root (each visited
      child with prior P gets at least sqrt(forced_playouts_k * P * visits)
      visits)
      and policy target pruning (the visits forced beyond what PUCT would
      have given are taken out of the policy target). Gumbel needs neither:
      its policy target comes from completed Q values, not from visits.
    forced_playouts_k: the k above (KataGo: 2).
    q_transform: PUCT: how a child's Q enters its score. 'siblings' (MuZero's, mctx's
      default): stretched to [0, 1] between the lowest and highest Q of the node and its
      visited children, so that the smallest difference the value makes weighs as much
      as a won game against a lost one. 'bounded': the values' own range, [-1, 1] mapped
      to [0, 1], unstretched (AlphaZero's, Leela Zero's): the prior weighs more where the
      value is unsure. Unvisited children count as `first_play` says under both.
    first_play: PUCT: the value an unvisited child counts with (first-play urgency):
      'loss' (mctx's, the default), 'parent' (its parent's mean value) or 'reduction'
      (the parent's value less fpu_reduction * sqrt(the visited children's prior mass)).
    fpu_reduction: PUCT with first_play 'reduction': the reduction's scale.
    prior_temperature: PUCT: the prior is softmax(logits / T) at every node of the
      tree (the evaluator's logits divided before the illegal moves are masked). Above 1 it
      flattens the network's policy, so that the search looks wider (AlphaGo's beta 0.67 on its
      SL prior is T = 1.5); below 1 it sharpens it. 1: the network's own.
    value_scale: PUCT: the evaluator's value of a position m moves into its game is multiplied
      by value_scale[min(m // value_scale_moves, len(value_scale) - 1)], at the root and every
      leaf; a finished game inside the tree keeps its exact result. A calibration of a value
      head that says more than it knows in some phases of the game (held-out games fit it:
      bench/value_accuracy.py): where its scale is small, values differ little and the prior
      leads the search, under the 'bounded' Q transform (the 'siblings' one stretches a node's
      Q values between their own extremes, which undoes a common scale). With rollouts at the
      leaves it scales the leaf's mixed value. (): unscaled.
    value_scale_moves: PUCT: the moves each entry of value_scale covers.
    min_pass_moves: before this many moves of a game, a pass is allowed (at the
      root and inside the tree) only when no other move is legal. Self-play
      uses it against a collapse seen from scratch: with komi, a side that
      passes early and is answered by a pass wins, so both learn to pass and
      stop learning the game. 0 (players, matches) keeps the rules as they are.
  """

  algorithm: str
  num_simulations: int
  min_pass_moves: int = 0
  # gumbel
  max_num_considered_actions: int = 16
  gumbel_scale: float = 1.0
  # puct
  dirichlet_alpha: float | None = None
  dirichlet_fraction: float = 0.25
  pb_c_init: float = 1.25
  pb_c_base: float = 19652.0
  forced_playouts: bool = False
  forced_playouts_k: float = 2.0
  q_transform: str = "siblings"
  first_play: str = "loss"
  fpu_reduction: float = 0.2
  prior_temperature: float = 1.0
  value_scale: tuple[float, ...] = ()
  value_scale_moves: int = 50
  # alphago
  c_puct: float = 5.0

  def __post_init__(self):
    if self.algorithm not in ALGORITHMS:
      raise ValueError(f"search.algorithm must be one of {', '.join(ALGORITHMS)}, "
                       f"got {self.algorithm!r}")
    if not isinstance(self.num_simulations, int) or self.num_simulations < 1:
      raise ValueError(f"search.num_simulations must be a positive integer, "
                       f"got {self.num_simulations!r}")
    if self.q_transform not in Q_TRANSFORMS:
      raise ValueError(f"search.q_transform must be one of {', '.join(Q_TRANSFORMS)}, "
                       f"got {self.q_transform!r}")
    if self.first_play not in FIRST_PLAY:
      raise ValueError(f"search.first_play must be one of {', '.join(FIRST_PLAY)}, "
                       f"got {self.first_play!r}")
    if not self.fpu_reduction >= 0:
      raise ValueError(f"search.fpu_reduction must be at least 0, got {self.fpu_reduction!r}")
    if not self.prior_temperature > 0:
      raise ValueError(f"search.prior_temperature must be above 0, got "
                       f"{self.prior_temperature!r}")
    if self.prior_temperature != 1.0 and self.algorithm != "puct":
      raise ValueError(f"search.prior_temperature is a setting of the PUCT search, not "
                       f"{self.algorithm!r}" + (": AlphaGo's flattens its prior with its own "
                       "beta (an AlphaGo bundle's key)" if self.algorithm == "alphago" else ""))
    try:
      if isinstance(self.value_scale, (str, bytes)):
        raise TypeError
      scale = tuple(float(a) for a in self.value_scale)
    except (TypeError, ValueError):
      raise ValueError(f"search.value_scale must be a tuple of numbers (one per "
                       f"search.value_scale_moves moves), got {self.value_scale!r}") from None
    object.__setattr__(self, "value_scale", scale)  # a config's list, hashable
    if not all(0.0 <= a <= 1.0 for a in scale):  # NaN fails too
      raise ValueError(f"search.value_scale's entries must be from 0 to 1, got {scale!r}")
    if not isinstance(self.value_scale_moves, int) or self.value_scale_moves < 1:
      raise ValueError(f"search.value_scale_moves must be a positive integer, got "
                       f"{self.value_scale_moves!r}")
    if scale and self.algorithm != "puct":
      raise ValueError(f"search.value_scale is a setting of the PUCT search, not "
                       f"{self.algorithm!r}: leave it empty")
    if self.forced_playouts and self.algorithm != "puct":
      raise ValueError(f"search.forced_playouts is for the PUCT search (algorithm 'puct'), not "
                       f"{self.algorithm!r}: Gumbel's policy target comes from completed Q "
                       f"values, not visits; turn it off")

  @classmethod
  def from_config(cls, search_config, **overrides) -> "SearchConfig":
    """From a config's `search` section; `overrides` replace fields (e.g. the
    evaluation match's num_simulations, self-play's min_pass_moves)."""
    # Fields with a default may be absent (the configs of checkpoints saved before them).
    fields = {f.name: search_config[f.name] for f in dataclasses.fields(cls)
              if f.name != "min_pass_moves"
              and (f.name in search_config or f.default is dataclasses.MISSING)}
    fields.update(overrides)
    return cls(**fields)

  def value_scale_at(self, move_number: int) -> float:
    """The scale value_scale puts on the value of a position `move_number` moves into its game
    (1 where value_scale is empty)."""
    if not self.value_scale:
      return 1.0
    return self.value_scale[min(int(move_number) // self.value_scale_moves,
                                len(self.value_scale) - 1)]

  def root_noise_alpha(self, game) -> float:
    """PUCT: the Dirichlet concentration of the root's noise: dirichlet_alpha, or where it is
    None the game's own (game.dirichlet_alpha: AlphaZero's rule, scaled by the board)."""
    return game.dirichlet_alpha if self.dirichlet_alpha is None else self.dirichlet_alpha

  @property
  def qtransform(self) -> QTransform:
    """PUCT: the Q transform with its first-play urgency."""
    return QTransform(self.q_transform, self.first_play, self.fpu_reduction)

  def replace(self, **changes) -> "SearchConfig":
    return dataclasses.replace(self, **changes)
