"""The game of Go in pure JAX: rules, scoring, input encodings and symmetries.

The module satisfies the game protocol of `agz_jax.game` (init, step,
legal_actions, result, num_actions, max_length, pass_action, dirichlet_alpha, features,
planes_shape, symmetries) and its optional part (ownership, score), each
function taking a `GoConfig` first.
`patterns` holds the features of AlphaGo's fast (rollout and tree) policies.
"""

from agz_jax.go import patterns
from agz_jax.go.config import GoConfig, dirichlet_alpha, max_length, num_actions, pass_action
from agz_jax.go.coords import (COLUMNS, action_to_gtp, action_to_sgf_move, gtp_to_action,
                               sgf_move_to_action, star_points)
from agz_jax.go.features import (ENCODINGS, LadderSettings, check_encoding, features,
                                 ladder_settings, num_planes, planes_shape, sensible_moves)
from agz_jax.go.rules import check_setup, init, legal_actions, ownership, result, score, step
from agz_jax.go.state import BLACK, EMPTY, WHITE, GoState
from agz_jax.go.symmetry import (NUM_SYMMETRIES, inverse_symmetry, symmetries,
                                 symmetry_permutations, transform_planes, transform_policy)
from agz_jax.go.text import host_score, illegal_reason, parse_board, play, to_ascii

__all__ = [
    "BLACK", "COLUMNS", "EMPTY", "ENCODINGS", "WHITE", "GoConfig", "GoState", "LadderSettings",
    "NUM_SYMMETRIES",
    "action_to_gtp", "action_to_sgf_move", "check_encoding", "check_setup", "dirichlet_alpha",
    "features", "gtp_to_action", "host_score", "illegal_reason", "init", "inverse_symmetry",
    "ladder_settings",
    "legal_actions", "max_length", "num_actions", "num_planes", "ownership", "parse_board",
    "pass_action", "patterns", "planes_shape",
    "play", "result", "score", "sensible_moves", "sgf_move_to_action", "star_points", "step",
    "symmetries",
    "symmetry_permutations", "to_ascii", "transform_planes", "transform_policy",
]
