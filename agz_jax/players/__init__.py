"""Players for the host-side tools (GTP, matches, pictures), one class per kind, and the
engine-side rules that turn a player's proposal into a move (move_policy).

They use the same jitted environment and search as training.
"""

from agz_jax.players.alphago_player import AlphaGoPlayer, read_bundle
from agz_jax.players.clock import SearchClock
from agz_jax.players.load import CONSIDERED_ACTIONS, SIMULATIONS, load_player, pretrained_path
from agz_jax.players.move_policy import (KOMI, RESIGN_THRESHOLD, EngineSettings, choose_move,
                                         search_line, sensible, win_rate)
from agz_jax.players.network import Network, input_planes, make_model, search_positions
from agz_jax.players.policy_player import PolicyPlayer
from agz_jax.players.protocol import Analysis, Candidate, Player
from agz_jax.players.random_player import RandomPlayer, random_move
from agz_jax.players.search_player import Rollouts, SearchPlayer

__all__ = [
    "AlphaGoPlayer", "Analysis", "CONSIDERED_ACTIONS", "Candidate", "EngineSettings", "KOMI",
    "Network", "Player", "PolicyPlayer", "RESIGN_THRESHOLD", "RandomPlayer", "Rollouts", "SIMULATIONS", "SearchClock", "SearchPlayer",
    "choose_move", "input_planes", "load_player", "make_model", "pretrained_path", "random_move",
    "read_bundle", "search_line", "search_positions", "sensible", "win_rate",
]
