"""Players (agz_jax.players): load_player, the random player's moves, and the engine-side
move policy (pass, resign, time) on stand-in players, directly and through the GTP engine."""

import types

import jax
import numpy as np
import pytest

from agz_jax import go, gtp, players
from agz_jax.players import move_policy

import helpers

CFG = go.GoConfig(size=9, komi=7.5, max_moves=4 * 81)
_legal = jax.jit(go.legal_actions, static_argnums=0)


class _Proposer:
  """A stand-in for SearchPlayer: proposes `action` (default: the first legal point) with
  `value`, then the given vertices as the next candidates; records the simulations asked for."""

  name = "proposer"
  sizes = (9,)
  planes = {"history": 8}

  def __init__(self, action=None, *vertices, value=0.0, seconds_per_simulation=0.0, clock=None):
    self.action, self.vertices, self.value = action, vertices, value
    self.seconds_per_simulation, self.clock = seconds_per_simulation, clock
    self.calls = []

  def analyse(self, cfg, state, simulations=None):
    self.calls.append(simulations)
    if self.clock is not None:
      self.clock.now += self.seconds_per_simulation * (simulations or 0)
    first = int(np.argmax(np.asarray(_legal(cfg, state))))
    action = first if self.action is None else go.gtp_to_action(cfg, self.action)
    actions = [action] + [go.gtp_to_action(cfg, v) for v in self.vertices]
    return {"action": action, "value": self.value,
            "candidates": [{"action": a, "visits": 10 - i, "value": self.value, "prior": 0.1,
                            "pv": [a]} for i, a in enumerate(actions)]}


def choose(player, state, cfg=CFG, *, opponent_passed=False, **rules):
  return players.choose_move(players.MovePolicy(**rules), player, cfg, state,
                             opponent_passed=opponent_passed, clock=players.SearchClock())


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
  # Behind, but the only other candidate fills the eye: pass.
  state = go.init(CFG, black=[go.gtp_to_action(CFG, f"{c}{r}") for c in "AB" for r in range(1, 10)
                              if (c, r) != ("A", 1)],
                  white=[go.gtp_to_action(CFG, f"C{r}") for r in range(1, 10)])
  assert choose(_Proposer("pass", "A1"), state, resign_threshold=0.0) == CFG.pass_action
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


def test_no_own_eye_is_filled_while_another_candidate_fills_none():
  state = go.init(CFG, black=[go.gtp_to_action(CFG, v) for v in ("B1", "A2", "B2")],
                  white=[go.gtp_to_action(CFG, v) for v in ("H8", "H7", "H6")])
  assert choose(_Proposer("A1", "C3"), state, resign_threshold=0.0) == go.gtp_to_action(CFG, "C3")
  assert choose(_Proposer("C3", "A1"), state, resign_threshold=0.0) == go.gtp_to_action(CFG, "C3")


# -- resign -----------------------------------------------------------------------------------

def test_resign_below_the_threshold_only_after_the_minimum_moves():
  losing = _Proposer("E5", value=-0.95)  # win rate 2.5%
  states = [go.init(CFG)]
  for vertex in ("A1", "J9", "A9", "J1"):
    states.append(go.play(CFG, [go.gtp_to_action(CFG, vertex)], states[-1]))
  assert choose(losing, states[3], resign_min_moves=4) == 40
  assert choose(losing, states[4], resign_min_moves=4) is None
  assert choose(losing, states[4], resign_min_moves=4, resign_threshold=0.0) == 40  # never
  assert choose(_Proposer("E5", value=-0.8), states[4], resign_min_moves=4) == 40   # 10%
  # By default not before half the board's points (40 moves on 9x9).
  assert choose(losing, states[4]) == 40
  late = go.init(CFG).replace(move_count=np.int32(40))
  assert choose(losing, late) is None
  # Only where the Tromp-Taylor count agrees: black owning the board plays on.
  ahead = go.init(CFG, black=[go.gtp_to_action(CFG, "E5")]).replace(move_count=np.int32(40))
  assert choose(_Proposer("D4", value=-0.95), ahead) == go.gtp_to_action(CFG, "D4")


def test_engine_resigns_through_gtp():
  engine = gtp.Engine(_Proposer("E5", value=-0.95), resign_min_moves=1)
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

def test_simulations_follow_the_time():
  rules = players.MovePolicy(simulations=16, seconds_per_move=1.0)
  clock = players.SearchClock()
  state = go.init(CFG)
  assert clock.simulations(rules, CFG, state) == 16  # nothing measured yet
  clock.seconds_per_simulation = 0.01
  assert clock.simulations(rules, CFG, state) == 64  # 100 fit: the power of two below
  # 10 s left over max(10, 81 // 3 - 0) = 27 moves: 0.37 s, 37 simulations.
  assert clock.simulations(rules, CFG, state, time_left=10.0) == 32
  assert clock.simulations(rules, CFG, state, time_left=0.01) == 8       # at least 8
  assert clock.simulations(players.MovePolicy(seconds_per_move=1e6), CFG, state) == 4096
  assert clock.simulations(players.MovePolicy(simulations=16), CFG, state) == 16  # no budget
  clock.seconds_per_simulation = 0.6  # AlphaGo's: a simulation plays whole games
  assert clock.simulations(rules, CFG, state, floor=1) == 1
  assert clock.simulations(rules, CFG, state) == 8


def test_engine_times_its_searches(monkeypatch):
  fake = types.SimpleNamespace(now=0.0)
  monkeypatch.setattr(move_policy, "time", types.SimpleNamespace(perf_counter=lambda: fake.now))
  player = _Proposer(seconds_per_simulation=0.002, clock=fake)
  engine = gtp.Engine(player, simulations=8, seconds_per_move=0.5, resign_threshold=0.0)
  assert engine.handle("genmove b")[1]
  # The first two searches at a count may compile: the third is the first one timed, and
  # then 0.5 s / 0.002 s = 250 simulations fit. The clock learns that before the first move
  # (searches whose results are dropped), so that move already searches 128.
  assert player.calls == [8, 8, 8, 128]
  for _ in range(3):
    assert engine.handle("genmove w")[1] and engine.handle("genmove b")[1]
  assert player.calls[4:] == [128] * 6
  assert engine.handle("time_left b 2 0")[1]
  assert engine.handle("genmove b")[1]
  assert player.calls[-1] == 32  # 2 s over 27 - 8 // 2 = 23 moves: 43 simulations fit


def test_a_time_budget_without_a_simulation_count_starts_from_the_player_s_own(monkeypatch):
  """`--seconds-per-move` alone: the player's default count is timed like any other, so the
  clock soon gives the search the simulations that fit (it once stayed at the default)."""
  fake = types.SimpleNamespace(now=0.0)
  monkeypatch.setattr(move_policy, "time", types.SimpleNamespace(perf_counter=lambda: fake.now))

  class Default(_Proposer):
    simulations = 64

    def analyse(self, cfg, state, simulations=None):
      return super().analyse(cfg, state, self.simulations if simulations is None else simulations)

  player = Default(seconds_per_simulation=0.001, clock=fake)
  engine = gtp.Engine(player, seconds_per_move=0.5, resign_threshold=0.0)
  assert engine.handle("genmove b")[1]
  assert player.calls == [64, 64, 64, 256]   # timed before the first move: 500 fit


def test_a_compiling_search_does_not_set_the_clock(monkeypatch):
  fake = types.SimpleNamespace(now=0.0)
  monkeypatch.setattr(move_policy, "time", types.SimpleNamespace(perf_counter=lambda: fake.now))
  player = _Proposer(seconds_per_simulation=0.002, clock=fake)
  clock = players.SearchClock()
  rules = players.MovePolicy(simulations=8, seconds_per_move=0.5)
  state = go.init(CFG)
  for _ in range(3):
    clock.analyse(player, CFG, state, 8)
  assert clock.seconds_per_simulation == pytest.approx(0.002)
  player.seconds_per_simulation = 1.0  # a count never searched before: compiling, 128 s
  clock.analyse(player, CFG, state, clock.simulations(rules, CFG, state))
  assert player.calls[-1] == 128 and clock.seconds_per_simulation == pytest.approx(0.002)


def test_a_gumbel_search_player_sizes_its_timed_searches_by_the_engines_clock():
  """A Gumbel SearchPlayer given seconds (the web page's Dots and Boxes) learns a simulation's
  time as the GTP engine does: not from the first searches at a count, which may compile."""
  player = players.SearchPlayer.__new__(players.SearchPlayer)
  player.simulations, player.max_simulations, player.clock = 64, 512, players.SearchClock()
  player._timed = None  # pylint: disable=protected-access
  for _ in range(players.SearchClock.WARM_AFTER):
    player.clock.record(64, 30.0)  # compiling
    assert player.simulations_for(1.0) == 64 and player.seconds_per_simulation is None
  player.clock.record(64, 0.64)
  assert player.seconds_per_simulation == pytest.approx(0.01)
  assert player.simulations_for(1.0) == 64      # 100 fit: the power of two below
  assert player.simulations_for(100.0) == 512   # at most max_simulations
  assert player.simulations_for(1e-4) == 8      # at least 8
  assert player.simulations_for(None) == 64     # no budget: its own count


class _TimedProposer(_Proposer):
  """A player that searches for a time of its own (AlphaGoPlayer's `timed_search`)."""

  timed_search = True

  def analyse(self, cfg, state, simulations=None, *, seconds=None):
    out = super().analyse(cfg, state, simulations)
    if seconds is not None:
      self.calls[-1] = ("seconds", seconds)
    return out


def test_a_timed_player_is_given_its_seconds_not_a_simulation_count():
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
