"""agz_jax: AlphaGo and AlphaGo Zero in JAX.

The device core: a game (`go`, through the protocol of `game`), networks
(`nets.make`), the search with pluggable leaf evaluators (`search`), self-play,
the replay buffer, on-device matches (`arena`), AlphaGo's 2016 knowledge and leaf
evaluation (`alphago`, whose input encodings are registered with `go` here), and the training
entry points (`train_and_evaluate`, the task registry `TASKS`). The training package is
imported on first use, so that `import agz_jax` does not load the
checkpointing library.
"""

import importlib

from agz_jax import alphago, arena, game, go, nets, replay, search, selfplay
from agz_jax.game import Game
from agz_jax.replay import ReplayBuffer
from agz_jax.search import Evaluator, SearchConfig, run_search
from agz_jax.selfplay import SelfPlayConfig

__all__ = [
    "Evaluator", "Game", "ReplayBuffer", "SearchConfig", "SelfPlayConfig", "TASKS", "alphago",
    "arena", "game", "go", "nets", "replay", "run_search", "search", "selfplay",
    "train_and_evaluate", "training",
]
__version__ = "0.1.0"

# The input encodings beside go's own "agz17": AlphaGo's planes and KataGo's, registered once.
for _name, _encoding in alphago.ENCODINGS.items():
  go.register_encoding(_name, **_encoding)

_LAZY = {"training": None, "train_and_evaluate": "train_and_evaluate", "TASKS": "TASKS"}


def __getattr__(name):
  if name in _LAZY:
    training = importlib.import_module("agz_jax.training")
    return training if _LAZY[name] is None else getattr(training, _LAZY[name])
  raise AttributeError(f"module 'agz_jax' has no attribute {name!r}")
