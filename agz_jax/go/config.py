"""Static configuration of a Go game."""

import dataclasses
import math


@dataclasses.dataclass(frozen=True)
class GoConfig:
  """Rules and sizes of one Go game; hashable, so it can be a static jit argument.

  Attributes:
    size: board side N, from 2 to 19.
    komi: points given to white; an integer komi makes draws possible.
    history: number of board positions (current one included) a state keeps,
      for the input encodings that look back (AlphaGo Zero's stone history,
      AlphaGo's turns-since planes); 8 covers every encoding.
    max_moves: the game ends (and is scored) after this many moves, passes
      included. None means 2 * size * size.

  Which input planes a network sees is the network's choice, not the rules':
  see `go.features` and its `encoding` argument.
  """

  size: int = 19
  komi: float = 7.5
  history: int = 8
  max_moves: int | None = None

  def __post_init__(self):
    if not isinstance(self.size, int) or not 2 <= self.size <= 19:
      raise ValueError(f"GoConfig: size must be an integer from 2 to 19, got {self.size!r}")
    if not isinstance(self.komi, (int, float)) or not math.isfinite(self.komi):
      raise ValueError(f"GoConfig: komi must be a finite number, got {self.komi!r}")
    if not isinstance(self.history, int) or self.history < 1:
      raise ValueError(f"GoConfig: history must be an integer >= 1, got {self.history!r}")
    if self.max_moves is None:
      object.__setattr__(self, "max_moves", 2 * self.size * self.size)
    elif not isinstance(self.max_moves, int) or self.max_moves < 1:
      raise ValueError(f"GoConfig: max_moves must be a positive integer or None, got {self.max_moves!r}")
    object.__setattr__(self, "komi", float(self.komi))

  @property
  def num_points(self) -> int:
    """P = size * size, the number of board points."""
    return self.size * self.size

  @property
  def pass_action(self) -> int:
    """The action index of a pass (P)."""
    return self.size * self.size

  @property
  def num_actions(self) -> int:
    """P + 1: every point and pass."""
    return self.size * self.size + 1


# The game protocol's functions of the config (agz_jax.game).
def num_actions(cfg: GoConfig) -> int:
  """P + 1: every point and pass."""
  return cfg.num_actions


def max_length(cfg: GoConfig) -> int:
  """The most moves a game lasts (max_moves)."""
  return cfg.max_moves


def pass_action(cfg: GoConfig) -> int:
  """The action index of a pass (P)."""
  return cfg.pass_action


def dirichlet_alpha(cfg: GoConfig) -> float:
  """AlphaGo Zero's 0.03 on 19x19, scaled by the number of moves (AlphaZero's rule)."""
  return 0.03 * 361 / cfg.num_points
