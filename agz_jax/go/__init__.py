"""The game of Go in pure JAX: rules, scoring, feature planes and symmetries."""

from agz_jax.go.config import GoConfig
from agz_jax.go.coords import (action_to_gtp, action_to_sgf_move, gtp_to_action,
                                sgf_move_to_action)
from agz_jax.go.features import features, sensible_moves
from agz_jax.go.rules import init, legal_actions, result, score, step
from agz_jax.go.state import BLACK, EMPTY, WHITE, GoState
from agz_jax.go.symmetry import (NUM_SYMMETRIES, inverse_symmetry, symmetry_permutations,
                                 transform_planes, transform_policy)
from agz_jax.go.text import host_score, illegal_reason, parse_board, play, to_ascii

__all__ = [
    "BLACK", "EMPTY", "WHITE", "GoConfig", "GoState", "NUM_SYMMETRIES",
    "action_to_gtp", "action_to_sgf_move", "features", "gtp_to_action", "host_score",
    "illegal_reason", "init", "inverse_symmetry", "legal_actions", "parse_board", "play", "result",
    "score", "sensible_moves", "sgf_move_to_action", "step", "symmetry_permutations",
    "to_ascii", "transform_planes", "transform_policy",
]
