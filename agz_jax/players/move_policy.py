"""The engine's side of choosing a move: when to pass, when to resign, how long to search.

The player proposes (its search or policy); these rules decide what is played:

- Pass at once when the opponent passed and the Tromp-Taylor score favours
  us: the game ends, won.
- Never pass while the score is against us (the opponent could end the game by
  passing too, with its dead stones still counted): play the best candidate
  that fills none of our own eyes instead; where the search offers none, take a
  liberty of the opponent's weakest chain (pressing_move): a group that only
  looked alive is captured before the count; pass only when no sensible move
  that keeps its stone out of atari is left.
- Never pass while a neutral point (dame) is left whose filling raises our
  Tromp-Taylor score and leaves the new stone out of atari: under area scoring
  those points count, and an engine that passes early hands them over.
- Never fill one of our own eyes while another candidate fills none.
- Resign when the win rate is below the threshold and a count agrees that we are
  behind, but not in the first moves. The count plays the position out: random
  sensible moves (no own eye filled) to the end, PLAYOUTS times, scored by
  Tromp-Taylor; it agrees when fewer than RESIGN_PLAYOUT_WINS of them are won. A
  count of the board as it stands would take the dead stones of a late position
  for alive ones, and with a value head that misjudges late positions the two
  agreed on resigning games that were won by 20 points. Where the search scales the
  network's value by the move number (search.value_scale, the analysis's `value_scale`),
  the win rate read here is the value un-scaled, the network's own, as the threshold
  means it; where the scale is 0 the value says nothing, and the count alone resigns,
  when its share of won playouts is below the threshold.
- With `endgame` off (to measure what the rules above buy) the engine plays as it did
  before them: only a pass while behind is replaced (by the best candidate that fills none of
  its own eyes), and the win rate alone decides resignation.
- Spend the seconds per move or a share of the time left: the player is given
  the seconds and spends them by its own clock.
"""

import dataclasses
import functools
import math
import time

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import go
from agz_jax.alphago import rollout
from agz_jax.players.protocol import Analysis, Player


# The engine's defaults when the controller or the command line says nothing.
RESIGN_THRESHOLD = 0.05   # win rate
KOMI = 7.5
# The resignation's count: random playouts of the position, and the share of them won below
# which it agrees that the game is lost.
PLAYOUTS = 64
RESIGN_PLAYOUT_WINS = 0.25


@dataclasses.dataclass(frozen=True)
class EngineSettings:
  """The engine's settings for the rules above.

  Attributes:
    simulations: per move without a time budget (None: the player's own).
    seconds_per_move: when set, each move's search spends this long (or less: `seconds`).
    resign_threshold: resign when the searched win rate falls below this; 0 never resigns.
    resign_min_moves: never resign before this many moves (None: half the points).
    endgame: the endgame rules (dame filled before a pass, no own eye filled while another
      candidate fills none, resignation only where the count agrees); False plays without.
  """

  simulations: int | None = None
  seconds_per_move: float | None = None
  resign_threshold: float = RESIGN_THRESHOLD
  resign_min_moves: int | None = None
  endgame: bool = True

  def seconds(self, cfg: go.GoConfig, state: go.GoState,
              time_left: float | None = None) -> float | None:
    """Seconds for the move: the seconds per move, or the time left spread over the moves
    that may remain, whichever is less; None without either."""
    budget = self.seconds_per_move
    if time_left is not None:
      per_move = time_left / max(10, cfg.num_points // 3 - int(state.move_count) // 2)
      budget = per_move if budget is None else min(budget, per_move)
    return budget


def choose_move(settings: EngineSettings, player: Player, cfg: go.GoConfig, state: go.GoState,
                *, opponent_passed: bool, time_left: float | None = None, log=None,
                on_search=None) -> int | None:
  """The action to play for the player to move in `state` (an unfinished game), or None to
  resign.

  Args:
    settings: the engine's settings.
    player: proposes the move (players.Player).
    cfg, state: the position.
    opponent_passed: whether the last move of the game was a pass.
    time_left: seconds left on the mover's clock, or None.
    log: called with a line on the search (search_line), or None.
    on_search: called with the search's result (player.analyse's Analysis).
  """
  colour = int(state.to_play)
  if opponent_passed and colour * go.host_score(cfg, state) > 0:
    return cfg.pass_action
  began = time.perf_counter()
  out = player.analyse(cfg, state, settings.simulations,
                       seconds=settings.seconds(cfg, state, time_left))
  if log is not None:
    log(search_line(cfg, state, out, time.perf_counter() - began))
  if on_search is not None:
    on_search(out)
  min_moves = settings.resign_min_moves
  if min_moves is None:
    min_moves = cfg.num_points // 2
  behind = colour * go.host_score(cfg, state) < 0
  if int(state.move_count) >= min_moves and _resigns(settings, cfg, state, out):
    return None
  if not settings.endgame:
    return _not_a_losing_pass(cfg, state, out, behind)
  return _settled(cfg, state, out, opponent_passed)


def _resigns(settings: EngineSettings, cfg: go.GoConfig, state: go.GoState,
             out: Analysis) -> bool:
  """Whether the player to move resigns after its search `out` (module docstring)."""
  scale = out.get("value_scale", 1.0)
  if scale <= 0.0:  # the search gave the value no weight here: the count is the win rate
    return settings.endgame and playout_wins(cfg, state) < settings.resign_threshold
  return (win_rate(out["value"] / scale) < settings.resign_threshold
          and (not settings.endgame or playout_wins(cfg, state) < RESIGN_PLAYOUT_WINS))


def search_line(cfg: go.GoConfig, state: go.GoState, out: Analysis, seconds: float) -> str:
  """One line on a search, as engines write to stderr for a GUI's console: 'move 12 (B):
  Q16 after 1.98 s, 104 visits, win rate 47.5% | pv Q16 R17 Q17'."""
  colour = "B" if int(state.to_play) == go.BLACK else "W"
  visits = sum(c["visits"] for c in out["candidates"])
  best = out["candidates"][0] if out["candidates"] else {"pv": [out["action"]]}
  pv = " ".join(go.action_to_gtp(cfg, a) for a in best["pv"])
  return (f"move {int(state.move_count) + 1} ({colour}): {go.action_to_gtp(cfg, out['action'])} "
          f"after {seconds:.2f} s, {visits} visits, win rate {100 * win_rate(out['value']):.1f}% "
          f"| pv {pv}")


def _settled(cfg: go.GoConfig, state: go.GoState, out: Analysis, opponent_passed: bool) -> int:
  """The chosen action, unless it fills one of the mover's own eyes or is a pass that hands
  over points: then the most visited (or most likely) candidate that fills none of its eyes,
  or a neutral point worth filling (dame_to_fill), or a pass."""
  action = out["action"]
  allowed = sensible(cfg, state)
  if action != cfg.pass_action and allowed[action]:
    return action
  candidates = [c["action"] for c in out["candidates"]]
  behind = int(state.to_play) * go.host_score(cfg, state) < 0
  if action == cfg.pass_action and not behind:
    # A pass that does not lose the count: still, no neutral point is left to the opponent.
    dame = None if opponent_passed else dame_to_fill(cfg, state, candidates)
    return cfg.pass_action if dame is None else dame
  for candidate in candidates:
    if candidate != cfg.pass_action and allowed[candidate]:
      return candidate
  dame = dame_to_fill(cfg, state)
  if dame is not None:
    return dame
  if behind:
    press = pressing_move(cfg, state)
    if press is not None:
      return press
  return cfg.pass_action if action == cfg.pass_action or not behind else action


def _not_a_losing_pass(cfg: go.GoConfig, state: go.GoState, out: Analysis, behind: bool) -> int:
  """Without the endgame rules: the chosen action, unless it is a pass while the count is
  against the mover; then the most visited (or most likely) candidate that fills none of its
  own eyes, if any."""
  action = out["action"]
  if action != cfg.pass_action or not behind:
    return action
  allowed = sensible(cfg, state)
  for candidate in out["candidates"]:
    if candidate["action"] != cfg.pass_action and allowed[candidate["action"]]:
      return candidate["action"]
  return action


def pressing_move(cfg: go.GoConfig, state: go.GoState) -> int | None:
  """For a mover whom the count puts behind and whose search offers nothing to play: a
  sensible move on a liberty of the opponent's chain with the fewest liberties (more stones,
  then the smaller first point, first among equals), which captures it or leaves the new
  stone two liberties or more; else any sensible move that leaves it two or more; None where
  there is neither. Under area scoring a stone played inside either side's area costs no
  point, and a pass there hands the opponent a count it may end the game on."""
  board = np.asarray(state.board)
  me = int(state.to_play)
  chain = np.asarray(_chains(cfg, jnp.asarray(state.board)))
  neighbours = _neighbours(cfg.size)
  padded = np.append(board, 2)                      # off the board: 2
  liberties = {}                                    # chain -> its empty neighbours
  for point in np.flatnonzero(board == 0):
    for n in neighbours[point]:
      if padded[n] in (-1, 1):
        liberties.setdefault(int(chain[n]), set()).add(int(point))
  allowed = sensible(cfg, state)

  def keeps_two(point: int) -> bool:
    """Whether a stone of the mover on `point` captures, or its chain has two liberties."""
    own, libs = set(), {n for n in neighbours[point] if padded[n] == 0}
    for n in neighbours[point]:
      if padded[n] == me:
        own.add(int(chain[n]))
      elif padded[n] == -me and liberties[int(chain[n])] == {point}:
        return True
    for c in own:
      libs |= liberties[c]
    return len(libs - {point}) >= 2

  opponents = sorted({int(c) for c in chain[board == -me]},
                     key=lambda c: (len(liberties.get(c, ())), -int(np.sum(chain == c)), c))
  for c in opponents:
    for point in sorted(liberties.get(c, ())):
      if allowed[point] and keeps_two(point):
        return point
  for point in np.flatnonzero(allowed[:cfg.num_points]):
    if keeps_two(int(point)):
      return int(point)
  return None


_chains = jax.jit(go.chains, static_argnums=0)


@functools.lru_cache(maxsize=None)
def _neighbours(size: int) -> np.ndarray:
  return go.neighbour_table(size)


def dame_to_fill(cfg: go.GoConfig, state: go.GoState, prefer=()) -> int | None:
  """A neutral point (Tromp-Taylor owner: nobody) whose filling raises the mover's score,
  among legal points that leave the new stone's chain with two liberties or more and fill
  none of the mover's eyes: the first of `prefer` (the search's candidates) that is one, else
  the one that raises it most; None if no such point raises the score."""
  gain = np.asarray(_dame_gains(cfg, state))
  for action in prefer:
    if action < cfg.num_points and gain[action] > 0:
      return int(action)
  best = int(np.argmax(gain))
  return best if gain[best] > 0 else None


def _dame_gain(cfg: go.GoConfig, state: go.GoState, point) -> jax.Array:
  after = go.step(cfg, state, point)
  board = after.board.astype(jnp.int32)
  chain = after.chain.astype(jnp.int32)  # P on empty points
  low, high = go.liberty_range(cfg, board, chain)
  safe = low[chain[point]] < high[chain[point]]   # two liberties or more
  mover = state.to_play.astype(jnp.float32)
  return jnp.where(safe, mover * (go.score(cfg, after) - go.score(cfg, state)), 0.0)


@functools.partial(jax.jit, static_argnums=0)
def _dame_gains(cfg: go.GoConfig, state: go.GoState) -> jax.Array:
  """[P] the mover's score gain of filling each neutral point (0 where it may not)."""
  points = jnp.arange(cfg.num_points)
  neutral = go.ownership(cfg, state) == 0
  allowed = go.sensible_moves(cfg, state)[:cfg.num_points] & neutral
  gains = jax.vmap(lambda p: _dame_gain(cfg, state, p))(points)
  return jnp.where(allowed, gains, 0.0)


@functools.partial(jax.jit, static_argnums=(0, 2))
def _playout_wins(cfg: go.GoConfig, state: go.GoState, playouts: int, rng_key: jax.Array):
  states = jax.tree.map(lambda x: jnp.broadcast_to(x, (playouts,) + jnp.shape(x)), state)
  results = rollout.rollouts(cfg, rollout.uniform_logits(cfg), states, rng_key,
                             max_moves=2 * cfg.num_points)
  return jnp.mean(results > 0)


def playout_wins(cfg: go.GoConfig, state: go.GoState, playouts: int = PLAYOUTS) -> float:
  """The share of `playouts` games played out from `state` by random sensible moves (none
  filling an own eye; rollout.uniform_logits) that the player to move wins by Tromp-Taylor:
  a count that settles dead stones, as the board's own count does not. The same position
  gives the same figure (the key comes from its move count)."""
  key = jax.random.PRNGKey(int(state.move_count))
  return float(_playout_wins(cfg, jax.tree.map(jnp.asarray, state), playouts, key))


_sensible = jax.jit(go.sensible_moves, static_argnums=0)


def sensible(cfg: go.GoConfig, state: go.GoState) -> np.ndarray:
  """[A] bool: the legal moves that do not fill one of the mover's own eyes (go.sensible_moves)."""
  return np.asarray(_sensible(cfg, state))


def win_rate(value: float) -> float:
  """A value in [-1, 1] as a probability of winning."""
  return min(1.0, max(0.0, (value + 1.0) / 2.0)) if math.isfinite(value) else 0.5
