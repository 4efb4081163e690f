"""The match: parallel workers, each with one process of each engine; results saved as they
come, a stopped match resumed from its results."""

import datetime
import hashlib
import json
import os
import shlex
import threading
import time
import traceback

from agz_jax import go, sgf
from agz_jax.match.process import EngineStartError, GtpProcess
from agz_jax.match.referee import Outcome, play_game
from agz_jax.match.report import player_names
from agz_jax.match.sprt import Sprt


class _Match:
  """Shared state of the workers: the games left, the results so far, the output files."""

  def __init__(self, commands, names, cfg, out, games, parallel, seed, timeout, startup_timeout,
               done, log, sprt=None, openings=None, sprt_pairs=False, first_game=0):
    self.commands, self.names, self.cfg, self.out = commands, names, cfg, out
    self.sprt, self.openings, self.sprt_pairs = sprt, openings, sprt_pairs
    self.parallel = parallel
    self.timeout, self.startup_timeout = timeout, startup_timeout
    self.todo = [g for g in range(first_game, games) if g not in {r["game"] for r in done}]
    self.results = list(done)
    self.total = games - first_game
    self.log = log
    seeds = [v for r in done for v in (r.get("seeds") or {}).values() if v is not None]
    self.first_seed = max([seed] + [v + 1 for v in seeds])  # a resumed match reuses no seed
    self.lock = threading.Lock()
    self.stop = threading.Event()
    self.interrupted = False
    self.fatal = None
    self.processes = set()
    if sprt is not None and sprt.decide(self.sprt_llr()[0]) is not None:
      self.todo = []  # a resumed match whose test had already ended

  def sprt_llr(self) -> tuple[float, str]:
    return sprt_llr(self.sprt, self.results, self.names[0], paired=self.sprt_pairs)

  def opening(self, game: int) -> int | None:
    """The opening of `game`: a pair of games (2k, 2k + 1), colours swapped, shares one."""
    return None if not self.openings else (game // 2) % len(self.openings)

  def next_game(self) -> int | None:
    with self.lock:
      if self.stop.is_set() or not self.todo:
        return None
      return self.todo.pop(0)

  def start(self, worker: int, slot: int, count: int) -> GtpProcess:
    """Starts engine `slot` (0: A, 1: B) for the `count`th time in `worker`."""
    seed = self.first_seed + 2 * (count * self.parallel + worker) + slot
    argv = [a.replace("{seed}", str(seed)) for a in shlex.split(self.commands[slot])]
    log_path = os.path.join(self.out, "logs", f"{self.names[slot]}.w{worker}.stderr")
    process = GtpProcess(argv, self.names[slot], log_path, timeout=self.timeout,
                         startup_timeout=self.startup_timeout, seed=seed)
    with self.lock:
      self.processes.add(process)
    return process

  def close(self, process: GtpProcess, grace: float = 3.0):
    with self.lock:
      self.processes.discard(process)
    process.close(grace)

  def record(self, game: int, black: int, outcome: Outcome, seconds: float, seeds: dict,
             opening: int | None = None):
    """Saves one game (SGF and a results line) and prints the progress line."""
    cfg = self.cfg
    names = {go.BLACK: self.names[black], go.WHITE: self.names[1 - black]}
    comments = [None] * len(outcome.moves)
    if comments:
      comments[-1] = outcome.detail
    record = sgf.GameRecord(
        size=cfg.size, komi=cfg.komi, moves=outcome.moves, result=outcome.result,
        players={"black": names[go.BLACK], "white": names[go.WHITE]},
        date=datetime.date.today().isoformat(), comments=comments)
    path = os.path.join("games", f"{game:04d}.sgf")
    line = {
        "game": game, "black": names[go.BLACK], "white": names[go.WHITE],
        "winner": names[outcome.winner] if outcome.winner else None, "result": outcome.result,
        "reason": outcome.reason, "detail": outcome.detail, "moves": len(outcome.moves),
        "final_score": outcome.final_score, "size": cfg.size, "komi": cfg.komi,
        "max_moves": cfg.max_moves, "seconds": round(seconds, 2), "sgf": path, "seeds": seeds,
        "game_key": game_key(names[go.BLACK], outcome.moves)}
    if opening is not None:
      line["opening"] = opening
      line["opening_key"] = opening_key(self.openings[opening])
    with self.lock:
      if self.interrupted:  # its engines were killed under it: not a real result
        return
      with open(os.path.join(self.out, path), "wb") as f:
        f.write(sgf.write(record))
      with open(os.path.join(self.out, "results.jsonl"), "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")
      self.results.append(line)
      a, b = self.names
      wins = {n: sum(r["winner"] == n for r in self.results) for n in (a, b)}
      draws = sum(r["winner"] is None for r in self.results)
      self.log(f"[{len(self.results)}/{self.total}] game {game}: {names[go.BLACK]} (B) vs "
               f"{names[go.WHITE]} (W): {outcome.result}, {outcome.detail}, "
               f"{len(outcome.moves)} moves, {seconds:.1f} s | {a} {wins[a]} - {wins[b]} {b}"
               + (f" ({draws} draws)" if draws else ""))
      if self.sprt is not None:
        llr, counted = self.sprt_llr()
        self.log(self.sprt.report(llr, counted))
        if self.sprt.decide(llr) is not None:
          self.stop.set()  # games under way still finish and are recorded

  def worker(self, worker: int):
    processes, starts = [None, None], [0, 0]
    try:
      while (game := self.next_game()) is not None:
        for slot in (0, 1):
          if processes[slot] is None or not processes[slot].alive:
            if processes[slot] is not None:
              self.close(processes[slot])
            processes[slot] = self.start(worker, slot, starts[slot])
            starts[slot] += 1
        black = game % 2
        engines = {go.BLACK: processes[black], go.WHITE: processes[1 - black]}
        names = {go.BLACK: self.names[black], go.WHITE: self.names[1 - black]}
        opening = self.opening(game)
        begin = time.monotonic()
        outcome = play_game(self.cfg, engines, names,
                            () if opening is None else self.openings[opening])
        self.record(game, black, outcome, time.monotonic() - begin,
                    {"black": engines[go.BLACK].seed, "white": engines[go.WHITE].seed}, opening)
    except EngineStartError as e:
      self.fail(str(e))
    except Exception:  # pylint: disable=broad-exception-caught
      self.fail(traceback.format_exc())
    finally:
      for process in processes:
        if process is not None:
          self.close(process)

  def fail(self, message: str):
    with self.lock:
      if self.fatal is None:
        self.fatal = message
      self.stop.set()

  def interrupt(self):
    """Stops recording, then kills every engine (workers blocked on one return at once)."""
    with self.lock:
      self.interrupted = True
      self.stop.set()
      processes = list(self.processes)
    for process in processes:
      self.close(process, grace=0)


def a_record(results: list[dict], name: str) -> tuple[int, int, int]:
  """(wins, losses, draws) of the player `name` in results lines."""
  wins = sum(r["winner"] == name for r in results)
  draws = sum(r["winner"] is None for r in results)
  return wins, len(results) - wins - draws, draws


def pair_counts(results: list[dict], name: str) -> list[int]:
  """How many whole pairs of games (2k and 2k + 1, one opening, colours swapped) scored the
  player `name` 0, 1/2, 1, 3/2 and 2 points."""
  pairs = {}
  for r in results:
    if r.get("opening") is not None:
      pairs.setdefault(r["game"] // 2, []).append(r)
  counts = [0] * 5
  for games in pairs.values():
    if len(games) == 2:
      points = sum(1.0 if r["winner"] == name else 0.5 if r["winner"] is None else 0.0
                   for r in games)
      counts[round(2 * points)] += 1
  return counts


def sprt_llr(sprt: Sprt, results: list[dict], name: str, paired: bool) -> tuple[float, str]:
  """The test's LLR for the player `name` and what it counted: whole pairs of games (games
  that share openings) where `paired`, else games."""
  if paired:
    pairs = pair_counts(results, name)
    return sprt.pair_llr(pairs), f"{sum(pairs)} pairs"
  return sprt.llr(*a_record(results, name)), ""


def opening_key(opening) -> str:
  """A short fingerprint of an opening's moves, kept with each game played from it."""
  return hashlib.sha1(",".join(map(str, opening)).encode()).hexdigest()[:12]


def game_key(black: str, moves) -> str:
  """A short fingerprint of a whole game: who had black and every move, the opening's too.
  Two games with one key were played move for move alike (report.summary counts them)."""
  text = black + ";" + ",".join(f"{colour}:{action}" for colour, action in moves)
  return hashlib.sha1(text.encode()).hexdigest()[:12]


def _check_openings(out: str, done: list[dict], openings: list | None):
  """Refuses to resume games played from other openings than `openings` (or from none)."""
  own = ("resume with the match's own --openings and --opening-moves (or --random-openings and "
         "--opening-seed), or choose another --out")
  for line in done:
    opening = line.get("opening")
    if opening is None and openings:
      raise ValueError(f"{out}: its game {line['game']} was played without --openings; resume "
                       f"without them, or choose another --out")
    if opening is not None and not openings:
      raise ValueError(f"{out}: its game {line['game']} was played from openings; {own}")
    if opening is not None and "opening_key" in line and (
        opening >= len(openings) or opening_key(openings[opening]) != line["opening_key"]):
      raise ValueError(f"{out}: its game {line['game']} was played from other openings; {own}")


def _read_done(out: str, names: list[str], cfg: go.GoConfig) -> list[dict]:
  """Games already in out/results.jsonl (a resumed match); refuses results of another match."""
  path = os.path.join(out, "results.jsonl")
  if not os.path.exists(path):
    return []
  done = []
  with open(path, encoding="utf-8") as f:
    for number, text in enumerate(f, start=1):
      if not text.strip():
        continue
      line = json.loads(text)
      if ({line["black"], line["white"]} != set(names) or line.get("size") != cfg.size
          or line.get("komi") != cfg.komi):
        size = line.get("size")
        raise ValueError(f"{path} line {number} is a game of {line['black']} vs {line['white']} "
                         f"({size}x{size}, komi {line.get('komi')}), not of this match; choose "
                         f"another --out")
      done.append(line)
  return done


def run_match(commands: list[str], names: list[str] | None = None, *, games: int, size: int,
              komi: float, out: str, parallel: int | None = None, max_moves: int | None = None,
              timeout: float = 60.0, startup_timeout: float = 300.0, seed: int = 0,
              sprt: Sprt | None = None, openings: list | None = None,
              sprt_pairs: bool = False, first_game: int = 0, log=print) -> list[dict]:
  """Plays `games` games between engines A and B (A black in even games).

  Args:
    commands: [A, B] engine command lines (shlex syntax; '{seed}' is replaced).
    names: [A, B] player names (default: from the commands).
    games, size, komi: the match.
    out: output directory (created; a results.jsonl there is resumed).
    parallel: games played at once (default: the number of CPU cores).
    max_moves: the game is scored after this many moves (default 2 * size * size).
    timeout: seconds per command; startup_timeout: for the first command of each kind.
    seed: the first '{seed}' value.
    sprt: a sequential test of A against B (match.Sprt) over games: its line is logged after
      each game
      and no game starts once it has accepted H0 or H1 (those under way finish); `games`
      is then the most that may be played.
    openings: action sequences (load_openings); games 2k and 2k + 1 both start from opening
      k (cycling), A black in one and B in the other. A match resumes only with the openings
      it was started with.
    sprt_pairs: with openings, the test counts whole pairs of games (Sprt.pair_llr) instead.
    first_game: play only games first_game .. games - 1, with the colours and openings of
      those numbers: the rest of a match whose first games were played elsewhere.
    log: called with each progress line.

  Returns:
    The results lines of all games (resumed ones included), in game order.

  Raises:
    ValueError: bad arguments or an --out of another match.
    RuntimeError: an engine that cannot be started, or a bug; the games played
      until then are saved.
  """
  names = player_names(commands, names)
  if games < 1:
    raise ValueError(f"--games must be positive, got {games}")
  if not 0 <= first_game < games:
    raise ValueError(f"--first-game must be at least 0 and below --games ({games}), got "
                     f"{first_game}")
  if sprt_pairs and not (sprt and openings):
    raise ValueError("counting the SPRT by pairs of games needs --sprt and --openings (the "
                     "pairs share openings)")
  cfg = go.GoConfig(size=size, komi=komi, max_moves=max_moves)
  os.makedirs(os.path.join(out, "games"), exist_ok=True)
  os.makedirs(os.path.join(out, "logs"), exist_ok=True)
  done = _read_done(out, names, cfg)
  _check_openings(out, done, openings)
  parallel = max(1, min(parallel or os.cpu_count() or 1, games))
  match = _Match(commands, names, cfg, out, games, parallel, seed, timeout, startup_timeout,
                 done, log, sprt, openings, sprt_pairs, first_game)
  if done:
    log(f"resuming {out}: {len(done)} of {games} games already played")
  threads = [threading.Thread(target=match.worker, args=(w,), daemon=True)
             for w in range(min(parallel, len(match.todo)))]
  for thread in threads:
    thread.start()
  try:
    for thread in threads:
      while thread.is_alive():
        thread.join(0.5)
  except KeyboardInterrupt:
    match.interrupt()
    for thread in threads:
      thread.join()
    raise
  if match.fatal:
    raise RuntimeError(match.fatal)
  return sorted(match.results, key=lambda r: r["game"])
