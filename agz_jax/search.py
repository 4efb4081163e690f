"""Tree search with mctx over the real Go environment.

The search's embedding is the batch of GoStates itself: the recurrent function
steps the environment, so illegal moves (superko included) are masked inside
the tree as well as at the root, and a game that ends inside the tree is valued
by its result. Players alternate, so every edge has discount -1 and rewards and
values are from the point of view of the player to move at the node above.
"""

import functools
from typing import Callable

import jax
import jax.numpy as jnp
import mctx

from agz_jax import go

# (variables, planes [B, N, N, F]) -> (logits [B, A], value [B]); inference mode.
ApplyFn = Callable[[dict, jax.Array], tuple[jax.Array, jax.Array]]

ALGORITHMS = ("gumbel", "puct")


def masked_logits(logits: jax.Array, legal: jax.Array) -> jax.Array:
  """Logits shifted to a maximum of 0, illegal actions at the dtype's minimum (idempotent)."""
  logits = logits - jnp.max(logits, axis=-1, keepdims=True)
  return jnp.where(legal, logits, jnp.finfo(logits.dtype).min)


def legal_mask(cfg: go.GoConfig, states: go.GoState, min_pass_moves: int = 0) -> jax.Array:
  """[B, A] bool: the legal actions, pass withheld early in a game (see run_search)."""
  legal = jax.vmap(lambda s: go.legal_actions(cfg, s))(states)
  if min_pass_moves:
    early = (states.move_count < min_pass_moves) & jnp.any(legal[:, :-1], axis=-1)
    legal = legal.at[:, -1].set(legal[:, -1] & ~early)
  return legal


def evaluate(cfg: go.GoConfig, apply_fn: ApplyFn, variables, states: go.GoState,
             min_pass_moves: int = 0):
  """Network prior (illegal actions masked) and value of a batch of positions.

  Args:
    min_pass_moves: before this many moves of a game, pass is only allowed
      when nothing else is legal (a self-play heuristic, see run_search).

  Returns:
    (logits [B, A], value [B] for the player to move, legal [B, A] bool).
  """
  logits, value = apply_fn(variables, go.features(cfg, states))
  legal = legal_mask(cfg, states, min_pass_moves)
  return masked_logits(logits, legal), value, legal


def make_recurrent_fn(cfg: go.GoConfig, apply_fn: ApplyFn, min_pass_moves: int = 0):
  """The mctx recurrent function: play `action`, evaluate the new position."""

  def recurrent_fn(variables, rng_key, action, states):
    del rng_key  # the environment is deterministic
    mover = states.to_play.astype(jnp.float32)
    was_over = states.terminated
    states = jax.vmap(lambda s, a: go.step(cfg, s, a))(states, action)
    logits, value, _ = evaluate(cfg, apply_fn, variables, states, min_pass_moves)
    ended_now = states.terminated & ~was_over
    result = scores_where(cfg, states, ended_now)
    reward = jnp.where(ended_now, result * mover, 0.0)
    over = states.terminated
    output = mctx.RecurrentFnOutput(
        reward=reward,
        discount=jnp.where(over, 0.0, -1.0),
        prior_logits=logits,
        value=jnp.where(over, 0.0, value))
    return output, states

  return recurrent_fn


def scores_where(cfg: go.GoConfig, states: go.GoState, needed: jax.Array) -> jax.Array:
  """[B] results for black of the games where `needed`, 0 elsewhere.

  Most simulations end no game; then the scoring is skipped altogether (a
  lax.cond on the whole batch, outside any vmap).
  """
  def score_all():
    results = jax.vmap(lambda s, e: go.result(cfg, score_only_where(s, e)))(states, needed)
    return jnp.where(needed, results, 0.0)

  return jax.lax.cond(jnp.any(needed), score_all, lambda: jnp.zeros(needed.shape, jnp.float32))


def score_only_where(state: go.GoState, needed) -> go.GoState:
  """The state, or where its score is not needed the same state with an empty
  board: scoring floods empty regions in a while_loop, which under vmap runs as
  long as the slowest board, and an empty board takes one round."""
  return state.replace(board=jnp.where(needed, state.board, jnp.int8(go.EMPTY)))


def dirichlet_alpha_for(cfg: go.GoConfig) -> float:
  """AlphaGo Zero's 0.03 on 19x19, scaled by the number of moves (AlphaZero's rule)."""
  return 0.03 * 361 / cfg.num_points


def find_node(tree: mctx.Tree, states: go.GoState) -> jax.Array:
  """The most visited node of each searched tree whose position is exactly `states`.

  Positions are compared field by field (board, history, hashes, counters), so
  a node matches only when the network would see the same planes there.

  Returns:
    [B] int32 node index, -1 where no node holds the position.
  """
  def same(node_states, state):
    fields = jax.tree.map(lambda n, s: jnp.all((n == s[None]).reshape(n.shape[0], -1), axis=1),
                          node_states, state)
    return jnp.all(jnp.stack(jax.tree.leaves(fields)), axis=0)                 # [N]

  match = jax.vmap(same)(tree.embeddings, states) & (tree.node_visits > 0)   # [B, N]
  best = jnp.argmax(jnp.where(match, tree.node_visits, -1), axis=1)
  return jnp.where(jnp.any(match, axis=1), best, -1).astype(jnp.int32)


def reroot(tree: mctx.Tree, node: jax.Array,
           num_nodes: int | None = None) -> tuple[mctx.Tree, jax.Array]:
  """The subtree under `node` as a tree of `num_nodes` nodes, rooted at index 0.

  Node statistics, children and embeddings are kept; the other nodes are
  dropped and the kept ones renumbered in their old order (a child still comes
  after its parent, as mctx allocates them).

  Args:
    tree: a searched tree, [B, N, ...].
    node: [B] int32, the new root of each tree; -1 keeps nothing.
    num_nodes: nodes of the returned trees (default: as many as `tree`'s; not fewer).

  Returns:
    (tree, kept [B] int32 number of nodes kept).
  """
  size = tree.node_visits.shape[1]
  num_nodes = size if num_nodes is None else num_nodes
  if num_nodes < size:
    raise ValueError(f"reroot: {num_nodes} nodes cannot hold a subtree of a {size}-node tree")

  def one(t, r):
    n = t.node_visits.shape[0]

    def mark(i, below):
      parent = t.parents[i]
      return below.at[i].set((i == r) | ((parent >= 0) & below[jnp.maximum(parent, 0)]))

    below = jax.lax.fori_loop(0, n, mark, jnp.zeros(n, bool))
    new = jnp.where(below, jnp.cumsum(below) - 1, num_nodes)                 # num_nodes: dropped

    def move(x, fill):
      return jnp.full((num_nodes,) + x.shape[1:], fill, x.dtype).at[new].set(x, mode="drop")

    def renumber(index):
      return jnp.where(index >= 0, new[jnp.maximum(index, 0)], index)

    parents = renumber(move(t.parents, mctx.Tree.NO_PARENT)).at[0].set(mctx.Tree.NO_PARENT)
    out = t.replace(
        node_visits=move(t.node_visits, 0), raw_values=move(t.raw_values, 0),
        node_values=move(t.node_values, 0), parents=parents,
        action_from_parent=move(t.action_from_parent, mctx.Tree.NO_PARENT).at[0].set(
            mctx.Tree.NO_PARENT),
        children_index=renumber(move(t.children_index, mctx.Tree.UNVISITED)),
        children_prior_logits=move(t.children_prior_logits, 0),
        children_visits=move(t.children_visits, 0), children_rewards=move(t.children_rewards, 0),
        children_discounts=move(t.children_discounts, 0),
        children_values=move(t.children_values, 0),
        embeddings=jax.tree.map(lambda x: move(x, 0), t.embeddings))
    return out, jnp.sum(below).astype(jnp.int32)

  return jax.vmap(one)(tree, node)


def _reusing_loop(reused: mctx.Tree, kept: jax.Array, num_simulations: int):
  """An mctx loop_fn that starts from `reused` and adds num_simulations simulations.

  mctx builds a fresh tree (root only) and numbers the node expanded by
  simulation i as i + 1; this loop swaps in the reused tree (with the fresh
  root's prior, value and invalid-action mask, so root noise and masks are the
  new search's) and starts at the first simulation whose node index is free in
  every tree of the batch. Trees that kept nothing use the fresh tree.
  """
  def loop_fn(lower, upper, body_fun, init_val):
    del lower
    key, fresh = init_val
    root = lambda x, f: x.at[:, 0].set(f[:, 0])
    merged = reused.replace(
        children_prior_logits=root(reused.children_prior_logits, fresh.children_prior_logits),
        raw_values=root(reused.raw_values, fresh.raw_values),
        root_invalid_actions=fresh.root_invalid_actions, extra_data=fresh.extra_data)
    some = kept > 0
    tree = jax.tree.map(
        lambda m, f: jnp.where(some.reshape((-1,) + (1,) * (m.ndim - 1)), m, f), merged, fresh)
    first = jnp.maximum(jnp.max(kept), 1) - 1
    return jax.lax.fori_loop(first, jnp.minimum(first + num_simulations, upper), body_fun,
                             (key, tree))

  return loop_fn


def run_search(cfg: go.GoConfig, apply_fn: ApplyFn, variables, states: go.GoState,
               rng_key: jax.Array, *, algorithm: str = "gumbel", num_simulations: int = 32,
               max_num_considered_actions: int = 16, gumbel_scale: float = 1.0,
               dirichlet_alpha: float | None = None, dirichlet_fraction: float = 0.25,
               pb_c_init: float = 1.25, pb_c_base: float = 19652.0,
               min_pass_moves: int = 0, reuse: mctx.Tree | None = None,
               root: tuple[jax.Array, jax.Array, jax.Array] | None = None) -> mctx.PolicyOutput:
  """Searches from a batch of positions. Consumes `rng_key`.

  Args:
    cfg: the game's configuration.
    apply_fn: the network in inference mode.
    variables: the network's variables (params and BatchNorm statistics).
    states: [B] GoStates to search from (not terminated).
    rng_key: one PRNG key for the batch, or [B] keys, one per game: then each
      game is searched on its own (vmap over searches of one game), its
      result independent of the games it is batched with, as sharded
      self-play needs.
    algorithm: 'gumbel' (mctx.gumbel_muzero_policy) or 'puct'
      (mctx.muzero_policy with Dirichlet noise at the root, as AlphaGo Zero).
    num_simulations: simulations per search.
    max_num_considered_actions: Gumbel: actions kept by sequential halving.
    gumbel_scale: Gumbel: scale of the root noise.
    dirichlet_alpha: PUCT: root noise concentration; None scales AGZ's 0.03
      on 19x19 to the board size.
    dirichlet_fraction: PUCT: weight of the noise in the root prior.
    pb_c_init: PUCT exploration constant.
    pb_c_base: PUCT exploration base.
    min_pass_moves: before this many moves of a game, pass is allowed (at the
      root and inside the tree) only when no other move is legal. Self-play
      uses it against a collapse seen from scratch: with komi, a side that
      passes early and is answered by a pass wins, so both learn to pass and
      stop learning the game. 0 (players, matches) keeps the rules as they are.
    reuse: PUCT only: a tree from an earlier search (of this function with the
      same num_simulations and reuse) in which the positions `states` were
      reached (any earlier tree of at most 2 * num_simulations + 1 nodes); the
      subtree under each position is kept with its visits and num_simulations
      more simulations are added, as AlphaGo Zero reuses the subtree of the
      move played. Trees then hold 2 * num_simulations + 1 nodes, so a large
      kept subtree leaves room for fewer new simulations. Gumbel search
      always starts afresh: its sequential halving plans the root's visits from
      zero.

  Returns:
    mctx.PolicyOutput: `action` [B], `action_weights` [B, A] (the policy
    target), `search_tree` (root value, visit counts).
  """
  if algorithm not in ALGORITHMS:
    raise ValueError(f"search algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
  if algorithm == "gumbel" and reuse is not None:
    raise ValueError("reuse: only the PUCT search reuses trees (Gumbel plans its root visits "
                     "from zero)")
  if root is None:
    root = evaluate(cfg, apply_fn, variables, states, min_pass_moves)
  search = functools.partial(
      _policy, cfg, apply_fn, variables, algorithm=algorithm, num_simulations=num_simulations,
      max_num_considered_actions=max_num_considered_actions, gumbel_scale=gumbel_scale,
      dirichlet_alpha=dirichlet_alpha_for(cfg) if dirichlet_alpha is None else dirichlet_alpha,
      dirichlet_fraction=dirichlet_fraction, pb_c_init=pb_c_init, pb_c_base=pb_c_base,
      min_pass_moves=min_pass_moves)
  if not _per_game(rng_key):
    return search(states, rng_key, root, reuse)
  if reuse is not None:
    raise ValueError("reuse: give one PRNG key for the batch, not one per game")
  if algorithm == "gumbel":  # the root's noise is the only randomness: one batched search
    noise = jax.vmap(lambda k: jax.random.gumbel(k, root[0].shape[1:], root[0].dtype))(rng_key)
    return gumbel_policy(cfg, apply_fn, variables, states, root, gumbel_scale * noise,
                         num_simulations=num_simulations,
                         max_num_considered_actions=max_num_considered_actions,
                         min_pass_moves=min_pass_moves)

  # PUCT breaks ties between equal children with noise drawn for each game of
  # the batch: searches of one game each, vmapped, keep the games independent.
  def one(state, key, logits, value, legal):
    batch_of_one = lambda tree: jax.tree.map(lambda x: x[None], tree)
    out = search(batch_of_one(state), key, batch_of_one((logits, value, legal)), None)
    return jax.tree.map(lambda x: x[0], out)

  return jax.vmap(one)(states, rng_key, *root)


def gumbel_policy(cfg: go.GoConfig, apply_fn: ApplyFn, variables, states: go.GoState, root,
                  gumbel: jax.Array, *, num_simulations: int, max_num_considered_actions: int,
                  min_pass_moves: int = 0) -> mctx.PolicyOutput:
  """mctx.gumbel_muzero_policy with the root's Gumbel noise given, one row per game.

  The same search (mctx.search with mctx's Gumbel root and interior action
  selection and completed Q-values), action (the best of the most visited
  actions by noise + prior logit + completed Q) and improved policy; only the
  noise comes from the caller, so each game's can come from its own key.

  Args:
    root: (logits, value, legal) of `states`, as `evaluate` returns them.
    gumbel: [B, A] the root's noise, already scaled.
  """
  logits, value, legal = root
  logits = masked_logits(logits, legal)
  tree = mctx.search(
      params=variables, rng_key=jax.random.PRNGKey(0),  # neither selection draws from it
      root=mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states),
      recurrent_fn=make_recurrent_fn(cfg, apply_fn, min_pass_moves),
      root_action_selection_fn=functools.partial(
          mctx.gumbel_muzero_root_action_selection, num_simulations=num_simulations,
          max_num_considered_actions=max_num_considered_actions,
          qtransform=mctx.qtransform_completed_by_mix_value),
      interior_action_selection_fn=functools.partial(
          mctx.gumbel_muzero_interior_action_selection,
          qtransform=mctx.qtransform_completed_by_mix_value),
      num_simulations=num_simulations, invalid_actions=~legal,
      extra_data=mctx.GumbelMuZeroExtraData(root_gumbel=gumbel))
  visits = tree.summary().visit_counts
  completed_q = jax.vmap(mctx.qtransform_completed_by_mix_value, in_axes=(0, None))(
      tree, mctx.Tree.ROOT_INDEX)
  # Sequential halving's winner: among the most visited actions, the highest
  # noise + logit + completed Q (logits already have their maximum at 0).
  most_visited = visits == jnp.max(visits, axis=-1, keepdims=True)
  score = jnp.maximum(-1e9, gumbel + logits + completed_q)
  action = jnp.argmax(jnp.where(most_visited & legal, score, -jnp.inf), axis=-1)
  weights = jax.nn.softmax(masked_logits(logits + completed_q, legal))
  return mctx.PolicyOutput(action=action.astype(jnp.int32), action_weights=weights,
                           search_tree=tree)


def _per_game(rng_key: jax.Array) -> bool:
  """Whether `rng_key` is a batch of keys (one per game) rather than one key."""
  if jax.dtypes.issubdtype(rng_key.dtype, jax.dtypes.prng_key):
    return rng_key.ndim == 1
  return rng_key.ndim == 2


def _policy(cfg, apply_fn, variables, states, rng_key, root, reuse, *, algorithm,
            num_simulations, max_num_considered_actions, gumbel_scale, dirichlet_alpha,
            dirichlet_fraction, pb_c_init, pb_c_base, min_pass_moves) -> mctx.PolicyOutput:
  """The mctx policy call of run_search on a batch, with one key."""
  logits, value, legal = root
  root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states)
  recurrent_fn = make_recurrent_fn(cfg, apply_fn, min_pass_moves)
  if algorithm == "gumbel":
    return mctx.gumbel_muzero_policy(
        variables, rng_key, root, recurrent_fn, num_simulations,
        invalid_actions=~legal, max_num_considered_actions=max_num_considered_actions,
        gumbel_scale=gumbel_scale)
  capacity, loop_fn = num_simulations, jax.lax.fori_loop
  if reuse is not None:
    kept_tree, kept = reroot(reuse, find_node(reuse, states), 2 * num_simulations + 1)
    capacity, loop_fn = 2 * num_simulations, _reusing_loop(kept_tree, kept, num_simulations)
  return mctx.muzero_policy(
      variables, rng_key, root, recurrent_fn, capacity, loop_fn=loop_fn,
      invalid_actions=~legal, dirichlet_fraction=dirichlet_fraction,
      dirichlet_alpha=dirichlet_alpha, pb_c_init=pb_c_init, pb_c_base=pb_c_base)
