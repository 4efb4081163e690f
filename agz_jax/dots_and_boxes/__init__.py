"""Dots and Boxes in pure JAX, a second game for the AlphaZero core.

The module satisfies the game protocol of `agz_jax.game` (init, step,
legal_actions, result, num_actions, max_length, pass_action, dirichlet_alpha,
features, planes_shape, symmetries) and its optional part (ownership, score),
each function taking a `DotsConfig` first. A player who completes a box moves
again: `to_play` stays, and the search's discount follows it. OPPONENTS holds
scripted players (random, greedy, perfect) to measure a trained network against.
"""

from agz_jax.dots_and_boxes.config import (DotsConfig, box_cells, box_sides, dirichlet_alpha,
                                           line_cells, line_index, line_name, max_length,
                                           num_actions, pass_action)
from agz_jax.dots_and_boxes.features import (ENCODINGS, NUM_PLANES, check_encoding, features,
                                             planes_shape, symmetries)
from agz_jax.dots_and_boxes.opponents import OPPONENTS, greedy_lines, random_lines
from agz_jax.dots_and_boxes.rules import (FIRST, SECOND, DotsState, init, legal_actions,
                                          ownership, result, score, step)
from agz_jax.dots_and_boxes.text import action_to_text, text_to_action, to_ascii

__all__ = [
    "ENCODINGS", "FIRST", "NUM_PLANES", "OPPONENTS", "SECOND", "DotsConfig", "DotsState", "action_to_text",
    "box_cells", "box_sides", "check_encoding", "dirichlet_alpha", "features", "greedy_lines", "init",
    "legal_actions", "line_cells", "line_index", "line_name", "max_length", "num_actions",
    "ownership", "pass_action", "planes_shape", "random_lines", "result", "score", "step", "symmetries",
    "text_to_action", "to_ascii",
]
