"""Static configuration of a Go game."""

import dataclasses
import math

# The input plane sets go.features knows.
FEATURE_SETS = ("agz17", "alphago48", "alphago49")


@dataclasses.dataclass(frozen=True)
class GoConfig:
  """Rules and sizes of one Go game; hashable, so it can be a static jit argument.

  Attributes:
    size: board side N, from 2 to 19.
    komi: points given to white; an integer komi makes draws possible.
    history: number of board positions (current one included) kept for the
      feature planes; AlphaGo Zero uses 8.
    max_moves: the game ends (and is scored) after this many moves, passes
      included. None means 2 * size * size.
    features: the input planes `go.features` computes: "agz17" (AlphaGo Zero's
      stone history), "alphago48" (the 2016 policy network's hand-made planes)
      or "alphago49" (those plus the colour to play, for the value network).
  """

  size: int = 19
  komi: float = 7.5
  history: int = 8
  max_moves: int | None = None
  features: str = "agz17"

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
    if self.features not in FEATURE_SETS:
      raise ValueError(f"GoConfig: features must be one of {', '.join(FEATURE_SETS)}, got {self.features!r}")
    if self.features != "agz17" and self.history < 8:
      raise ValueError(f"GoConfig: features {self.features!r} need history >= 8 (turns-since planes), "
                       f"got {self.history}")
    object.__setattr__(self, "komi", float(self.komi))

  @property
  def num_planes(self) -> int:
    """F, the number of input planes go.features returns."""
    return {"agz17": 2 * self.history + 1, "alphago48": 48, "alphago49": 49}[self.features]

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
