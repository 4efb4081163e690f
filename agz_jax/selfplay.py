"""B games advance together, one searched move at a time, on device.

Games that end are scored and restarted in the same step, so every slot always
holds a game in progress and every step yields B training positions. A game
ends by the rules (two passes, the move limit) or by resignation: when the
searched value of the player to move falls below the threshold. A fraction of
games never resigns; in those, the colour that would have resigned is
remembered, and if it wins anyway the resignation would have been false.

Within a run of steps (`selfplay`) the network evaluates a game's position
once: the search that chose a move already evaluated the position after it
(the child node of the move played) and a restarted game's empty board is
evaluated once per run, so a step's root evaluation comes from there. Only
positions without one (a sampled move the search never visited) are evaluated
again, in a small sub-batch; the first step of a run evaluates every root.
"""

import dataclasses

import jax
import jax.numpy as jnp
import mctx
from flax import struct

from agz_jax.game import Game
from agz_jax.search import (Evaluator, SearchConfig, choose_action, evaluate, evaluator_key,
                            legal_mask, masked_logits, run_search, search_evaluator)


# Share of a device's games whose roots may be evaluated in a sub-batch.
SPARE_FRACTION = 0.125


@dataclasses.dataclass(frozen=True, kw_only=True)
class SelfPlayConfig:
  """How self-play plays its games; a static jit argument, built once from the config.

  Attributes:
    search: the search's settings (with self-play's min_pass_moves).
    encoding: the input planes recorded for training (the trained network's).
    temperature_moves: for this many moves of a game the move is sampled from
      the search policy; afterwards the search's best move is played.
    resign_threshold: resign when the searched value is below this; -1 or less
      never resigns.
    resign_min_moves: no resignation before this many moves.
    no_resign_fraction: share of games that may not resign.
    cheap_search: KataGo's playout cap randomization: the settings of the
      cheap search that a step gets with probability 1 - full_search_prob (its
      positions train the value, not the policy); None: every step searches
      in full.
    full_search_prob: the probability of a full search at a step.
    final_targets: record each finished game's ownership and score (the
      game's optional `ownership` and `score`) for the auxiliary heads.
  """

  search: SearchConfig
  encoding: str
  temperature_moves: int
  resign_threshold: float
  resign_min_moves: int
  no_resign_fraction: float
  cheap_search: SearchConfig | None = None
  full_search_prob: float = 1.0
  final_targets: bool = False

  @classmethod
  def from_config(cls, config) -> "SelfPlayConfig":
    """From a run's config: its `search`, `selfplay` and `model.encoding`."""
    sp, model = config.selfplay, config.model
    search = SearchConfig.from_config(config.search, min_pass_moves=sp.min_pass_moves)
    cheap = None
    if sp.get("playout_cap_randomization", False):
      # KataGo's cheap searches add no exploration noise and force no playouts.
      cheap = search.replace(num_simulations=sp.cheap_simulations, dirichlet_fraction=0.0,
                             forced_playouts=False,
                             max_num_considered_actions=min(search.max_num_considered_actions,
                                                            sp.cheap_simulations))
    return cls(search=search, encoding=model.encoding, temperature_moves=sp.temperature_moves,
               resign_threshold=sp.resign_threshold, resign_min_moves=sp.resign_min_moves,
               no_resign_fraction=sp.no_resign_fraction, cheap_search=cheap,
               full_search_prob=sp.full_search_prob if cheap else 1.0,
               final_targets=model.get("ownership_head", False) or model.get("score_head", False))


@struct.dataclass
class Games:
  """B games in progress. B: games, A actions.

  Attributes:
    states: [B] game states.
    may_resign: [B] bool, this game may end by resignation.
    would_resign: [B] int8, in a game that may not resign, the first colour
      whose value fell below the threshold, else 0.
  """

  states: object
  may_resign: jax.Array
  would_resign: jax.Array


@struct.dataclass
class StepRecord:
  """What one self-play step produced, per game slot ([B] or [T, B] for T steps).

  Attributes:
    planes: [B, H, W, F] uint8, the input planes of the position searched.
    policy: [B, A] float32, the search policy (training target).
    to_play: [B] int8, colour to move in that position.
    action: [B] int32, the move played (meaningless when the game resigned).
    root_value: [B] float32, searched value for the player to move (the Q
      value of the best move).
    ended: [B] bool, the game ended with this step's move (or resignation).
    result: [B] float32, the ended game's result for player +1 (black in Go): +1, -1, 0.
    length: [B] int32, the ended game's number of moves.
    resigned: [B] bool, it ended by resignation.
    resign_checked: [B] bool, an ended no-resign game in which a colour would
      have resigned.
    false_resign: [B] bool, ... and that colour won.
    root_evaluated: [B] bool, the network had to evaluate the position searched
      at this step (False: its evaluation came from the previous search or
      from the run's evaluation of the empty board). Per game, so the same on
      any number of devices; when many are True, the network runs on the
      whole batch.
    full_search: [B] bool, the position got the full search: its policy is a
      training target (playout cap randomization; always True without it).
    ownership: [B, P] int8, where the game ended by the rules: its final owner
      of each point for player +1 (game.ownership); None when not recorded.
    score: [B] float32, likewise its final score margin for player +1.
    scored: [B] bool, the game ended by the rules with this move and its
      ownership and score were recorded (not a resignation).
  """

  planes: jax.Array
  policy: jax.Array
  to_play: jax.Array
  action: jax.Array
  root_value: jax.Array
  ended: jax.Array
  result: jax.Array
  length: jax.Array
  resigned: jax.Array
  resign_checked: jax.Array
  false_resign: jax.Array
  root_evaluated: jax.Array
  full_search: jax.Array
  ownership: jax.Array
  score: jax.Array
  scored: jax.Array


@struct.dataclass
class RootEvaluation:
  """The network's evaluation of each game's current position, where known.

  Attributes:
    logits: [B, A] float32, prior logits with illegal actions masked.
    value: [B] float32, value for the player to move.
    known: [B] bool, the two above hold the position's evaluation.
  """

  logits: jax.Array
  value: jax.Array
  known: jax.Array

  @classmethod
  def unknown(cls, batch: int, num_actions: int) -> "RootEvaluation":
    return cls(logits=jnp.zeros((batch, num_actions), jnp.float32),
               value=jnp.zeros(batch, jnp.float32), known=jnp.zeros(batch, bool))


def new_games(game: Game, rng_key: jax.Array, batch: int, *,
              no_resign_fraction: float) -> Games:
  """B fresh games; each may resign with probability 1 - no_resign_fraction."""
  return _fresh_games(game, jax.random.split(rng_key, batch), no_resign_fraction)


def _fresh_games(game: Game, keys: jax.Array, no_resign_fraction: float) -> Games:
  """Fresh games, one per key; whether each may resign is drawn from its own key."""
  batch = keys.shape[0]
  states = game.init_batch(batch)
  may_resign = jax.vmap(lambda k: jax.random.uniform(k) >= no_resign_fraction)(keys)
  return Games(states=states, may_resign=may_resign, would_resign=jnp.zeros(batch, jnp.int8))


def game_keys(rng_key: jax.Array, first_game, batch: int) -> jax.Array:
  """[B] PRNG keys, game i's folded from `rng_key` and its global index first_game + i.

  A game's randomness depends only on the step's key and its index, never on
  how the games are split over devices.
  """
  index = jnp.asarray(first_game, jnp.int32) + jnp.arange(batch, dtype=jnp.int32)
  return jax.vmap(lambda i: jax.random.fold_in(rng_key, i))(index)


def _select(mask, a, b):
  return jax.tree.map(lambda x, y: jnp.where(mask.reshape(mask.shape + (1,) * (x.ndim - 1)), x, y),
                      a, b)


def selfplay_step(game: Game, evaluator: Evaluator, variables, games: Games,
                  rng_key: jax.Array, settings: SelfPlayConfig) -> tuple[Games, StepRecord]:
  """Searches and plays one move in every game, every root evaluated. Consumes `rng_key`.

  Args:
    game: the game.
    evaluator: values the search's positions (search.evaluators).
    variables: the evaluator's variables.
    games: [B] games in progress.
    rng_key: PRNG key.
    settings: how to play.

  Returns:
    (games after the move, restarted where they ended; StepRecord).
  """
  batch = games.states.to_play.shape[0]
  known = RootEvaluation.unknown(batch, game.num_actions)
  games, _, record = _step(game, evaluator, variables, games, known, known,
                           game_keys(rng_key, 0, batch), settings, spare=0)
  return games, record


def root_evaluation(game: Game, evaluator: Evaluator, variables, states, rng_key: jax.Array,
                    known: RootEvaluation, *, min_pass_moves: int, spare: int):
  """(logits, value, legal) of the positions, as search.evaluate, reusing what is known.

  With every evaluation known the evaluator does not run; with at most `spare`
  unknown, it runs on a sub-batch of `spare` positions; otherwise on all.

  Returns:
    (logits [B, A], value [B], legal [B, A], missing [B] bool: not known before).
  """
  legal = legal_mask(game, states, min_pass_moves)
  missing = ~known.known
  count = jnp.sum(missing)

  def cached():
    return known.logits, known.value

  def some():
    rows = jnp.argsort(known.known, stable=True)[:spare]           # the unknown ones first
    logits, value = evaluator(variables, jax.tree.map(lambda x: x[rows], states), rng_key)
    take = missing[rows]
    return (known.logits.at[rows].set(jnp.where(take[:, None], logits, known.logits[rows])),
            known.value.at[rows].set(jnp.where(take, value, known.value[rows])))

  def every():
    return evaluator(variables, states, rng_key)

  branches = [cached, some, every] if spare else [cached, every, every]
  branch = jnp.where(count == 0, 0, jnp.where(count <= spare, 1, 2))
  logits, value = jax.lax.switch(branch, branches)
  return masked_logits(logits, legal), value, legal, missing


def _step(game: Game, evaluator: Evaluator, variables, games: Games, known: RootEvaluation,
          fresh: RootEvaluation, keys, settings: SelfPlayConfig, *, spare: int, full=True):
  """selfplay_step with known root evaluations; also returns those of the next positions.

  Args:
    known: what is known of the current positions' evaluations.
    fresh: [B] the evaluation of a new game's position (known or not).
    keys: [B] PRNG keys, one per game (game_keys).
    spare: sub-batch size for the positions without a known evaluation.
    full: [] bool, this step searches in full (else settings.cheap_search).
  """
  batch = keys.shape[0]
  split = jax.vmap(lambda k: jax.random.split(k, 3))(keys)
  k_search, k_sample, k_new = split[:, 0], split[:, 1], split[:, 2]
  search = settings.search
  states = games.states
  planes = game.features(states, settings.encoding)
  # The roots as the search sees its nodes (prior tempered, value scaled), like the children's
  # stored evaluations that become the next step's known roots.
  logits, root_value, legal, missing = root_evaluation(
      game, search_evaluator(evaluator, search), variables, states,
      evaluator_key(k_search[0], 2), known, min_pass_moves=search.min_pass_moves, spare=spare)

  def searched(how: SearchConfig):
    out = run_search(game, evaluator, variables, states, k_search, how,
                     root=(logits, root_value, legal))
    action, best = choose_action(how, out, k_sample, states.move_count,
                                 settings.temperature_moves)
    # The searched value of the move to be played: with Gumbel search the root's
    # average also counts visits that sequential halving spends on poor moves.
    summary = out.search_tree.summary()
    best_q = jnp.take_along_axis(summary.qvalues, best[:, None], axis=1)[:, 0]
    best_visited = jnp.take_along_axis(summary.visit_counts, best[:, None], axis=1)[:, 0] > 0
    value = jnp.where(best_visited, best_q, summary.value)
    return action, out.action_weights, value, _child_evaluation(out.search_tree, action)

  if settings.cheap_search is None:
    action, policy, value, child = searched(search)
  else:  # playout cap randomization: the same search for every game of the step
    action, policy, value, child = jax.lax.cond(
        full, lambda: searched(search), lambda: searched(settings.cheap_search))
  low = (value < settings.resign_threshold) & (states.move_count >= settings.resign_min_moves)
  resign = games.may_resign & low
  would_resign = jnp.where(~games.may_resign & low & (games.would_resign == 0),
                           states.to_play, games.would_resign)

  after = game.step_batch(states, action)
  ended = after.terminated | resign
  by_rules = game.results_where(after, after.terminated)
  result = jnp.where(resign, -states.to_play.astype(jnp.float32), by_rules)
  checked = ended & (would_resign != 0)
  scored = after.terminated & ~resign
  if settings.final_targets:
    ownership, score = game.final_where(after, scored)
  else:
    ownership, score = None, jnp.zeros(batch, jnp.float32)
  record = StepRecord(
      planes=planes.astype(jnp.uint8),
      policy=policy,
      to_play=states.to_play,
      action=action,
      root_value=value,
      ended=ended,
      result=result,
      length=jnp.where(resign, states.move_count, after.move_count),
      resigned=resign,
      resign_checked=checked,
      false_resign=checked & (result * would_resign > 0),
      root_evaluated=missing,
      full_search=jnp.broadcast_to(full, (batch,)),
      ownership=ownership,
      score=score,
      scored=scored & settings.final_targets)
  new = _fresh_games(game, k_new, settings.no_resign_fraction)
  games = Games(states=after, may_resign=games.may_resign, would_resign=would_resign)
  return (_select(ended, new, games), _select(ended, fresh, child), record)


def _child_evaluation(tree: mctx.Tree, action: jax.Array) -> RootEvaluation:
  """What the search stored of the position after `action`: its node's prior and value."""
  rows = jnp.arange(action.shape[0])
  child = tree.children_index[rows, mctx.Tree.ROOT_INDEX, action]
  node = jnp.maximum(child, 0)
  return RootEvaluation(logits=tree.children_prior_logits[rows, node].astype(jnp.float32),
                        value=tree.raw_values[rows, node].astype(jnp.float32),
                        known=child != mctx.Tree.UNVISITED)


def selfplay(game: Game, evaluator: Evaluator, variables, games: Games, rng_key: jax.Array,
             num_steps: int, settings: SelfPlayConfig, *,
             spare_fraction: float = SPARE_FRACTION, first_game=0) -> tuple[Games, StepRecord]:
  """Runs `num_steps` self-play steps (lax.scan). Consumes `rng_key`.

  Each step's result is that of selfplay_step; the evaluations of the
  positions reached are reused (module docstring).

  Args:
    spare_fraction: share of the B games whose root may be evaluated in a
      sub-batch when their evaluation is not known (0: always all of them).
    first_game: global index of `games`' first game (for its PRNG keys); a
      device holding a shard of the games passes the shard's offset.

  Returns:
    (games, StepRecord with a leading [T] axis).
  """
  batch = games.states.to_play.shape[0]
  spare = spare_size(batch, spare_fraction)
  empty = jax.tree.map(lambda x: x[None], game.init())
  logits, value, _ = evaluate(game, search_evaluator(evaluator, settings.search), variables,
                              empty, evaluator_key(rng_key, 3), settings.search.min_pass_moves)
  fresh = RootEvaluation(logits=jnp.broadcast_to(logits, (batch,) + logits.shape[1:]),
                         value=jnp.broadcast_to(value, (batch,)), known=jnp.ones(batch, bool))

  def step(carry, key):
    games, known = carry
    full = full_search(key, settings)
    games, known, record = _step(game, evaluator, variables, games, known, fresh,
                                 game_keys(key, first_game, batch), settings, spare=spare,
                                 full=full)
    return (games, known), record

  known = RootEvaluation.unknown(batch, game.num_actions)
  (games, _), records = jax.lax.scan(step, (games, known), jax.random.split(rng_key, num_steps))
  return games, records


# The step's draw of a full or a cheap search comes from its key folded with this
# number, far from the game indices the games' keys are folded with.
_FULL_SEARCH_STREAM = 0x5EA4C0


def full_search(rng_key: jax.Array, settings: SelfPlayConfig) -> jax.Array:
  """[] bool: whether the step of `rng_key` searches in full (playout cap randomization).

  Drawn from the step's key alone, so every device draws the same.
  """
  if settings.cheap_search is None:
    return jnp.bool_(True)
  return jax.random.bernoulli(jax.random.fold_in(rng_key, _FULL_SEARCH_STREAM),
                              settings.full_search_prob)


def spare_size(batch: int, spare_fraction: float = SPARE_FRACTION) -> int:
  """Rows of the sub-batch that evaluates roots without a known evaluation (0: none)."""
  return max(1, int(batch * spare_fraction)) if spare_fraction > 0 else 0
