"""Search: mctx over a real game, with pluggable leaf evaluators.

`run_search(game, evaluator, variables, states, rng_key, search_config)` (mcts) runs
Gumbel MuZero, AlphaGo Zero's PUCT or AlphaGo's PUCT from a batch of positions (policies, with
their action selection in action_selection); an evaluator
(`evaluators.network`, or any function of the same signature) values the
leaves; `best_action` / `choose_action` turn a search into a move. `anytime` grows
a PUCT search in steps of any size in one compiled shape, for players under a clock;
`leaf_batch` its steps of several leaves of a tree at once (virtual loss), for an accelerator.
"""

from agz_jax.search import anytime, leaf_batch
from agz_jax.search.actions import best_action, choose_action, sample_action
from agz_jax.search.config import ALGORITHM_SETTINGS, ALGORITHMS, FIRST_PLAY, SearchConfig
from agz_jax.search.evaluators import ApplyFn, Evaluator, flax_network, network
from agz_jax.search.action_selection import alphago_selection
from agz_jax.search.mcts import (Root, evaluate, evaluator_key, legal_mask, make_recurrent_fn,
                                 run_search, search_evaluator)
from agz_jax.search.policies import alphago_policy, gumbel_policy, masked_logits
from agz_jax.search.reuse import find_node, reroot

__all__ = [
    "ALGORITHM_SETTINGS", "ALGORITHMS", "ApplyFn", "FIRST_PLAY", "anytime", "Evaluator", "leaf_batch", "Root", "SearchConfig", "alphago_policy",
    "alphago_selection", "best_action", "choose_action",
    "evaluate", "evaluator_key", "find_node", "flax_network", "gumbel_policy", "legal_mask", "make_recurrent_fn", "masked_logits",
    "network", "reroot", "run_search", "sample_action", "search_evaluator",
]
