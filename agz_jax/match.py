"""Matches between two GTP engines, refereed and scored by our rules.

  python -m agz_jax.match \\
      --black "/usr/games/gnugo --mode gtp --level 1 --chinese-rules --capture-all-dead" \\
      --white "python -m agz_jax.gtp --random --seed {seed}" \\
      --games 20 --size 9 --komi 7.5 --out matches/gnugo_vs_random

`--black` is engine A and `--white` engine B: A has black in the even games
(0, 2, ...), B in the odd ones. Each of the P parallel workers owns one process
of each engine and reuses it (clear_board) from game to game; `{seed}` in a
command becomes a number of its own for every process, so that two workers do
not replay the same games against a deterministic opponent.

Every move is checked with our rules: a move they reject (occupied, suicide,
positional superko), a refused command, a crash or a timeout loses the game for
that engine. Games that end with two passes or at the move limit are counted
with Tromp-Taylor area scoring (go.score); both engines' own `final_score`
answers are logged next to ours. GNU Go needs --chinese-rules
--capture-all-dead to play under this scoring (without the second flag it
passes with dead stones on the board, which area scoring then counts as alive);
it only knows simple ko unless given --positional-superko, so without that flag
a rare superko repetition loses it the game here.

Output: DIR/games/NNNN.sgf, one JSON line per game in DIR/results.jsonl (read
by agz_jax.ratings), each engine process's stderr in DIR/logs/. Running the
same command again on the same DIR plays only the games not yet in
results.jsonl.
"""

import argparse
import dataclasses
import datetime
import json
import math
import os
import select
import shlex
import subprocess
import sys
import threading
import time
import traceback

import jax

from agz_jax import go, sgf
from agz_jax.stats import elo_difference, wilson_interval

_LETTER = {go.BLACK: "b", go.WHITE: "w"}


# -- engine names -----------------------------------------------------------------------------

def _option(args: list[str], flag: str) -> str | None:
  for i, arg in enumerate(args):
    if arg == flag and i + 1 < len(args):
      return args[i + 1]
    if arg.startswith(flag + "="):
      return arg.split("=", 1)[1]
  return None


def default_name(command: str) -> str:
  """A readable player name from an engine command: 'gnugo-l1', 'random', 'agz_jax-run3'."""
  argv = shlex.split(command)
  if not argv:
    raise ValueError("empty engine command")
  program, args = os.path.basename(argv[0]), argv[1:]
  module = None
  if program.startswith("python") and "-m" in args[:-1]:
    at = args.index("-m")
    module, args = args[at + 1], args[at + 2:]
  if module == "agz_jax.gtp":
    if "--random" in args:
      return "random"
    checkpoint = _option(args, "--checkpoint") or "network"
    name = "agz_jax-" + os.path.basename(os.path.normpath(checkpoint))
    if "--policy-only" in args:
      return name + "-policy"
    simulations = _option(args, "--simulations")
    return f"{name}-s{simulations}" if simulations else name
  if program.startswith("gnugo"):
    return f"gnugo-l{_option(args, '--level') or 10}"
  if module:
    return module.rsplit(".", 1)[-1]
  return os.path.splitext(program)[0]


def player_names(commands: list[str], names: list[str] | None = None) -> list[str]:
  """[A, B] names: the given ones or default_name's; equal names get '-A' and '-B'."""
  if len(commands) != 2 or (names is not None and len(names) != 2):
    raise ValueError("a match needs two engines and two names")
  names = list(names) if names else [default_name(c) for c in commands]
  if names[0] == names[1]:
    names = [names[0] + "-A", names[1] + "-B"]
  return names


# -- GTP processes ----------------------------------------------------------------------------

class GtpRefused(Exception):
  """The engine answered a command with '? message'."""


class EngineFailure(Exception):
  """The engine crashed, closed its output or did not answer in time."""

  def __init__(self, message: str, timed_out: bool = False):
    super().__init__(message)
    self.timed_out = timed_out


class EngineStartError(Exception):
  """An engine process could not be started or never answered its first command."""


class GtpProcess:
  """One engine process, spoken to over GTP through its stdin and stdout.

  The first time each command name is sent (boardsize, genmove, ...) it may
  take `startup_timeout`: a JAX engine compiles then. After that each command
  has `timeout` seconds. After a failure the process is dead and is replaced.

  Args:
    argv: the command line.
    name: the player's name, for messages.
    log_path: the process's stderr is appended to this file.
    timeout, startup_timeout: seconds.
    seed: the value of '{seed}' in argv, kept for the results.
  """

  def __init__(self, argv: list[str], name: str, log_path: str, *, timeout: float,
               startup_timeout: float, seed: int | None = None):
    self.argv, self.name, self.log_path, self.seed = argv, name, log_path, seed
    self.timeout, self.startup_timeout = timeout, startup_timeout
    self._warm = set()
    self._buffer = b""
    self._closing = threading.Lock()
    self.alive = False
    env = dict(os.environ)
    # Several JAX engines may share one accelerator: none may take 75% of its memory up front.
    env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    self._log = open(log_path, "ab")  # pylint: disable=consider-using-with
    try:
      # A session of its own: Ctrl-C reaches only the match, which then shuts the engines
      # down itself, after it has stopped recording games.
      self._process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=self._log, env=env, start_new_session=True)
    except OSError as e:
      self._log.close()
      raise EngineStartError(f"cannot start {name} ({shlex.join(argv)}): {e}") from None
    self.alive = True
    try:
      self.send("protocol_version")
    except (EngineFailure, GtpRefused) as e:
      self.close()
      raise EngineStartError(f"{name} ({shlex.join(argv)}) did not start: {e}\n"
                             f"last lines of {log_path}:\n{self.log_tail()}") from None

  def log_tail(self, lines: int = 10) -> str:
    try:
      with open(self.log_path, "rb") as f:
        text = f.read()[-4000:].decode("utf-8", errors="replace")
    except OSError:
      return ""
    return "\n".join(text.splitlines()[-lines:])

  def send(self, command: str) -> str:
    """Sends one command; returns the text of a '=' answer.

    Raises:
      GtpRefused: for a '?' answer (the process stays usable).
      EngineFailure: crash, closed output or timeout (the process is then dead).
    """
    if not self.alive:
      raise EngineFailure(f"{self.name} is not running")
    kind = command.split()[0]
    timeout = self.timeout if kind in self._warm else max(self.timeout, self.startup_timeout)
    try:
      self._process.stdin.write(command.encode() + b"\n")
      self._process.stdin.flush()
    except (BrokenPipeError, OSError):
      self._die()
      raise EngineFailure(
          f"{self.name} crashed before {command!r} ({self._exit_status()})") from None
    deadline = time.monotonic() + timeout
    while True:
      answer = self._take_answer()
      if answer is not None:
        break
      left = deadline - time.monotonic()
      if left <= 0:
        self._die()
        raise EngineFailure(f"{self.name} timed out after {timeout:g} s on {command!r}",
                            timed_out=True)
      ready, _, _ = select.select([self._process.stdout], [], [], left)
      if ready:
        chunk = os.read(self._process.stdout.fileno(), 65536)
        if not chunk:
          self._die()
          raise EngineFailure(f"{self.name} crashed on {command!r} ({self._exit_status()})")
        self._buffer += chunk.replace(b"\r", b"")
    self._warm.add(kind)
    ok, text = answer[0] == "=", answer[1:].lstrip("0123456789").strip()
    if not ok:
      raise GtpRefused(text or "refused")
    return text

  def _take_answer(self) -> str | None:
    """The next complete answer in the buffer ('=...' or '?...' up to a blank line)."""
    while self._buffer and self._buffer[:1] not in (b"=", b"?"):
      newline = self._buffer.find(b"\n")
      if newline < 0:
        return None
      self._buffer = self._buffer[newline + 1:]  # Noise outside GTP answers.
    end = self._buffer.find(b"\n\n")
    if end < 0:
      return None
    answer, self._buffer = self._buffer[:end], self._buffer[end + 2:]
    return answer.decode("utf-8", errors="replace")

  def _exit_status(self) -> str:
    try:
      code = self._process.wait(timeout=2)
    except subprocess.TimeoutExpired:
      return "still running, output closed"
    return f"exit code {code}"

  def _die(self):
    self.close(grace=0)  # it has exited or stopped answering: no point asking it to quit

  def close(self, grace: float = 3.0):
    """Asks the engine to quit, kills it after `grace` seconds; leaves no process behind."""
    self.alive = False
    with self._closing:
      process = self._process
      if process.poll() is None and grace > 0:
        try:
          process.stdin.write(b"quit\n")
          process.stdin.flush()
          process.wait(timeout=grace)
        except (OSError, ValueError, subprocess.TimeoutExpired):
          pass
      if process.poll() is None:
        process.kill()
        process.wait()
      for stream in (process.stdin, process.stdout):
        try:
          stream.close()
        except OSError:
          pass
      self._log.close()


# -- one game ---------------------------------------------------------------------------------

@dataclasses.dataclass
class Outcome:
  """How a game ended.

  Attributes:
    winner: go.BLACK, go.WHITE, or 0 for a draw.
    result: SGF RE value ('B+3.5', 'W+R', 'B+F', 'W+T', '0').
    reason: 'score', 'resign', 'illegal', 'forfeit' (a refused command) or
      'error' (crash, timeout, an answer that is not a vertex).
    detail: one readable line.
    moves: (colour, action) pairs played.
    final_score: each colour's engine's answer to final_score, or None.
  """

  winner: int
  result: str
  reason: str
  detail: str
  moves: list
  final_score: dict


def _loss(colour: int, reason: str, detail: str, moves: list, flag: str = "F") -> Outcome:
  winner = -colour
  return Outcome(winner, sgf.format_result(winner, flag), reason, detail, moves,
                 {"black": None, "white": None})


def _failure(colour: int, error: Exception, moves: list) -> Outcome:
  if isinstance(error, GtpRefused):
    return _loss(colour, "forfeit", str(error), moves)
  timed_out = isinstance(error, EngineFailure) and error.timed_out
  return _loss(colour, "error", str(error), moves, "T" if timed_out else "F")


def play_game(cfg: go.GoConfig, engines: dict, names: dict) -> Outcome:
  """Plays one game between two GTP processes, refereed by our rules.

  Args:
    cfg: size, komi and move limit of the game.
    engines: {go.BLACK: GtpProcess, go.WHITE: GtpProcess}.
    names: {go.BLACK: name, go.WHITE: name}, for messages.
  """
  moves = []
  for colour in (go.BLACK, go.WHITE):
    for command in (f"boardsize {cfg.size}", f"komi {cfg.komi:g}", "clear_board"):
      try:
        engines[colour].send(command)
      except GtpRefused as e:
        return _loss(colour, "forfeit", f"{names[colour]} refused {command!r}: {e}", moves)
      except EngineFailure as e:
        return _failure(colour, e, moves)
  state = go.init(cfg)
  while not bool(state.terminated):
    colour = int(state.to_play)
    letter = _LETTER[colour]
    try:
      answer = engines[colour].send(f"genmove {letter}")
    except GtpRefused as e:
      return _loss(colour, "forfeit", f"{names[colour]} refused 'genmove {letter}': {e}", moves)
    except EngineFailure as e:
      return _failure(colour, e, moves)
    vertex = answer.split()[0] if answer.split() else ""
    if vertex.lower() == "resign":
      return _loss(colour, "resign", f"{names[colour]} resigned", moves, "R")
    try:
      action = go.gtp_to_action(cfg, vertex)
    except ValueError:
      return _loss(colour, "error", f"{names[colour]} answered genmove with {answer!r}", moves)
    why = go.illegal_reason(cfg, state, action)
    if why is not None:
      return _loss(colour, "illegal", f"{names[colour]} played {vertex.upper()}: {why}", moves)
    state = go.play(cfg, [action], state)
    moves.append((colour, action))
    vertex = go.action_to_gtp(cfg, action)
    try:
      engines[-colour].send(f"play {letter} {vertex}")
    except GtpRefused as e:
      return _loss(-colour, "forfeit",
                   f"{names[-colour]} refused the legal move {letter.upper()} {vertex}: {e}", moves)
    except EngineFailure as e:
      return _failure(-colour, e, moves)
  score = float(go.host_score(cfg, state))
  winner = int(math.copysign(1, score)) if score else 0
  result = sgf.format_result(winner, score)
  ended = "two passes" if int(state.passes) >= 2 else f"move limit {cfg.max_moves}"
  final_score = {}
  for colour, key in ((go.BLACK, "black"), (go.WHITE, "white")):
    try:
      final_score[key] = engines[colour].send("final_score")
    except (GtpRefused, EngineFailure):
      final_score[key] = None
  return Outcome(winner, result, "score", f"{ended}; Tromp-Taylor {result}", moves, final_score)


# -- the match --------------------------------------------------------------------------------

def _claimed_winner(answer: str | None) -> int | None:
  """The winner an engine's final_score names (go.BLACK, go.WHITE, 0), None if unreadable."""
  text = (answer or "").strip().upper()
  if text.startswith("B+"):
    return go.BLACK
  if text.startswith("W+"):
    return go.WHITE
  return 0 if text in ("0", "DRAW", "JIGO") else None


class _Match:
  """Shared state of the workers: the games left, the results so far, the output files."""

  def __init__(self, commands, names, cfg, out, games, parallel, seed, timeout, startup_timeout,
               done, log):
    self.commands, self.names, self.cfg, self.out = commands, names, cfg, out
    self.parallel = parallel
    self.timeout, self.startup_timeout = timeout, startup_timeout
    self.todo = [g for g in range(games) if g not in {r["game"] for r in done}]
    self.results = list(done)
    self.total = games
    self.log = log
    seeds = [v for r in done for v in (r.get("seeds") or {}).values() if v is not None]
    self.first_seed = max([seed] + [v + 1 for v in seeds])  # a resumed match reuses no seed
    self.lock = threading.Lock()
    self.stop = threading.Event()
    self.interrupted = False
    self.fatal = None
    self.processes = set()

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

  def record(self, game: int, black: int, outcome: Outcome, seconds: float, seeds: dict):
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
        "max_moves": cfg.max_moves, "seconds": round(seconds, 2), "sgf": path, "seeds": seeds}
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
        begin = time.monotonic()
        outcome = play_game(self.cfg, engines, names)
        self.record(game, black, outcome, time.monotonic() - begin,
                    {"black": engines[go.BLACK].seed, "white": engines[go.WHITE].seed})
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
              log=print) -> list[dict]:
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
  cfg = go.GoConfig(size=size, komi=komi, max_moves=max_moves)
  os.makedirs(os.path.join(out, "games"), exist_ok=True)
  os.makedirs(os.path.join(out, "logs"), exist_ok=True)
  done = _read_done(out, names, cfg)
  parallel = max(1, min(parallel or os.cpu_count() or 1, games))
  match = _Match(commands, names, cfg, out, games, parallel, seed, timeout, startup_timeout,
                 done, log)
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


def summary(names: list[str], results: list[dict]) -> str:
  """The results table: per engine, wins, losses, draws and win rate with a 95% Wilson
  interval; the Elo difference of A over B with its interval from the Wilson bounds."""
  lines = []
  n = len(results)
  width = max(6, *(len(x) for x in names))
  lines.append(f"{'engine':<{width}}  wins  losses  draws  win rate  95% interval     as black "
               f"(w-l-d)")
  rates = {}
  for name in names:
    wins = sum(r["winner"] == name for r in results)
    draws = sum(r["winner"] is None for r in results)
    losses = n - wins - draws
    as_black = [r for r in results if r["black"] == name]
    black_wins = sum(r["winner"] == name for r in as_black)
    black_draws = sum(r["winner"] is None for r in as_black)
    black = (black_wins, len(as_black) - black_wins - black_draws, black_draws)
    rate = (wins + draws / 2) / n if n else 0.0
    lo, hi = wilson_interval(wins + draws / 2, n)
    rates[name] = (rate, lo, hi)
    lines.append(f"{name:<{width}}  {wins:4d}  {losses:6d}  {draws:5d}  {100 * rate:7.1f}%  "
                 f"[{100 * lo:5.1f}%, {100 * hi:5.1f}%]  {black[0]}-{black[1]}-{black[2]}")
  a, b = names
  rate, lo, hi = rates[a]
  lines.append(f"Elo of {a} over {b}: {elo_difference(rate):+.0f}, 95% interval "
               f"[{elo_difference(lo):+.0f}, {elo_difference(hi):+.0f}] ({n} games)")
  reasons = {}
  for r in results:
    reasons[r["reason"]] = reasons.get(r["reason"], 0) + 1
  lines.append("endings: " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())))
  disagreements = {name: [] for name in names}
  for r in results:
    if r["reason"] != "score":
      continue
    ours = _claimed_winner(r["result"])
    for key in ("black", "white"):
      claimed = _claimed_winner(r["final_score"].get(key))
      if claimed is not None and claimed != ours:
        disagreements[r[key]].append(r["game"])
  for name, games in disagreements.items():
    if games:
      lines.append(f"note: {name}'s final_score named another winner than our Tromp-Taylor count "
                   f"in {len(games)} games (e.g. game {games[0]})")
  return "\n".join(lines)


def main(argv=None):
  parser = argparse.ArgumentParser(
      description="Play a match between two GTP engines, scored by our rules.")
  parser.add_argument("--black", required=True, help="engine A's command (black in even games)")
  parser.add_argument("--white", required=True, help="engine B's command (black in odd games)")
  parser.add_argument("--games", type=int, required=True)
  parser.add_argument("--size", type=int, required=True)
  parser.add_argument("--komi", type=float, required=True)
  parser.add_argument("--out", required=True, help="output directory")
  parser.add_argument("--parallel", type=int, default=None,
                      help="games at once (default: CPU cores)")
  parser.add_argument("--max-moves", type=int, default=None, help="default 2 * size * size")
  parser.add_argument("--names", nargs=2, metavar=("A", "B"), default=None)
  parser.add_argument("--timeout", type=float, default=60.0, help="seconds per GTP command")
  parser.add_argument("--startup-timeout", type=float, default=300.0,
                      help="seconds for each engine's first command of each kind (JAX compiles)")
  parser.add_argument("--seed", type=int, default=0, help="first value of {seed} in the commands")
  args = parser.parse_args(argv)
  # The referee's rule checks are tiny: keep them off any accelerator the engines may use.
  jax.config.update("jax_platforms", "cpu")
  commands = [args.black, args.white]
  try:
    names = player_names(commands, args.names)
    results = run_match(commands, names, games=args.games, size=args.size, komi=args.komi,
                        out=args.out, parallel=args.parallel, max_moves=args.max_moves,
                        timeout=args.timeout, startup_timeout=args.startup_timeout, seed=args.seed,
                        log=lambda line: print(line, flush=True))
  except (ValueError, RuntimeError) as e:
    sys.exit(f"match: {e}")
  except KeyboardInterrupt:
    sys.exit(f"match: interrupted; finished games are in {args.out} (the same command goes on)")
  print(summary(names, results))


if __name__ == "__main__":
  main()
