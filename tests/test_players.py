"""Players (agz_jax.players): load_player, the random player's moves, and the engine-side
move policy (pass, resign, time) on stand-in players, directly and through the GTP engine."""

import types

import jax
import numpy as np
import pytest

from agz_jax import go, gtp, players
from agz_jax.players import move_policy, timed_search

import helpers

CFG = go.GoConfig(size=9, komi=7.5, max_moves=4 * 81)
_legal = jax.jit(go.legal_actions, static_argnums=0)


class _Proposer:
  """A stand-in for a player that searches a fixed count (players.Player): proposes `action`
  (default: the first legal point) with `value`, then the given vertices as the next
  candidates; records the simulations and seconds it was given."""

  name = "proposer"
  sizes = (9,)
  planes = {"history": 8}
  simulations = 16
  timed_search = False

  def __init__(self, action=None, *vertices, value=0.0, value_scale=None):
    self.action, self.vertices, self.value = action, vertices, value
    self.value_scale = value_scale
    self.calls = []

  def prepare(self, cfg):
    del cfg

  def analyse(self, cfg, state, simulations=None, *, seconds=None):
    self.calls.append(simulations if seconds is None else ("seconds", seconds))
    first = int(np.argmax(np.asarray(_legal(cfg, state))))
    action = first if self.action is None else go.gtp_to_action(cfg, self.action)
    actions = [action] + [go.gtp_to_action(cfg, v) for v in self.vertices]
    out = {"action": action, "value": self.value,
           "candidates": [{"action": a, "visits": 10 - i, "value": self.value, "prior": 0.1,
                           "pv": [a]} for i, a in enumerate(actions)]}
    if self.value_scale is not None:
      out["value_scale"] = self.value_scale
    return out


def choose(player, state, cfg=CFG, *, opponent_passed=False, **settings):
  return players.choose_move(players.EngineSettings(**settings), player, cfg, state,
                             opponent_passed=opponent_passed)


def test_every_player_is_a_player(tmp_path):
  network = helpers.make_checkpoint(tmp_path)
  for player in (players.load_player("random"), players.load_player(network, simulations=0),
                 players.load_player(network, simulations=4, algorithm="puct"),
                 players.load_player(network, simulations=4, algorithm="gumbel"), _Proposer()):
    assert isinstance(player, players.Player), type(player).__name__
  searching = players.load_player(network, simulations=4, algorithm="puct")
  assert searching.timed_search and searching.simulations == 4
  assert not players.load_player("random").timed_search
  assert players.load_player(network, simulations=0).simulations == 0  # it does not search


# -- pass -------------------------------------------------------------------------------------

def test_pass_when_the_opponent_passed_and_the_score_favours_us():
  e5 = go.gtp_to_action(CFG, "E5")
  state = go.play(CFG, [e5, CFG.pass_action])  # B E5 owns the board: B+73.5, black to play
  player = _Proposer("D4")
  assert choose(player, state, opponent_passed=True, resign_threshold=0.0) == CFG.pass_action
  assert player.calls == []  # no search needed
  # Without the opponent's pass, or behind on the score, the player's move is played.
  assert choose(player, state, resign_threshold=0.0) == go.gtp_to_action(CFG, "D4")
  behind = go.GoConfig(size=9, komi=100.0, max_moves=4 * 81)
  state = go.play(behind, [e5, behind.pass_action])
  assert choose(player, state, behind, opponent_passed=True,
                resign_threshold=0.0) == go.gtp_to_action(behind, "D4")


def test_no_pass_while_behind_but_pass_when_only_an_own_eye_is_left():
  # Empty board, komi 7.5: black is behind, its proposed pass becomes the next candidate.
  assert choose(_Proposer("pass", "E5"), go.init(CFG), resign_threshold=0.0) == 40
  ahead = go.GoConfig(size=9, komi=-10.0, max_moves=4 * 81)
  # Ahead by komi on an empty board, a pass would let the opponent's first stone take every
  # point: the search's next candidate, a neutral point, is played instead; once black's
  # stone owns the board, the pass stands.
  assert choose(_Proposer("pass", "E5"), go.init(ahead), ahead, resign_threshold=0.0) == 40
  owned = go.init(ahead, black=[40], to_play=go.BLACK)
  assert choose(_Proposer("pass", "E5"), owned, ahead,
                resign_threshold=0.0) == ahead.pass_action
  # Black holds columns A and B but for its eye at A1, white the rest: no point is neutral.
  # Behind, and the only other candidate fills the eye: not a pass, which white would answer
  # with a pass and a won count, but a liberty of white's wall (pressing_move), column D.
  state = go.init(CFG, black=[go.gtp_to_action(CFG, f"{c}{r}") for c in "AB" for r in range(1, 10)
                              if (c, r) != ("A", 1)],
                  white=[go.gtp_to_action(CFG, f"C{r}") for r in range(1, 10)])
  move = choose(_Proposer("pass", "A1"), state, resign_threshold=0.0)
  assert move == move_policy.pressing_move(CFG, state)
  assert go.action_to_gtp(CFG, move)[0] == "D"
  assert choose(_Proposer("pass", "A1", "E5"), state,
                resign_threshold=0.0) == go.gtp_to_action(CFG, "E5")


def _walls(komi, fill=()):
  """Black holds columns A-D, white F-J; column E is neutral (the vertices in `fill` black)."""
  cfg = go.GoConfig(size=9, komi=komi, max_moves=4 * 81)
  black = [go.gtp_to_action(cfg, f"D{r}") for r in range(1, 10)]
  white = [go.gtp_to_action(cfg, f"F{r}") for r in range(1, 10)]
  return cfg, go.init(cfg, black=black + [go.gtp_to_action(cfg, v) for v in fill], white=white)


def test_a_pass_that_would_leave_neutral_points_fills_one_instead():
  cfg, state = _walls(komi=-3.5)  # black leads 36 - 36 + 3.5: a pass would not lose
  column_e = {go.gtp_to_action(cfg, f"E{r}") for r in range(1, 10)}
  move = choose(_Proposer("pass"), state, cfg, resign_threshold=0.0)
  assert move in column_e  # one more point for black
  assert move_policy.dame_to_fill(cfg, state) == move
  # Once every neutral point is black's, the pass stands; after the opponent's pass the game
  # ends at once, won, without a search.
  cfg, filled = _walls(komi=-3.5, fill=[f"E{r}" for r in range(1, 10)])
  assert move_policy.dame_to_fill(cfg, filled) is None
  assert choose(_Proposer("pass"), filled, cfg, resign_threshold=0.0) == cfg.pass_action
  assert choose(_Proposer("pass"), state, cfg, opponent_passed=True,
                resign_threshold=0.0) == cfg.pass_action


def test_a_neutral_point_is_filled_only_where_the_new_stone_keeps_two_liberties():
  # Black D5 is surrounded on three sides; a black stone at E5 (white E4 and E6) would
  # leave the pair with F5 alone: in atari. Elsewhere a black stone gains a point.
  vertices = lambda *vs: [go.gtp_to_action(CFG, v) for v in vs]
  state = go.init(CFG, black=vertices("D5", "H8"), white=vertices("C5", "D4", "D6", "E4", "E6"))
  gains = np.asarray(move_policy._dame_gains(CFG, state))  # pylint: disable=protected-access
  assert gains[go.gtp_to_action(CFG, "E5")] == 0
  assert gains[go.gtp_to_action(CFG, "A1")] == 1 and gains[go.gtp_to_action(CFG, "H9")] == 1
  assert gains[go.gtp_to_action(CFG, "H8")] == 0  # occupied


def test_behind_with_nothing_searched_to_play_the_engine_takes_a_liberty_instead_of_passing():
  # Four white stones inside black's area share one liberty, B5, which the board's count gives
  # white: black is 8.5 behind by it, 1.5 ahead once B5 captures them. A search that offers
  # only a pass (no neutral point to fill either) used to pass, and lose when white passed too.
  cfg = go.GoConfig(size=9, komi=7.5, max_moves=4 * 81)
  inside = {"B4", "A5", "C5", "B6"}
  points = lambda columns, skip: [go.gtp_to_action(cfg, f"{c}{r}") for c in columns
                                  for r in range(1, 10) if f"{c}{r}" not in skip]
  black = points("ABCDE", {"A1", "C1", "A9", "C9", "B5"} | inside)
  white = points("FGHJ", {"G1", "J1", "G9", "J9"}) + [go.gtp_to_action(cfg, v) for v in inside]
  state = go.init(cfg, black=black, white=white).replace(move_count=np.int32(60))
  assert go.host_score(cfg, state) == -8.5 and move_policy.dame_to_fill(cfg, state) is None
  b5 = go.gtp_to_action(cfg, "B5")
  assert move_policy.pressing_move(cfg, state) == b5
  assert choose(_Proposer("pass"), state, cfg, resign_threshold=0.0) == b5
  assert go.host_score(cfg, go.step(cfg, state, b5)) == 1.5
  # White, ahead, passes; with no stone of the opponent on the board, a sensible move that keeps
  # two liberties is still found, and none on a board where every point is an own eye.
  assert choose(_Proposer("pass"), state.replace(to_play=np.int8(go.WHITE)), cfg,
                resign_threshold=0.0) == cfg.pass_action
  empty = go.init(CFG)
  assert move_policy.pressing_move(CFG, empty) is not None
  cfg, walls = _walls(komi=7.5, fill=[f"E{r}" for r in range(1, 10)])
  assert move_policy.pressing_move(cfg, walls) is not None  # white's wall, B's area: both sensible


def test_no_own_eye_is_filled_while_another_candidate_fills_none():
  state = go.init(CFG, black=[go.gtp_to_action(CFG, v) for v in ("B1", "A2", "B2")],
                  white=[go.gtp_to_action(CFG, v) for v in ("H8", "H7", "H6")])
  assert choose(_Proposer("A1", "C3"), state, resign_threshold=0.0) == go.gtp_to_action(CFG, "C3")
  assert choose(_Proposer("C3", "A1"), state, resign_threshold=0.0) == go.gtp_to_action(CFG, "C3")


def test_without_the_endgame_rules_the_engine_plays_as_before_them():
  """endgame=False (--no-endgame-rules): a pass that leaves dame stands, an own eye may be
  filled, the win rate alone resigns; a pass while behind is still replaced."""
  cfg, state = _walls(komi=-3.5)                           # ahead, column E neutral
  assert choose(_Proposer("pass"), state, cfg, resign_threshold=0.0,
                endgame=False) == cfg.pass_action
  eye = go.init(CFG, black=[go.gtp_to_action(CFG, v) for v in ("B1", "A2", "B2")],
                white=[go.gtp_to_action(CFG, v) for v in ("H8", "H7", "H6")])
  assert choose(_Proposer("A1", "C3"), eye, resign_threshold=0.0,
                endgame=False) == go.gtp_to_action(CFG, "A1")
  ahead = go.init(CFG, black=[go.gtp_to_action(CFG, "E5")]).replace(move_count=np.int32(40))
  assert choose(_Proposer("D4", value=-0.95), ahead, endgame=False) is None
  assert choose(_Proposer("D4", value=-0.95), ahead) == go.gtp_to_action(CFG, "D4")
  assert choose(_Proposer("pass", "E5"), go.init(CFG), resign_threshold=0.0,
                endgame=False) == 40                       # behind on komi: no pass
  engine = gtp.Engine(_Proposer("pass"), komi=-3.5, resign_threshold=0.0, endgame=False)
  assert engine.settings.endgame is False


# -- resign -----------------------------------------------------------------------------------

def test_resign_below_the_threshold_only_after_the_minimum_moves():
  losing = _Proposer("A5", value=-0.95)  # win rate 2.5%
  cfg, lost = _dead_white_stone(komi=10.5)  # settled: every playout loses
  assert move_policy.playout_wins(cfg, lost) < move_policy.RESIGN_PLAYOUT_WINS
  a5 = go.gtp_to_action(cfg, "A5")
  at = lambda moves: lost.replace(move_count=np.int32(moves))
  assert choose(losing, at(3), cfg, resign_min_moves=4) == a5
  assert choose(losing, at(4), cfg, resign_min_moves=4) is None
  assert choose(losing, at(4), cfg, resign_min_moves=4, resign_threshold=0.0) == a5  # never
  assert choose(_Proposer("A5", value=-0.8), at(4), cfg, resign_min_moves=4) == a5   # 10%
  # By default not before half the board's points (40 moves on 9x9).
  assert choose(losing, at(39), cfg) == a5
  assert choose(losing, at(40), cfg) is None


def test_a_scaled_value_resigns_as_the_networks_own_and_a_scale_of_0_leaves_it_to_the_count():
  cfg, lost = _dead_white_stone(komi=10.5)      # every playout lost
  won_cfg, won = _dead_white_stone(komi=7.5)    # every playout won
  a5 = go.gtp_to_action(cfg, "A5")
  # -0.95 scaled by 0.5 is -0.475: a win rate of 26%, but the network's own 2.5%.
  assert choose(_Proposer("A5", value=-0.475, value_scale=0.5), lost, cfg) is None
  assert choose(_Proposer("A5", value=-0.475), lost, cfg) == a5              # read as it is
  assert choose(_Proposer("A5", value=-0.4, value_scale=0.5), lost, cfg) == a5   # 10%
  # Scale 0: whatever the searched value, the count is the win rate (0% and 100% here).
  assert choose(_Proposer("A5", value=0.0, value_scale=0.0), lost, cfg) is None
  assert choose(_Proposer("A5", value=-1.0, value_scale=0.0), won, won_cfg) == a5
  assert choose(_Proposer("A5", value=0.0, value_scale=0.0), lost, cfg,
                resign_threshold=0.0) == a5     # a threshold of 0 never resigns
  assert choose(_Proposer("A5", value=0.0, value_scale=0.0), lost, cfg, endgame=False) == a5


def test_a_searching_player_reports_the_scale_its_search_put_on_the_value(tmp_path):
  network = helpers.make_checkpoint(tmp_path)
  player = players.load_player(network, simulations=4, algorithm="puct",
                               search_settings={"value_scale": (1.0, 0.25),
                                                "value_scale_moves": 2})
  cfg = go.GoConfig(size=9, komi=7.5)
  start = go.init(cfg)
  assert player.analyse(cfg, start)["value_scale"] == 1.0
  later = go.play(cfg, [go.gtp_to_action(cfg, v) for v in ("C3", "G7", "C7")])
  assert player.analyse(cfg, later)["value_scale"] == 0.25
  plain = players.load_player(network, simulations=4, algorithm="puct")
  assert "value_scale" not in plain.analyse(cfg, later)


def _dead_white_stone(komi):
  """A settled board at move 60: black holds columns A-E (eyes A1, C1, A9, C9), white F-J (eyes
  G1, J1, G9, J9), and a white stone at B5 inside black's area has one liberty, A5, where white may not
  play (suicide): it is dead, but the board's own count takes it, and A5, from black."""
  cfg = go.GoConfig(size=9, komi=komi, max_moves=4 * 81)
  points = lambda columns, skip: [go.gtp_to_action(cfg, f"{c}{r}") for c in columns
                                  for r in range(1, 10) if f"{c}{r}" not in skip]
  black = points("ABCDE", {"A1", "C1", "A9", "C9", "A5", "B5"})
  white = points("FGHJ", {"G1", "J1", "G9", "J9"}) + [go.gtp_to_action(cfg, "B5")]
  return cfg, go.init(cfg, black=black, white=white).replace(move_count=np.int32(60))


def test_a_dead_stone_counted_as_alive_does_not_make_the_engine_resign():
  # Black is 1.5 behind by the board's count, 1.5 ahead once B5 is taken; every playout takes
  # it. A win rate of 2.5% and the board's count agreed on resigning such games; playouts do not.
  cfg, state = _dead_white_stone(komi=7.5)
  assert go.host_score(cfg, state) == -1.5
  assert move_policy.playout_wins(cfg, state) == 1.0
  a5 = go.gtp_to_action(cfg, "A5")
  assert choose(_Proposer("A5", value=-0.95), state, cfg) == a5
  assert go.host_score(cfg, go.step(cfg, state, a5)) == 1.5
  # Three points more komi and the same position is lost: the engine resigns.
  cfg, state = _dead_white_stone(komi=10.5)
  assert move_policy.playout_wins(cfg, state) == 0.0
  assert choose(_Proposer("A5", value=-0.95), state, cfg) is None


def test_engine_resigns_through_gtp():
  # White gives black 100 points of komi: every playout is lost, and the count agrees.
  engine = gtp.Engine(_Proposer("E5", value=-0.95), resign_min_moves=1, komi=-100.0)
  assert engine.handle("genmove b") == ("", True, "E5")  # move 0: too early
  assert engine.handle("genmove w") == ("", True, "resign")
  assert len(engine.moves) == 1  # a resignation plays nothing


def test_engine_passes_after_the_opponent_passed_when_ahead():
  engine = gtp.Engine(_Proposer("D4"), resign_threshold=0.0)
  for command in ("play b E5", "play w pass"):
    assert engine.handle(command)[1], command
  assert engine.handle("genmove b")[2] == "pass"
  engine = gtp.Engine(_Proposer("D4"), komi=100.0, resign_threshold=0.0)
  for command in ("play b E5", "play w pass"):
    assert engine.handle(command)[1], command
  assert engine.handle("genmove b")[2] == "D4"  # behind: play on


# -- time -------------------------------------------------------------------------------------

def test_the_engine_gives_the_player_its_seconds_per_move_or_a_share_of_the_time_left():
  settings = players.EngineSettings(simulations=16, seconds_per_move=1.0)
  state = go.init(CFG)
  assert settings.seconds(CFG, state) == 1.0
  # 10 s left over max(10, 81 // 3 - 0) = 27 moves; at move 40, over max(10, 27 - 20) = 10.
  assert settings.seconds(CFG, state, time_left=10.0) == pytest.approx(10 / 27)
  assert settings.seconds(CFG, state.replace(move_count=np.int32(40)),
                          time_left=5.0) == pytest.approx(0.5)
  assert settings.seconds(CFG, state, time_left=1e6) == 1.0  # the smaller of the two
  assert players.EngineSettings(simulations=16).seconds(CFG, state) is None
  assert players.EngineSettings().seconds(CFG, state, time_left=2.7) == pytest.approx(0.1)


def test_a_search_clock_fits_powers_of_two_and_ignores_compiling_counts():
  clock = players.SearchClock()
  for _ in range(players.SearchClock.WARM_AFTER):
    clock.record(8, 30.0)  # the first searches at a count may compile: not learned
    assert clock.seconds_per_simulation is None
  clock.record(8, 0.016)
  assert clock.seconds_per_simulation == pytest.approx(0.002)
  clock.record(128, 128.0)  # a count never searched before: compiling, not learned
  assert clock.seconds_per_simulation == pytest.approx(0.002)
  clock.seconds_per_simulation = 0.01
  assert clock.fitting(1.0) == 64          # 100 fit: the power of two below
  assert clock.fitting(10 / 27) == 32      # 37 fit
  assert clock.fitting(0.01) == 8          # at least the floor
  assert clock.fitting(1e6) == 4096 and clock.fitting(1e6, most=512) == 512
  clock.seconds_per_simulation = 0.6       # AlphaGo's: a simulation plays whole games
  assert clock.fitting(1.0, floor=1) == 1 and clock.fitting(1.0) == 8


def _gumbel_player(simulations=64, max_simulations=512, seconds_per_simulation=0.002):
  """A Gumbel SearchPlayer whose searches take `seconds_per_simulation` each, but the first
  two at a count (compiling) take 30 s; records the counts searched."""
  player = players.SearchPlayer.__new__(players.SearchPlayer)
  player.network = types.SimpleNamespace(name="gumbel", sizes=(9,), planes={"history": 8},
                                         game=types.SimpleNamespace(module=go))
  player.simulations, player.max_simulations = simulations, max_simulations
  player.clock, player._timed, player.calls = players.SearchClock(), None, []  # pylint: disable=protected-access
  seen = {}

  def search(game, state, count):
    player.calls.append(count)
    seen[count] = seen.get(count, 0) + 1
    player.clock.record(count, 30.0 if seen[count] <= 2 else seconds_per_simulation * count)
    first = int(np.argmax(np.asarray(_legal(game.cfg, state))))
    return {"action": first, "value": 0.0, "candidates": [
        {"action": first, "visits": count, "value": 0.0, "prior": 1.0, "pv": [first]}]}
  player._search = search  # pylint: disable=protected-access
  return player


def test_a_gumbel_player_learns_its_clock_before_its_first_timed_move():
  player = _gumbel_player(seconds_per_simulation=0.002)
  engine = gtp.Engine(player, simulations=8, seconds_per_move=0.5, resign_threshold=0.0)
  assert engine.handle("genmove b")[1]
  # The first two searches at a count may compile: the third is the first one timed, and
  # then 0.5 s / 0.002 s = 250 simulations fit. The player times its searches before the
  # first move (their results dropped), so that move already searches 128.
  assert player.calls == [8, 8, 8, 128]
  for _ in range(3):
    assert engine.handle("genmove w")[1] and engine.handle("genmove b")[1]
  assert player.calls[4:] == [128] * 6  # the third search at 128 is learned: 0.002 s again
  assert engine.handle("time_left b 2 0")[1]
  assert engine.handle("genmove b")[1]
  assert player.calls[-1] == 32  # 2 s over 27 - 8 // 2 = 23 moves: 43 simulations fit


def test_a_time_budget_without_a_simulation_count_starts_from_the_player_s_own():
  """`--seconds-per-move` alone: the player's own count is timed like any other, so the
  first move already gets the simulations that fit (it once stayed at the default)."""
  player = _gumbel_player(simulations=64, max_simulations=512, seconds_per_simulation=0.001)
  engine = gtp.Engine(player, seconds_per_move=0.5, resign_threshold=0.0)
  assert engine.handle("genmove b")[1]
  assert player.calls == [64, 64, 64, 256]   # timed before the first move: 500 fit
  assert player.simulations_for(100.0) == 512 and player.simulations_for(None) == 64


class _TimedProposer(_Proposer):
  """A player that searches until its time is up (`timed_search`: the AlphaGo player's and
  the PUCT search player's way)."""

  timed_search = True


def test_the_engine_gives_its_player_seconds_or_its_simulation_count():
  player = _TimedProposer()
  engine = gtp.Engine(player, simulations=8, seconds_per_move=0.5, resign_threshold=0.0)
  assert engine.handle("genmove b")[1]
  assert player.calls == [("seconds", 0.5)]
  assert engine.handle("time_left w 2.7 0")[1]
  assert engine.handle("genmove w")[1]
  # 2.7 s over max(10, 81 // 3 - 1 // 2) = 27 moves.
  assert player.calls[-1][0] == "seconds" and player.calls[-1][1] == pytest.approx(0.1)
  plain = gtp.Engine(player, simulations=8, resign_threshold=0.0)  # no time: simulations
  assert plain.handle("genmove b")[1] and player.calls[-1] == 8


def test_the_engine_logs_a_line_on_each_search():
  lines = []
  engine = gtp.Engine(_Proposer("E5", "C3", value=0.5), simulations=8, resign_threshold=0.0,
                      log=lines.append)
  assert engine.handle("play b D4")[1] and engine.handle("genmove w")[2] == "E5"
  assert len(lines) == 1
  head, pv = lines[0].split(" | pv ")
  assert head.startswith("move 2 (W): E5 after ") and head.endswith(" s, 19 visits, win rate 75.0%")
  assert pv == "E5"  # the most visited candidate's line


# -- players ----------------------------------------------------------------------------------

def test_random_move_plays_sensible_moves_and_passes_when_none_is_left():
  cfg = go.GoConfig(size=5, komi=0.5)
  move = jax.jit(players.random_move, static_argnums=0)
  # Black everywhere but two single-point eyes: every legal point is an own eye.
  eyes = [0, 24]
  full = go.init(cfg, black=[p for p in range(25) if p not in eyes], to_play=go.BLACK)
  keys = jax.random.split(jax.random.PRNGKey(0), 20)
  assert {int(move(cfg, full, k)) for k in keys} == {cfg.pass_action}
  state = go.play(cfg, [12, 6, 7])
  allowed = np.asarray(go.sensible_moves(cfg, state))
  chosen = {int(move(cfg, state, k)) for k in keys}
  assert len(chosen) > 5 and all(allowed[a] for a in chosen)


@pytest.mark.slow
def test_a_puct_search_player_grows_a_tree_per_device_or_as_many_as_asked(tmp_path):
  """Root parallelism: the trees' root visits add up; one tree per device by default."""
  network = players.Network.from_checkpoint(helpers.make_checkpoint(tmp_path))
  cfg = go.GoConfig(size=9, komi=7.5, **network.planes)

  def searcher(**kwargs):
    return players.SearchPlayer(network, simulations=4, algorithm="puct", considered_actions=16,
                                tree_nodes=32, **kwargs)
  one = searcher()
  devices = jax.local_device_count()
  assert one.trees == devices
  assert one.name == "agz_jax-1x8" + (f"-trees{devices}" if devices > 1 else "")
  three = searcher(trees=3)
  assert three.trees == 3 and three.name == "agz_jax-1x8-trees3"
  out = three.analyse(cfg, go.init(cfg))
  assert sum(c["visits"] for c in out["candidates"]) == 3 * 4
  visits = [c["visits"] for c in out["candidates"]]
  assert visits == sorted(visits, reverse=True) and out["action"] == out["candidates"][0]["action"]
  with pytest.raises(ValueError, match="only the PUCT search grows several trees"):
    players.SearchPlayer(network, simulations=4, algorithm="gumbel", considered_actions=16,
                         trees=2)


@pytest.mark.slow
def test_a_puct_search_player_evaluates_several_leaves_of_a_tree_at_once(tmp_path):
  """search.leaf_batch under a player: a step of 4 leaves of one tree;
  the counts as asked, or fewer where a step chose a leaf twice (kept once)."""
  path = helpers.make_checkpoint(tmp_path)
  network = players.Network.from_checkpoint(path)
  cfg = go.GoConfig(size=9, komi=7.5, **network.planes)
  batched = players.SearchPlayer(network, simulations=10, algorithm="puct", considered_actions=16,
                                 tree_nodes=48, trees=1, leaves=4)
  assert batched.name == "agz_jax-1x8-leaves4"
  out = batched.analyse(cfg, go.init(cfg))
  visits = [c["visits"] for c in out["candidates"]]
  assert 6 <= sum(visits) <= 10 and len(visits) >= 3  # the virtual loss spread them
  timed = batched.analyse(cfg, go.play(cfg, [out["action"]]), seconds=0.5)
  assert sum(c["visits"] for c in timed["candidates"]) > 0
  with pytest.raises(ValueError, match="a setting of the PUCT search"):
    players.SearchPlayer(network, simulations=4, algorithm="gumbel", considered_actions=16,
                         leaves=4)
  with pytest.raises(ValueError, match="at least one leaf"):
    players.SearchPlayer(network, simulations=4, algorithm="puct", considered_actions=16,
                         leaves=0)
  with pytest.raises(ValueError, match=r"search settings \(leaves\) are for a player"):
    players.load_player(path, policy_only=True, leaves=8)


def test_a_move_is_decided_once_the_time_left_cannot_overtake_it():
  decided = timed_search.decided
  assert decided([10, 4, 0], visits_left=5)        # 6 ahead, 5 visits left
  assert not decided([10, 4, 0], visits_left=6)    # a tie is not a lead: merge_trees' argmax
  assert not decided([10, 4, 0], visits_left=6.5)  # could still take the first
  assert decided([[6, 1, 0], [6, 2, 1]], visits_left=8)  # two trees: summed, 12 against 3
  # Summed 6, 8, 1: the second move leads, by 2 (the first tree's leader is not the search's).
  assert decided([[6, 1, 0], [0, 7, 1]], visits_left=1.5)
  assert not decided([[6, 1, 0], [0, 7, 1]], visits_left=2)
  assert decided([3], visits_left=2) and not decided([0, 0], visits_left=0)


@pytest.mark.slow
def test_a_timed_search_stops_once_its_move_is_decided(tmp_path, monkeypatch):
  """Black's one legal move is a pass (every empty point an eye of white's one group, nine of
  them): with stop_when_decided the search ends once the pass leads by more visits than the
  time left could bring, about halfway, and plays it; without, it spends its time. The search
  runs on a clock that moves only while it grows, a fixed time per simulation, so that what is
  checked is the decision and not the machine's load."""
  network = players.Network.from_checkpoint(helpers.make_checkpoint(tmp_path))
  cfg = go.GoConfig(size=9, komi=7.5, **network.planes)
  eyes = [9 * r + c for r in (1, 4, 7) for c in (1, 4, 7)]
  state = go.init(cfg, white=[p for p in range(81) if p not in eyes], to_play=go.BLACK)
  assert np.flatnonzero(np.asarray(go.legal_actions(cfg, state))).tolist() == [cfg.pass_action]
  seconds, per_simulation = 4.0, 0.002
  clock = [0.0]
  grow = timed_search._grow

  def timed_grow(*args):
    out = grow(*args)
    clock[0] += per_simulation * int(args[-1])
    return out

  monkeypatch.setattr(timed_search, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
  monkeypatch.setattr(timed_search, "_grow", timed_grow)

  def timed(stop):
    player = players.SearchPlayer(network, simulations=4, algorithm="puct", considered_actions=16,
                                  tree_nodes=1 << 13, trees=1, stop_when_decided=stop)
    player.analyse(cfg, go.init(cfg), seconds=0.5)  # compiled, and its clock known
    began = clock[0]
    out = player.analyse(cfg, state, seconds=seconds)
    return out, clock[0] - began

  out, took = timed(True)
  assert out["action"] == cfg.pass_action and 0.5 * seconds < took < 0.7 * seconds, took
  visits = out["candidates"][0]["visits"]
  assert [c["action"] for c in out["candidates"]] == [cfg.pass_action] and visits > 1
  out, took = timed(False)
  assert out["action"] == cfg.pass_action and took >= seconds - per_simulation, took
  assert out["candidates"][0]["visits"] > 1.5 * visits
  with pytest.raises(ValueError, match="a setting of the PUCT search under a clock"):
    players.SearchPlayer(network, simulations=4, algorithm="gumbel", considered_actions=16,
                         stop_when_decided=True)
  with pytest.raises(ValueError, match=r"search settings \(stop_when_decided\) are for a player"):
    players.load_player(helpers.make_checkpoint(tmp_path), policy_only=True,
                        stop_when_decided=True)


@pytest.mark.slow
@pytest.mark.subprocess
def test_the_gtp_engine_searches_a_tree_on_each_cpu_device(tmp_path):
  replies = helpers.gtp_on_cpu_devices(
      ["--checkpoint", helpers.make_checkpoint(tmp_path), "--algorithm", "puct", "--simulations",
       "2"], 2, "version\ngenmove b\nquit\n")
  assert replies[0].endswith("-trees2)") and replies[1].startswith("= "), replies


def test_load_player_builds_each_kind(tmp_path):
  assert isinstance(players.load_player("random", seed=3), players.RandomPlayer)
  network = helpers.make_checkpoint(tmp_path)
  searcher = players.load_player(network, simulations=8)
  assert isinstance(searcher, players.SearchPlayer) and searcher.simulations == 8
  assert searcher.algorithm == searcher.config.search.algorithm
  assert searcher.has_value and searcher.sizes == (9,) and searcher.name == "agz_jax-1x8"
  assert searcher.planes == players.input_planes(searcher.config)
  with pytest.raises(ValueError, match="at least one simulation"):
    searcher.analyse(CFG, go.init(CFG), 0)
  for kwargs in ({"policy_only": True}, {"simulations": 0}):
    policy = players.load_player(network, **kwargs)
    assert isinstance(policy, players.PolicyPlayer) and policy.simulations == 0
    cfg = go.GoConfig(size=9, komi=7.5, **policy.planes)
    out = policy.analyse(cfg, go.init(cfg))
    prior, _ = policy.policy(cfg, go.init(cfg))
    assert out["action"] == int(np.argmax(prior)) and out["candidates"][0]["visits"] == 0
  with pytest.raises(FileNotFoundError):
    players.load_player(str(tmp_path / "missing"))
