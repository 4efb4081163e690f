"""On-device matches between two networks, and the Elo rating they imply.

A match plays G games at once, half with each network as black. All games
start together with black to move, so at every step the same colour moves in
every unfinished game, and each half of the batch is searched by the network
whose turn it is: one search of G positions per move, as in self-play.
"""

import jax
import jax.numpy as jnp

from agz_jax import go
from agz_jax.search import run_search


def elo_difference(score: jax.Array, games: int) -> jax.Array:
  """Elo difference implied by a score (wins + draws / 2) / games, clipped away from 0 and 1."""
  eps = 0.5 / games
  s = jnp.clip(score, eps, 1 - eps)
  return 400.0 * jnp.log10(s / (1 - s))


def play_match(cfg: go.GoConfig, apply_fn, variables_a, variables_b, rng_key: jax.Array, *,
               num_games: int, search: dict, temperature_moves: int):
  """Plays `num_games` games of network a against b. Consumes `rng_key`.

  Games 0 .. G/2-1 have a as black, the rest b as black. The first
  `temperature_moves` moves are sampled from the search policy so that the games
  differ; after that each side plays its search's best move.

  Returns:
    dict of [] float32: wins, losses and draws of a; mean game length.
  """
  if num_games % 2:
    raise ValueError(f"eval.num_games must be even (both colours), got {num_games}")
  half = num_games // 2
  states = jax.vmap(lambda _: go.init(cfg))(jnp.arange(num_games))

  def halves(tree):
    return jax.tree.map(lambda x: x[:half], tree), jax.tree.map(lambda x: x[half:], tree)

  def move(states, variables, key):
    k_search, k_sample = jax.random.split(key)
    out = run_search(cfg, apply_fn, variables, states, k_search, **search)
    if search.get("algorithm", "gumbel") == "gumbel":
      best = out.action
    else:
      best = jnp.argmax(out.search_tree.summary().visit_counts, axis=-1)
    logits = jnp.log(jnp.maximum(out.action_weights, 1e-30))
    sampled = jax.random.categorical(k_sample, logits)
    return jnp.where(states.move_count < temperature_moves, sampled, best).astype(jnp.int32)

  def body(carry):
    states, t, key = carry
    key, k0, k1 = jax.random.split(key, 3)
    black_turn = t % 2 == 0
    pick = lambda x, y: jax.tree.map(lambda u, v: jnp.where(black_turn, u, v), x, y)
    first, second = halves(states)
    actions = jnp.concatenate([
        move(first, pick(variables_a, variables_b), k0),
        move(second, pick(variables_b, variables_a), k1)])
    states = jax.vmap(lambda s, a: go.step(cfg, s, a))(states, actions)
    return states, t + 1, key

  def running(carry):
    states, t, _ = carry
    return (t < cfg.max_moves) & ~jnp.all(states.terminated)

  states, _, _ = jax.lax.while_loop(running, body, (states, jnp.int32(0), rng_key))
  result = jax.vmap(lambda s: go.result(cfg, s))(states)                       # for black
  a_colour = jnp.concatenate([jnp.ones(half), -jnp.ones(half)])
  for_a = result * a_colour
  return dict(wins=jnp.sum(for_a > 0).astype(jnp.float32),
              losses=jnp.sum(for_a < 0).astype(jnp.float32),
              draws=jnp.sum(for_a == 0).astype(jnp.float32),
              length=jnp.mean(states.move_count.astype(jnp.float32)))


def evaluate_and_rate(cfg: go.GoConfig, model, config, state):
  """Matches the current network against `state.reference`, updates Elo and the reference.

  Without gating the current network becomes the next reference, so the Elo
  curve adds up the gains of successive evaluations. With gating (AlphaGo Zero)
  it replaces the reference only when it scores above the threshold.

  Returns:
    (state, dict of [] float32 metrics: eval_win_rate, elo, eval_games_length,
    eval_replaced).
  """
  e = config.eval
  apply_fn = lambda v, x: model.apply(v, x, train=False)
  current = {"params": state.params, "batch_stats": state.batch_stats}
  search = dict(algorithm=config.search.algorithm, num_simulations=e.num_simulations,
                max_num_considered_actions=config.search.max_num_considered_actions,
                dirichlet_fraction=0.0)
  key = jax.random.fold_in(jax.random.fold_in(state.rng, state.iteration), 7)
  outcome = play_match(cfg, apply_fn, current, state.reference, key, num_games=e.num_games,
                       search=search, temperature_moves=e.temperature_moves)
  score = (outcome["wins"] + 0.5 * outcome["draws"]) / e.num_games
  gain = elo_difference(score, e.num_games)
  replace = score > e.gating_threshold if e.gating else jnp.bool_(True)
  elo = jnp.where(replace, state.elo + gain, state.elo)
  reference = jax.tree.map(lambda c, r: jnp.where(replace, c, r), current, state.reference)
  metrics = dict(eval_win_rate=score, elo=elo, eval_game_length=outcome["length"],
                 eval_replaced=replace.astype(jnp.float32))
  return state.replace(reference=reference, elo=elo), metrics



