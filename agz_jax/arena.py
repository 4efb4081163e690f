"""On-device matches between two players (an evaluator with its variables each),
and the Elo rating they imply.

A match plays G games at once, half with player a moving first, half with b.
Each game is searched by the player whose turn it is, read from the game's
`to_play`: in a game where one player may move twice (Dots and Boxes) the two
players' games drift apart. While every unfinished game of a half has the same
player to move (always, in Go) that half costs one search of G/2 positions per
move; otherwise both players search it and each game takes its own player's
move.
"""

import jax
import jax.numpy as jnp

from agz_jax import stats
from agz_jax.game import Game
from agz_jax.search import Evaluator, SearchConfig, choose_action, run_search


def play_match(game: Game, evaluator: Evaluator, variables_a, variables_b, rng_key: jax.Array, *,
               num_games: int, search: SearchConfig, temperature_moves: int,
               moves_b=None, evaluator_b: Evaluator | None = None,
               per_game: bool = False) -> dict:
  """Plays `num_games` games of player a against b. Consumes `rng_key`.

  Games 0 .. G/2-1 have a as the first player (+1, black in Go), the rest b.
  The first `temperature_moves` moves of a game are sampled from the search
  policy so that the games differ; after that each side plays its search's best
  move.

  Args:
    moves_b: a player b that does not search, such as a random player:
      (states [G/2], rng_key) -> [G/2] actions; `variables_b` is then unused.
    evaluator_b: player b's evaluator when it is not a's (another network:
      `variables_b` are then its variables, of any structure).
    per_game: also return each game's result and length.

  Returns:
    dict of [] float32: wins, losses and draws of a; mean game length; with
    `per_game`, also [G] arrays: `result_a` (+1 / -1 / 0 for a; a is the first
    player in the first G/2 games) and `lengths`.
  """
  if num_games % 2:
    raise ValueError(f"eval.num_games must be even (both colours), got {num_games}")
  half = num_games // 2
  a_colour = jnp.concatenate([jnp.ones(half, jnp.int8), -jnp.ones(half, jnp.int8)])

  def moves(states, variables, key, evaluate=evaluator):
    k_search, k_sample = jax.random.split(key)
    out = run_search(game, evaluate, variables, states, k_search, search)
    keys = jax.random.split(k_sample, states.to_play.shape[0])
    return choose_action(search, out, keys, states.move_count, temperature_moves)[0]

  def half_moves(states, colour, key):
    """The moves of one half's games, each by its player to move; `colour`: a's there."""
    going = ~states.terminated
    a_moves = states.to_play == colour
    only_a, only_b = ~jnp.any(going & ~a_moves), ~jnp.any(going & a_moves)
    if moves_b is not None:  # b's moves are cheap: a's search is skipped when only b moves
      b_key = jax.random.fold_in(key, 1)
      return jax.lax.cond(only_b, lambda: moves_b(states, b_key), lambda: jnp.where(
          a_moves, moves(states, variables_a, key), moves_b(states, b_key)))

    if evaluator_b is not None:  # two networks: each searches with its own
      moves_a = lambda: moves(states, variables_a, key)
      moves_b_net = lambda: moves(states, variables_b, key, evaluator_b)
      return jax.lax.cond(only_a | only_b,
                          lambda: jax.lax.cond(only_a, moves_a, moves_b_net),
                          lambda: jnp.where(a_moves, moves_a(), moves_b_net()))

    def one_player():
      pick = lambda u, v: jnp.where(only_a, u, v)
      return moves(states, jax.tree.map(pick, variables_a, variables_b), key)

    def both():
      return jnp.where(a_moves, moves(states, variables_a, key), moves(states, variables_b, key))

    return jax.lax.cond(only_a | only_b, one_player, both)

  def body(carry):
    states, t, key = carry
    key, k0, k1 = jax.random.split(key, 3)
    first = jax.tree.map(lambda x: x[:half], states)
    second = jax.tree.map(lambda x: x[half:], states)
    actions = jnp.concatenate([half_moves(first, 1, k0), half_moves(second, -1, k1)])
    return game.step_batch(states, actions), t + 1, key

  def running(carry):
    states, t, _ = carry
    return ~jnp.all(states.terminated)

  states = game.init_batch(num_games)
  states, _, _ = jax.lax.while_loop(running, body, (states, jnp.int32(0), rng_key))
  return _tally(game, states, a_colour, per_game)


def _tally(game: Game, states, a_colour: jax.Array, per_game: bool) -> dict:
  """play_match's result from the finished games (a's colour in each)."""
  for_a = jax.vmap(game.result)(states) * a_colour
  out = dict(wins=jnp.sum(for_a > 0).astype(jnp.float32),
             losses=jnp.sum(for_a < 0).astype(jnp.float32),
             draws=jnp.sum(for_a == 0).astype(jnp.float32),
             length=jnp.mean(states.move_count.astype(jnp.float32)))
  if per_game:
    out.update(result_a=for_a, lengths=states.move_count)
  return out


def evaluate_and_rate(game: Game, evaluator: Evaluator, current, reference, elo: jax.Array,
                      rng_key: jax.Array, *, num_games: int, search: SearchConfig,
                      temperature_moves: int, gating_threshold: float | None):
  """Matches the current variables against `reference`; updates the Elo and the reference.

  Without gating (`gating_threshold` None) the current network becomes the
  next reference, so the Elo curve adds up the gains of successive
  evaluations. With gating (AlphaGo Zero) it replaces the reference only when
  it scores above the threshold.

  Returns:
    (reference, elo, dict of [] float32 metrics: eval_win_rate, elo,
    eval_game_length, eval_replaced).
  """
  outcome = play_match(game, evaluator, current, reference, rng_key, num_games=num_games,
                       search=search, temperature_moves=temperature_moves)
  score = (outcome["wins"] + 0.5 * outcome["draws"]) / num_games
  gain = stats.elo_difference(score, num_games)
  replace = jnp.bool_(True) if gating_threshold is None else score > gating_threshold
  elo = jnp.where(replace, elo + gain, elo)
  reference = jax.tree.map(lambda c, r: jnp.where(replace, c, r), current, reference)
  metrics = dict(eval_win_rate=score, elo=elo, eval_game_length=outcome["length"],
                 eval_replaced=replace.astype(jnp.float32))
  return reference, elo, metrics
