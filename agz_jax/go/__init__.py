"""The game of Go in pure JAX: rules, scoring, input encodings and symmetries.

The module satisfies the game protocol of `agz_jax.game` (init, step,
legal_actions, result, num_actions, max_length, pass_action, dirichlet_alpha, features,
planes_shape, symmetries) and its optional part (ownership, score), each
function taking a `GoConfig` first.
Board geometry (`neighbour_table`, `neighbour_values`, `liberty_range`) and AlphaGo's
sensibleness (`sensible_moves`, `own_eyes`) are public for `agz_jax.alphago`, which holds
AlphaGo's hand-made knowledge (ladders, its 48 planes, patterns, rollouts) and KataGo's
inputs; `agz_jax` registers their encodings with `features` (`register_encoding`).
"""

from agz_jax.go.config import GoConfig, dirichlet_alpha, max_length, num_actions, pass_action
from agz_jax.go.coords import (COLUMNS, action_to_gtp, action_to_sgf_move, gtp_to_action,
                               sgf_move_to_action, star_points)
from agz_jax.go.features import (ENCODINGS, Encoding, check_encoding, features, num_planes,
                                 own_eyes, planes_shape, register_encoding, sensible_moves)
from agz_jax.go.benson import pass_alive
from agz_jax.go.rules import (chains, check_setup, init, ko_banned, legal_actions, liberty_range,
                              neighbour_table, neighbour_values, step)
from agz_jax.go.scoring import ownership, result, score
from agz_jax.go.state import BLACK, EMPTY, WHITE, GoState
from agz_jax.go.symmetry import (NUM_SYMMETRIES, inverse_symmetry, symmetries,
                                 symmetry_permutations, transform_planes, transform_policy)
from agz_jax.go.text import host_score, illegal_reason, parse_board, play, to_ascii

__all__ = [
    "BLACK", "COLUMNS", "EMPTY", "ENCODINGS", "Encoding", "GoConfig", "GoState", "NUM_SYMMETRIES",
    "WHITE", "action_to_gtp", "action_to_sgf_move", "chains", "check_encoding", "check_setup",
    "dirichlet_alpha", "features", "gtp_to_action", "host_score", "illegal_reason", "init",
    "inverse_symmetry", "ko_banned", "legal_actions", "liberty_range", "max_length",
    "neighbour_table", "neighbour_values", "num_actions", "num_planes", "own_eyes", "ownership",
    "parse_board", "pass_alive",
    "pass_action", "planes_shape", "play", "register_encoding", "result", "score",
    "sensible_moves", "sgf_move_to_action", "star_points", "step", "symmetries",
    "symmetry_permutations", "to_ascii", "transform_planes", "transform_policy",
]
