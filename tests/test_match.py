"""Matches between GTP engines (agz_jax.match) and Elo ratings from their results (agz_jax.ratings).

The summary and ratings are checked on numbers worked out by hand (the
statistics themselves in test_stats.py); the referee with tiny
fake engines (a script in this file) that misbehave on purpose; the real
engines in a short match of our random player against itself and, where GNU Go
is installed, one game against GNU Go.
"""

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from agz_jax import go, match, ratings, sgf, stats
from agz_jax.match import cli as match_cli

# GNU Go where .ci/run finds it: on the PATH, or where Debian puts it (/usr/games is not on
# every PATH).
GNUGO = shutil.which("gnugo") or "/usr/games/gnugo"
RANDOM = f"{sys.executable} -m agz_jax.gtp --random --seed {{seed}}"

# A GTP engine that answers every genmove the same way: 'a1' plays A1, 'pass'
# passes, 'crash' exits, 'hang' never answers, 'garbage' writes junk bytes then an
# answer that is no vertex, 'flood' writes megabytes without ending its answer,
# 'double' passes but answers every command twice.
FAKE_ENGINE = r"""
import sys, time
mode = sys.argv[1]
out = sys.stdout.buffer
for line in sys.stdin:
  words = line.split()
  ident = words.pop(0) if words and words[0].isdigit() else ""
  if not words:
    continue
  if words[0] == "quit":
    out.write(f"={ident}\n\n".encode())
    out.flush()
    break
  reply = ""
  if words[0] == "genmove":
    if mode == "crash":
      sys.exit(3)
    if mode == "hang":
      time.sleep(60)
    if mode == "garbage":
      out.write(b"\xff\xfe\x00 not gtp\n\x1b[31m\n")
      reply = "\u00bfA1\x00?"
    elif mode == "flood":
      out.write(f"={ident} ".encode() + b"x" * (3 << 20))
      out.flush()
      time.sleep(60)
    else:
      reply = {"a1": "A1"}.get(mode, "pass")
  answer = f"={ident} {reply}\n\n".encode()
  out.write(answer * (2 if mode == "double" else 1))
  out.flush()
"""


@pytest.fixture
def fake(tmp_path):
  script = tmp_path / "fake_gtp.py"
  script.write_text(FAKE_ENGINE)
  return lambda mode: f"{sys.executable} {script} {mode}"


def read_results(out):
  with open(os.path.join(out, "results.jsonl"), encoding="utf-8") as f:
    return sorted((json.loads(line) for line in f), key=lambda r: r["game"])


def replay_final_state(out, line):
  record = sgf.read(os.path.join(out, line["sgf"]))
  assert record.result == line["result"]
  assert record.players == {"black": line["black"], "white": line["white"]}
  assert len(record.moves) == line["moves"]
  return record, sgf.replay(record)[-1]


# -- the summary ------------------------------------------------------------------------------

def test_summary_table():
  winners = ["a", "a", "a", "b"]
  results = []
  for g, winner in enumerate(winners):
    black, white = ("a", "b") if g % 2 == 0 else ("b", "a")
    result = "B+1" if winner == black else "W+1"
    results.append({"game": g, "black": black, "white": white, "winner": winner, "result": result,
                    "reason": "score", "final_score": {"black": result, "white": result}})
  results[3]["final_score"]["white"] = "W+3"  # a, white in game 3, counts it otherwise
  text = match.summary(["a", "b"], results)
  lines = text.splitlines()
  assert lines[1].split()[:4] == ["a", "3", "1", "0"] and "75.0%" in lines[1]
  assert lines[1].split()[-1] == "2-0-0"  # as black
  lo, hi = stats.wilson_interval(3, 4)
  assert (f"Elo of a over b: +191, 95% interval [{stats.elo_difference(lo):+.0f}, "
          f"{stats.elo_difference(hi):+.0f}] (4 games)") in text
  assert "endings: score 4" in text
  assert "note: a's final_score named another winner than our Tromp-Taylor count in 1 games " \
         "(e.g. game 3)" in text


def test_summary_gives_the_result_without_games_an_engine_failed_in():
  results = [{"game": g, "black": "a" if g % 2 == 0 else "b", "white": "b" if g % 2 == 0 else "a",
              "winner": winner, "result": "", "reason": reason, "final_score": {}}
             for g, (winner, reason) in enumerate([("a", "error"), ("b", "resign"), ("b", "score"),
                                                   ("a", "score"), ("a", "error")])]
  lines = match.summary(["a", "b"], results).splitlines()
  assert lines[1].split()[:4] == ["a", "3", "2", "0"]  # a crash is a loss for the engine
  lo, hi = stats.wilson_interval(1, 3)
  assert lines[4] == (f"without the 2 games an engine failed in: a 1-2-0, 33.3% "
                      f"[{100 * lo:.1f}%, {100 * hi:.1f}%], Elo {stats.elo_difference(1 / 3):+.0f} "
                      f"[{stats.elo_difference(lo):+.0f}, {stats.elo_difference(hi):+.0f}] (3 games)")
  assert not any("failed in" in line
                 for line in match.summary(["a", "b"], results[1:4]).splitlines())


def test_default_names():
  assert match.default_name(f"{GNUGO} --mode gtp --level 1 --chinese-rules") == "gnugo-l1"
  assert match.default_name("gnugo --mode gtp --level=5") == "gnugo-l5"
  assert match.default_name("gnugo --mode gtp") == "gnugo-l10"
  assert match.default_name(RANDOM) == "random"
  assert match.default_name("python -m agz_jax.gtp --checkpoint runs/net9/") == "agz_jax-net9"
  policy = "python -m agz_jax.gtp --checkpoint w --policy-only"
  assert match.default_name(policy) == "agz_jax-w-policy"
  assert match.player_names([RANDOM, RANDOM]) == ["random-A", "random-B"]
  assert match.player_names([RANDOM, RANDOM], ["x", "y"]) == ["x", "y"]


# -- the sequential test ----------------------------------------------------------------------

def test_sprt_bounds_are_walds():
  test = match.Sprt(0, 50, alpha=0.05, beta=0.1)
  assert test.lower == pytest.approx(np.log(0.1 / 0.95))
  assert test.upper == pytest.approx(np.log(0.9 / 0.05))
  # The logistic model: 50 Elo is an expected score of 1 / (1 + 10^(-50/400)).
  p1 = 1 / (1 + 10 ** (-50 / 400))
  assert test.llr(7, 3) == pytest.approx(7 * np.log(p1 / 0.5) + 3 * np.log((1 - p1) / 0.5))
  assert test.llr(2, 2, draws=2) == pytest.approx(test.llr(3, 3))  # a draw is half of each


@pytest.mark.parametrize("results, decision, games", [
    # p0 = 0.5, p1 = 0.5714; the bounds are -+ln(19) = -+2.944.
    ("W" * 40, "H1", 23),  # each win adds ln(p1 / p0) = +0.1336
    ("L" * 40, "H0", 20),  # each loss adds ln((1 - p1) / (1 - p0)) = -0.1542
    ("D" * 400, "H0", 286),  # each draw adds -0.0103: a 50% score is H0's
    ("WL" * 200, "H0", 286),  # so does a pair: -2.931 after 142 pairs, -2.951 after 143
    ("WL" * 140, None, None),
])
def test_sprt_decides_streams(results, decision, games):
  test = match.Sprt(0, 50)
  wins = losses = draws = 0
  for played, result in enumerate(results, start=1):
    wins, losses, draws = wins + (result == "W"), losses + (result == "L"), draws + (result == "D")
    decided = test.decision(wins, losses, draws)
    if decided is not None:
      break
  assert (decided, played if decided else None) == (decision, games)
  line = test.line(wins, losses, draws)
  assert line.startswith("SPRT [0, 50] (alpha 0.05, beta 0.05): LLR ")
  assert line.endswith(f"{decision} accepted (A is {'+50' if decision == 'H1' else '+0'} Elo)"
                       if games else "(-2.94, 2.94)")


@pytest.mark.parametrize("p, rel", [(0.5, 0.02), (0.55, 0.02), (0.6, 0.05)])
def test_pairs_of_independent_games_give_walds_llr(p, rel):
  # Pairs of independent games with A winning each with chance p: the pentanomial LLR's normal
  # approximation is Wald's over as many games, to a few percent over 1000s of pairs.
  test = match.Sprt(0, 50)
  n = 100_000
  pairs = [n * (1 - p) ** 2, 0, n * 2 * p * (1 - p), 0, n * p ** 2]
  assert test.pair_llr(pairs) == pytest.approx(test.llr(2 * n * p, 2 * n * (1 - p)), rel=rel)


def test_split_pairs_accept_h0_where_games_counted_alone_cannot():
  # Each opening won by its colour: two games a pair, one each. Counted as games this is an
  # even score (about -0.02 a pair, 143 pairs to H0); counted as pairs it is an even score
  # with little spread, which only an even match gives: H0 after 31 pairs (the eight
  # pseudo-pairs' variance gives way to the observed one).
  test = match.Sprt(0, 50)
  decided = [n for n in range(1, 200) if test.decide(test.pair_llr([0, 0, n, 0, 0]))]
  assert decided[0] == 31 and test.decide(test.pair_llr([0, 0, 31, 0, 0])) == "H0"
  assert [n for n in range(1, 200) if test.decision(n, n)][0] == 143
  # A wins every pair: H1.
  won = [n for n in range(1, 200) if test.decide(test.pair_llr([0, 0, 0, 0, n]))]
  assert test.decide(test.pair_llr([0, 0, 0, 0, won[0]])) == "H1"
  # No pair, no evidence; pairs lost say more against H1 than split ones.
  assert test.pair_llr([0, 0, 0, 0, 0]) == 0
  assert test.pair_llr([3, 0, 0, 0, 0]) < test.pair_llr([0, 0, 3, 0, 0]) < 0
  assert test.pair_llr([0, 0, 0, 0, 3]) > 0
  line = test.report(test.pair_llr([0, 0, 31, 0, 0]), "31 pairs")
  assert line.endswith(", 31 pairs: H0 accepted (A is +0 Elo)")


def test_pair_counts_score_whole_pairs_only():
  lines = [{"game": 0, "winner": "A", "opening": 0}, {"game": 1, "winner": "A", "opening": 0},
           {"game": 3, "winner": None, "opening": 1}, {"game": 2, "winner": "B", "opening": 1},
           {"game": 5, "winner": "B", "opening": 2}, {"game": 4, "winner": "A", "opening": 2},
           {"game": 6, "winner": "A", "opening": 3},  # its pair is not played yet
           {"game": 8, "winner": "A"}, {"game": 9, "winner": "A"}]  # no opening: no pair
  assert match.pair_counts(lines, "A") == [0, 1, 1, 0, 1]
  assert match.pair_counts(lines, "B") == [1, 0, 1, 1, 0]
  with pytest.raises(ValueError, match="pairs are five counts"):
    match.Sprt(0, 50).pair_llr([1, 2, 3])


@pytest.mark.parametrize("args, message", [
    ((50, 0), "must be ordered, ELO0 < ELO1: got 50 and 0"),
    ((10, 10), "must be ordered"),
    ((0, 50, 0.5), "alpha must be in (0, 0.5), got 0.5"),
    ((0, 50, 0.05, 0.0), "beta must be in (0, 0.5), got 0"),
])
def test_sprt_refuses_bad_settings(args, message):
  with pytest.raises(ValueError, match=re.escape(message)):
    match.Sprt(*args)


def test_sprt_command_line_refuses_bad_settings(tmp_path, capsys):
  with pytest.raises(SystemExit, match=re.escape("match: SPRT alpha must be in (0, 0.5)")):
    match.main(["--black", RANDOM, "--white", RANDOM, "--games", "4", "--size", "5",
                "--komi", "0.5", "--out", str(tmp_path), "--sprt", "0", "50", "--alpha", "0.7"])
  with pytest.raises(SystemExit, match="match: --openings .*nothing: no such file or folder"):
    match.main(["--black", RANDOM, "--white", RANDOM, "--games", "4", "--size", "5",
                "--komi", "0.5", "--out", str(tmp_path), "--openings", str(tmp_path / "nothing")])


def test_openings_from_sgf_games(tmp_path):
  cfg = go.GoConfig(size=5, komi=0.5)
  games = {"a.sgf": "(;SZ[5];B[cc];W[bb];B[dd];W[ee])", "b.sgf": "(;SZ[5];B[aa];W[bb];B[cc])",
           "short.sgf": "(;SZ[5];B[cc])", "nine.sgf": "(;SZ[9];B[cc];W[bb];B[dd])",
           "setup.sgf": "(;SZ[5]AB[aa];W[bb];B[cc];W[dd])", "twice.sgf": "(;SZ[5];B[cc];B[bb];W[dd])",
           "same.sgf": "(;SZ[5];B[cc];W[bb];B[dd])", "bad.sgf": "not sgf"}
  for name, text in games.items():
    (tmp_path / name).write_text(text)
  openings = match.load_openings(str(tmp_path), cfg, 3)
  point = lambda v: go.gtp_to_action(cfg, v)
  # In the order of the files; a repeated opening, a short game, another size, setup stones,
  # two moves by one colour and an unreadable file are left out.
  assert openings == [tuple(map(point, ("C3", "B4", "D2"))), tuple(map(point, ("A5", "B4", "C3")))]
  assert match.load_openings(str(tmp_path), cfg, 3, limit=1) == openings[:1]
  with pytest.raises(ValueError, match="no game of 5x5 without setup stones has 5 moves"):
    match.load_openings(str(tmp_path), cfg, 5)


def test_random_openings():
  cfg = go.GoConfig(size=9, komi=7.5)
  openings = match.random_openings(cfg, 12, 3, seed=5)
  assert len(set(openings)) == 12 and all(len(o) == 3 for o in openings)
  for opening in openings:  # on the third line and in, each a stone that stays on the board
    assert all(2 <= a // 9 <= 6 and 2 <= a % 9 <= 6 for a in opening)
    state = go.play(cfg, list(opening))
    assert np.count_nonzero(np.asarray(state.board)) == 3 and int(state.board[opening[0]]) == 1
  # The seed decides them; a longer match keeps the shorter one's openings first.
  assert match.random_openings(cfg, 12, 3, seed=5) == openings
  assert match.random_openings(cfg, 20, 3, seed=5)[:12] == openings
  assert match.random_openings(cfg, 12, 3, seed=6) != openings
  with pytest.raises(ValueError, match="--random-openings must be positive"):
    match.random_openings(cfg, 2, 0, seed=0)
  # 5x5 has one point on the third line and in: one opening of one move at most.
  with pytest.raises(ValueError, match="has 1 points on the third line and in, too few for 2"):
    match.random_openings(go.GoConfig(size=5, komi=0.5), 2, 1, seed=0)


def test_openings_are_given_one_way(tmp_path):
  with pytest.raises(SystemExit, match="give --openings or --random-openings, not both"):
    match.main(["--black", RANDOM, "--white", RANDOM, "--games", "2", "--size", "9", "--komi",
                "7.5", "--out", str(tmp_path / "m"), "--openings", str(tmp_path),
                "--random-openings", "2"])


def test_a_split_match_keeps_its_random_openings(tmp_path, monkeypatch):
  # The rest of a match played elsewhere gets new engine seeds (--seed) but must open its games
  # as the whole match would: the openings follow --opening-seed, --seed only without it.
  given = []
  monkeypatch.setattr(match_cli, "run_match", lambda *a, **k: given.append(k) or [])
  monkeypatch.setattr(match_cli, "summary", lambda *a: "")
  args = ["--black", RANDOM, "--white", RANDOM, "--games", "8", "--size", "9", "--komi", "7.5",
          "--out", str(tmp_path / "m"), "--random-openings", "2"]
  cfg = go.GoConfig(size=9, komi=7.5)
  match.main(args + ["--seed", "7"])
  match.main(args + ["--seed", "500", "--first-game", "4", "--opening-seed", "7"])
  assert given[0]["openings"] == given[1]["openings"] == match.random_openings(cfg, 4, 2, seed=7)
  assert (given[0]["seed"], given[1]["seed"], given[1]["first_game"]) == (7, 500, 4)
  match.main(args + ["--seed", "500"])
  assert given[2]["openings"] != given[0]["openings"]
  with pytest.raises(SystemExit, match="--opening-seed draws --random-openings"):
    match.main(args[:-2] + ["--opening-seed", "7"])


@pytest.mark.subprocess
@pytest.mark.parametrize("a, b, decision", [("pass", "a1", "H1"), ("a1", "pass", "H0")])
def test_match_stops_when_the_sprt_decides(tmp_path, fake, a, b, decision):
  # 'a1' loses every game (its second A1 is illegal), so A wins or loses every game: with
  # [0, 200] a win adds 0.418 and a loss -0.733, so the 8th win or the 5th loss crosses
  # ln(19) = 2.944.
  out = str(tmp_path / "out")
  lines = []
  test = match.Sprt(0, 200)
  results = match.run_match([fake(a), fake(b)], ["A", "B"], games=20, size=5, komi=0.5, out=out,
                            parallel=1, sprt=test, log=lines.append)
  played = 8 if decision == "H1" else 5
  assert len(results) == played and all(r["winner"] == ("A" if decision == "H1" else "B")
                                        for r in results)
  assert lines[-1].endswith(f"{decision} accepted (A is {'+200' if decision == 'H1' else '+0'} Elo)")
  assert sum(line.startswith("SPRT [0, 200]") for line in lines) == played
  # Resumed with more games allowed, the decided test plays no more.
  again = match.run_match([fake(a), fake(b)], ["A", "B"], games=30, size=5, komi=0.5, out=out,
                          parallel=1, sprt=test, log=lambda line: None)
  assert again == results


def _two_openings(folder, cfg, moves):
  """The first `moves` moves of two 5x5 games written to `folder`."""
  (folder / "o.sgf").write_text("(;SZ[5];B[cc];W[bb];B[dd])")
  (folder / "p.sgf").write_text("(;SZ[5];B[aa];W[ee];B[cc])")
  return match.load_openings(str(folder), cfg, moves)


@pytest.mark.subprocess
def test_a_match_from_openings_tests_whole_pairs(tmp_path, fake):
  # With sprt_pairs, A winning every game, so every pair: the test moves only when a pair is
  # whole, and stops at the first pair count whose LLR crosses the upper bound.
  openings = _two_openings(tmp_path, go.GoConfig(size=5, komi=0.5), 2)
  test = match.Sprt(0, 200)
  needed = next(n for n in range(1, 20) if test.decide(test.pair_llr([0, 0, 0, 0, n])))
  lines = []
  results = match.run_match([fake("pass"), fake("a1")], ["A", "B"], games=60, size=5,
                            komi=0.5, out=str(tmp_path / "out"), parallel=1, sprt=test,
                            openings=openings, sprt_pairs=True, log=lines.append)
  assert len(results) == 2 * needed and all(r["winner"] == "A" for r in results)
  tests = [line for line in lines if line.startswith("SPRT [0, 200]")]
  assert len(tests) == 2 * needed
  assert tests[0].split("LLR ")[1].startswith("0.00") and tests[0].endswith(", 0 pairs")
  assert tests[-1].endswith(f", {needed} pairs: H1 accepted (A is +200 Elo)")


@pytest.mark.subprocess
def test_a_match_resumes_only_from_its_own_openings(tmp_path, fake):
  cfg = go.GoConfig(size=5, komi=0.5)
  two = _two_openings(tmp_path, cfg, 2)
  play = lambda games, openings, out="out", **kw: match.run_match(
      [fake("pass"), fake("pass")], ["A", "B"], games=games, size=5, komi=0.5,
      out=str(tmp_path / out), parallel=1, openings=openings, log=lambda line: None, **kw)
  assert len(play(2, two)) == 2
  with pytest.raises(ValueError, match="game 0 was played from other openings; resume with"):
    play(4, _two_openings(tmp_path, cfg, 3))  # longer openings: others
  with pytest.raises(ValueError, match="game 0 was played from other openings"):
    play(4, two[::-1])
  with pytest.raises(ValueError, match=r"out: its game 0 was played from openings; resume with"):
    play(4, None)
  assert len(play(4, two)) == 4  # its own openings: it goes on
  assert len(play(1, None, out="plain")) == 1
  with pytest.raises(ValueError, match="game 0 was played without --openings; resume without"):
    play(2, two, out="plain")
  with pytest.raises(ValueError, match="pairs of games needs --sprt and --openings"):
    play(6, None, sprt=match.Sprt(0, 50), sprt_pairs=True)


@pytest.mark.subprocess
def test_pairs_of_games_share_an_opening(tmp_path, fake):
  cfg = go.GoConfig(size=5, komi=0.5)
  openings = _two_openings(tmp_path, cfg, 2)
  out = str(tmp_path / "out")
  results = match.run_match([fake("pass"), fake("pass")], ["A", "B"], games=5, size=5, komi=0.5,
                            out=out, parallel=1, openings=openings, log=lambda line: None)
  assert [r["opening"] for r in results] == [0, 0, 1, 1, 0]
  assert [r["black"] for r in results] == ["A", "B", "A", "B", "A"]
  for line in results:
    record, final = replay_final_state(out, line)
    assert tuple(a for _, a in record.moves[:2]) == openings[line["opening"]]
    assert [c for c, _ in record.moves[2:]] == [go.BLACK, go.WHITE]  # then both pass
    assert line["moves"] == 4 and int(final.passes) == 2
  # Games 0 and 4, the same opening and colours, were played alike: the summary says so.
  keys = [r["game_key"] for r in results]
  assert keys[4] == keys[0] and len(set(keys)) == 4
  assert "note: 1 of 5 games repeat an earlier game move for move" in match.summary(
      ["A", "B"], results)
  assert "repeat" not in match.summary(["A", "B"], results[:4])


@pytest.mark.subprocess
def test_a_match_goes_on_from_a_given_game_with_its_colours_and_openings(tmp_path, fake):
  cfg = go.GoConfig(size=5, komi=0.5)
  openings = _two_openings(tmp_path, cfg, 2)
  results = match.run_match([fake("pass"), fake("pass")], ["A", "B"], games=5, size=5,
                            komi=0.5, out=str(tmp_path / "out"), parallel=1, openings=openings,
                            first_game=3, log=lambda line: None)
  assert [r["game"] for r in results] == [3, 4]
  assert [r["opening"] for r in results] == [1, 0]  # as in the whole match above
  assert [r["black"] for r in results] == ["B", "A"]
  for first in (-1, 5):
    with pytest.raises(ValueError, match="--first-game must be at least 0 and below --games"):
      match.run_match([fake("pass"), fake("pass")], games=5, size=5, komi=0.5,
                      out=str(tmp_path / "bad"), first_game=first)


# -- ratings ----------------------------------------------------------------------------------

def write_results(directory, games):
  os.makedirs(directory, exist_ok=True)
  with open(os.path.join(directory, "results.jsonl"), "w", encoding="utf-8") as f:
    for i, (black, white, winner) in enumerate(games):
      f.write(json.dumps({"game": i, "black": black, "white": white, "winner": winner}) + "\n")


def test_ratings_recover_known_strengths(tmp_path, capsys):
  true = {"a": 0.0, "b": 150.0, "c": 400.0}
  rng = np.random.default_rng(0)
  games = []
  for x, y in (("a", "b"), ("b", "c"), ("a", "c")):
    p = 1 / (1 + 10 ** ((true[y] - true[x]) / 400))
    for i, u in enumerate(rng.random(1500)):
      black, white = (x, y) if i % 2 == 0 else (y, x)
      games.append((black, white, None if i % 50 == 0 else (x if u < p else y)))
  # Split over two match directories, as `ratings DIR DIR` reads them.
  write_results(tmp_path / "m1", games[:2000])
  write_results(tmp_path / "m2", games[2000:])
  players, n, points = ratings.tally(ratings.load_results([tmp_path / "m1", tmp_path / "m2"]))
  assert players == ["a", "b", "c"] and n[0, 1] == 1500 and n.sum() == 2 * 4500
  elo, se = ratings.fit(n, points)
  assert elo[0] == 0 and se[0] == 0  # anchored on the first player
  for i, name in enumerate(players[1:], start=1):
    # Draws (1 in 50) are half a win each way, so they shrink differences slightly.
    assert abs(elo[i] - true[name]) < 3 * se[i], (name, elo[i], se[i])
    assert 5 < se[i] < 25
  # Anchoring shifts ratings and moves the zero error to the anchor.
  elo_b, se_b = ratings.fit(n, points, anchor=1, anchor_elo=150.0)
  np.testing.assert_allclose(elo_b, elo + 150.0 - elo[1], atol=1e-6)
  assert se_b[1] == 0 and se_b[0] == pytest.approx(se[1], rel=1e-6)
  # The entry point prints them sorted, strongest first.
  ratings.main([str(tmp_path / "m1"), str(tmp_path / "m2"), "--anchor", "b", "--anchor-elo", "150"])
  rows = capsys.readouterr().out.splitlines()
  assert [row.split()[1] for row in rows[1:4]] == ["c", "b", "a"]
  assert "(anchor)" in rows[2] and " 150.0 " in rows[2]
  # --json writes the same ratings as data.
  ratings.main([str(tmp_path / "m1"), str(tmp_path / "m2"), "--anchor", "b", "--anchor-elo", "150",
                "--json", str(tmp_path / "r.json")])
  written = json.loads((tmp_path / "r.json").read_text())
  assert written["anchor"] == "b" and written["anchor_elo"] == 150.0
  for i, name in enumerate(players):
    got = written["players"][name]
    assert got["elo"] == pytest.approx(elo_b[i], abs=1e-6) and got["se"] == pytest.approx(se_b[i])
    assert got["games"] == 3000 and got["score"] == pytest.approx(points[i].sum() / 3000)


def test_ratings_without_failures_leave_out_the_games_an_engine_failed_in(tmp_path, capsys):
  lines = [{"game": i, "black": b, "white": w, "winner": winner, "reason": reason}
           for i, (b, w, winner, reason) in enumerate(
               [("x", "y", "x", "error")] * 3 + [("x", "y", "y", "score"), ("y", "x", "x", "score")])]
  os.makedirs(tmp_path / "m")
  (tmp_path / "m" / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
  ratings.main([str(tmp_path / "m"), "--anchor", "y"])
  assert " 80.0%" in capsys.readouterr().out  # x: 4 of 5 with the crashes
  ratings.main([str(tmp_path / "m"), "--anchor", "y", "--without-failures"])
  out = capsys.readouterr().out
  x_row = next(row for row in out.splitlines() if row.split()[1:2] == ["x"])
  assert " 50.0%" in x_row and out.splitlines()[-1].startswith("2 games")


def test_ratings_undefeated_player_is_finite():
  players, n, points = ratings.tally([{"black": "x", "white": "y", "winner": "x"}] * 10)
  elo, se = ratings.fit(n, points, anchor=1)
  assert players == ["x", "y"]
  assert 300 < elo[0] < 1500 and np.isfinite(se[0])


def test_ratings_errors(tmp_path, capsys):
  with pytest.raises(SystemExit, match="has no results.jsonl"):
    ratings.main([str(tmp_path)])
  write_results(tmp_path / "m", [("a", "b", "a"), ("c", "d", None)])
  with pytest.raises(SystemExit, match=r"not connected by games: a, b \| c, d"):
    ratings.main([str(tmp_path / "m")])
  with pytest.raises(SystemExit, match="anchor 'z' is not a player"):
    ratings.main([str(tmp_path / "m"), "--anchor", "z"])
  capsys.readouterr()


# -- matches ----------------------------------------------------------------------------------

@pytest.mark.subprocess
@pytest.mark.parametrize("mode, games, reason, detail", [
    ("a1", 2, "illegal", "bad played A1: occupied"),
    ("crash", 2, "error", "bad crashed on 'genmove"),
    ("hang", 1, "error", "bad timed out after 1 s on 'genmove"),
    ("garbage", 2, "error", "bad answered genmove with '\u00bfA1"),
    ("flood", 1, "error", "bad wrote more than 1048576 bytes without finishing its answer"),
])
def test_misbehaving_engine_loses(tmp_path, fake, mode, games, reason, detail):
  out = str(tmp_path / "out")
  results = match.run_match([fake(mode), fake("pass")], ["bad", "passer"], games=games, size=5,
                            komi=0.5, out=out, parallel=1, timeout=1, startup_timeout=1,
                            log=lambda line: None)
  assert results == read_results(out) and len(results) == games
  for line in results:
    assert line["winner"] == "passer" and line["reason"] == reason
    assert detail in line["detail"]
    flag = "T" if mode == "hang" else "F"
    assert line["result"] == ("W+" if line["black"] == "bad" else "B+") + flag
    replay_final_state(out, line)  # the illegal move is not in the record


@pytest.mark.subprocess
def test_stale_answers_are_not_taken_for_the_next_command(tmp_path, fake):
  # An engine that answers everything twice: each command still gets its own answer
  # (by its id), so both sides just pass and the games are scored.
  out = str(tmp_path / "out")
  results = match.run_match([fake("double"), fake("pass")], ["double", "passer"], games=2,
                            size=5, komi=0.5, out=out, parallel=1, timeout=5, startup_timeout=5,
                            log=lambda line: None)
  assert [r["reason"] for r in results] == ["score", "score"]
  assert all(r["moves"] == 2 and r["winner"] == r["white"] for r in results)  # komi 0.5


@pytest.mark.subprocess
def test_resume_plays_only_missing_games(tmp_path, fake):
  out = str(tmp_path / "out")
  commands = [fake("a1"), fake("pass")]
  match.run_match(commands, ["a1", "passer"], games=2, size=5, komi=0.5, out=out, parallel=1,
                  log=lambda line: None)
  results = match.run_match(commands, ["a1", "passer"], games=3, size=5, komi=0.5, out=out,
                            parallel=1, log=lambda line: None)
  assert [r["game"] for r in results] == [0, 1, 2] and len(read_results(out)) == 3
  # The resumed match gives its processes new '{seed}' values: no replay of earlier games.
  first_seeds = {s for r in results[:2] for s in r["seeds"].values()}
  assert min(results[2]["seeds"].values()) > max(first_seeds)
  with pytest.raises(ValueError, match="not of this match"):
    match.run_match(commands, ["other", "passer"], games=3, size=5, komi=0.5, out=out)


@pytest.mark.subprocess
def test_engine_that_cannot_start_stops_the_match(tmp_path):
  with pytest.raises(RuntimeError, match="did not start"):
    match.run_match([f"{sys.executable} -c 'import sys; sys.exit(2)'", RANDOM], games=1, size=5,
                    komi=0.5, out=str(tmp_path), log=lambda line: None)


@pytest.mark.subprocess
def test_random_self_match_on_5x5(tmp_path):
  out = str(tmp_path / "out")
  lines = []
  results = match.run_match([RANDOM, RANDOM], games=2, size=5, komi=0.5, out=out, parallel=2,
                            log=lines.append)
  assert len(lines) == 2 and lines[-1].startswith("[2/2]")
  assert results == read_results(out)
  assert sorted(os.listdir(os.path.join(out, "games"))) == ["0000.sgf", "0001.sgf"]
  # Colours swap: engine A is black in game 0, engine B in game 1.
  assert [(r["black"], r["white"]) for r in results] == [("random-A", "random-B"),
                                                         ("random-B", "random-A")]
  for line in results:
    assert line["reason"] == "score"  # the random player never resigns nor plays illegally
    record, final = replay_final_state(out, line)
    cfg = go.GoConfig(size=5, komi=0.5)
    assert bool(final.terminated) and int(final.passes) == 2
    assert line["result"] == sgf.result_string(cfg, final)
    winner = line["black"] if line["result"].startswith("B") else line["white"]
    assert line["winner"] == winner
    # Our engine scores with the same rules, so its own count agrees.
    assert line["final_score"] == {"black": line["result"], "white": line["result"]}


@pytest.mark.subprocess
@pytest.mark.gnugo
def test_gnugo_beats_random_on_9x9(tmp_path):
  """Skipped where GNU Go is not installed, except under CI (.ci/run sets AGZ_REQUIRE_GNUGO=1
  after installing it), where its absence fails."""
  if not os.path.exists(GNUGO):
    if os.environ.get("AGZ_REQUIRE_GNUGO") == "1":
      pytest.fail("AGZ_REQUIRE_GNUGO=1 but GNU Go is neither on the PATH nor in /usr/games")
    pytest.skip("GNU Go is not installed")
  out = str(tmp_path / "out")
  gnugo = f"{GNUGO} --mode gtp --level 1 --chinese-rules --capture-all-dead"
  run = subprocess.run(
      [sys.executable, "-m", "agz_jax.match", "--black", RANDOM, "--white", gnugo, "--games", "1",
       "--size", "9", "--komi", "7.5", "--out", out, "--parallel", "1"],
      capture_output=True, text=True, timeout=120, check=False)
  assert run.returncode == 0, run.stderr
  assert "[1/1] game 0: random (B) vs gnugo-l1 (W)" in run.stdout
  assert "Elo of random over gnugo-l1: -inf" in run.stdout
  (line,) = read_results(out)
  assert line["winner"] == "gnugo-l1" and line["reason"] in ("score", "resign")
  record, final = replay_final_state(out, line)
  if line["reason"] == "score":
    assert line["result"].startswith("W+")
    assert line["result"] == sgf.result_string(go.GoConfig(size=9, komi=7.5), final)
    assert line["final_score"]["white"].startswith("W+")  # GNU Go's own area count agrees
