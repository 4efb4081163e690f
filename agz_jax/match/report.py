"""Names of the engines from their commands, and the summary table of a match."""

import os
import shlex

from agz_jax import go
from agz_jax.stats import elo_difference, wilson_interval


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


def _claimed_winner(answer: str | None) -> int | None:
  """The winner an engine's final_score names (go.BLACK, go.WHITE, 0), None if unreadable."""
  text = (answer or "").strip().upper()
  if text.startswith("B+"):
    return go.BLACK
  if text.startswith("W+"):
    return go.WHITE
  return 0 if text in ("0", "DRAW", "JIGO") else None


def _record(name: str, results: list[dict]) -> tuple[int, int, int]:
  """(wins, losses, draws) of `name` in `results`."""
  wins = sum(r["winner"] == name for r in results)
  draws = sum(r["winner"] is None for r in results)
  return wins, len(results) - wins - draws, draws


def _rate(wins: int, draws: int, games: int) -> tuple[float, float, float]:
  """Win rate (a draw half a win) and its 95% Wilson interval."""
  rate = (wins + draws / 2) / games if games else 0.0
  return (rate, *wilson_interval(wins + draws / 2, games))


def summary(names: list[str], results: list[dict]) -> str:
  """The results table: per engine, wins, losses, draws and win rate with a 95% Wilson
  interval; the Elo difference of A over B with its interval from the Wilson bounds. A game
  an engine failed in (crashed, hung, answered junk) is a loss for it; when there are such
  games, a line gives A's result without them, as they say nothing of the engines' play."""
  lines = []
  n = len(results)
  width = max(6, *(len(x) for x in names))
  lines.append(f"{'engine':<{width}}  wins  losses  draws  win rate  95% interval     as black "
               f"(w-l-d)")
  rates = {}
  for name in names:
    wins, losses, draws = _record(name, results)
    as_black = [r for r in results if r["black"] == name]
    black = _record(name, as_black)
    rates[name] = _rate(wins, draws, n)
    rate, lo, hi = rates[name]
    lines.append(f"{name:<{width}}  {wins:4d}  {losses:6d}  {draws:5d}  {100 * rate:7.1f}%  "
                 f"[{100 * lo:5.1f}%, {100 * hi:5.1f}%]  {black[0]}-{black[1]}-{black[2]}")
  a, b = names
  rate, lo, hi = rates[a]
  lines.append(f"Elo of {a} over {b}: {elo_difference(rate):+.0f}, 95% interval "
               f"[{elo_difference(lo):+.0f}, {elo_difference(hi):+.0f}] ({n} games)")
  played = [r for r in results if r["reason"] != "error"]
  if len(played) < n:
    wins, losses, draws = _record(a, played)
    rate, lo, hi = _rate(wins, draws, len(played))
    lines.append(f"without the {n - len(played)} games an engine failed in: {a} {wins}-{losses}-"
                 f"{draws}, {100 * rate:.1f}% [{100 * lo:.1f}%, {100 * hi:.1f}%], Elo "
                 f"{elo_difference(rate):+.0f} [{elo_difference(lo):+.0f}, "
                 f"{elo_difference(hi):+.0f}] ({len(played)} games)")
  reasons = {}
  for r in results:
    reasons[r["reason"]] = reasons.get(r["reason"], 0) + 1
  lines.append("endings: " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())))
  seen, repeats = set(), 0
  for key in (r.get("game_key") for r in results):  # results files from before it have none
    if key:
      repeats += key in seen
      seen.add(key)
  if repeats:
    lines.append(f"note: {repeats} of {n} games repeat an earlier game move for move: the engines "
                 f"play alike each time, so those games add no evidence; start pairs of games "
                 f"from --openings or --random-openings")
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
