"""Elo ratings of every player from the results of one or more matches.

  python -m agz_jax.ratings matches/gnugo_vs_random matches/net_vs_gnugo \\
      [--anchor gnugo-l10 --anchor-elo 1800] [--json ratings.json]

The model is Bradley-Terry on the Elo scale: player i scores against player j
with probability 1 / (1 + 10^((R_j - R_i) / 400)); a draw counts as half a win
for each side. Ratings maximise the likelihood of all games (Newton's method)
under a weak Gaussian prior, sd `prior_sd` Elo (default 1000) around the mean,
on every rating: a tiny ridge that keeps a player who won (or lost) every game
finite, and moves ratings from a few hundred games by well under one Elo.
Ratings are then shifted so that the anchor has `anchor_elo`. The standard
error of each rating is that of its difference from the anchor's, from the
inverse of the Fisher information (the negative Hessian of the log posterior).
"""

import argparse
import json
import os
import sys

import numpy as np

from agz_jax.stats import ELO_PER_LOG_ODDS


def load_results(directories: list[str]) -> list[dict]:
  """The results lines of every directory's results.jsonl (written by agz_jax.match).

  Raises:
    ValueError: a directory without results.jsonl, or a malformed line.
  """
  results = []
  for directory in directories:
    path = os.path.join(directory, "results.jsonl")
    if not os.path.isfile(path):
      raise ValueError(f"{directory} has no results.jsonl (not a match directory?)")
    with open(path, encoding="utf-8") as f:
      for number, text in enumerate(f, start=1):
        if not text.strip():
          continue
        try:
          line = json.loads(text)
          black, white, winner = line["black"], line["white"], line["winner"]
        except (json.JSONDecodeError, KeyError, TypeError) as e:
          raise ValueError(f"{path} line {number}: not a results line ({e})") from None
        if black == white:
          raise ValueError(f"{path} line {number}: {black!r} plays itself")
        if winner not in (black, white, None):
          raise ValueError(f"{path} line {number}: winner {winner!r} did not play")
        results.append(line)
  if not results:
    raise ValueError("no games in " + ", ".join(directories))
  return results


def tally(results: list[dict]) -> tuple[list[str], np.ndarray, np.ndarray]:
  """Players (sorted), games[i, j] between i and j, and points[i, j] that i scored against j."""
  players = sorted({r["black"] for r in results} | {r["white"] for r in results})
  index = {name: i for i, name in enumerate(players)}
  games = np.zeros((len(players), len(players)))
  points = np.zeros_like(games)
  for r in results:
    b, w = index[r["black"]], index[r["white"]]
    games[b, w] += 1
    games[w, b] += 1
    score = 0.5 if r["winner"] is None else float(r["winner"] == r["black"])
    points[b, w] += score
    points[w, b] += 1 - score
  return players, games, points


def _components(games: np.ndarray) -> list[list[int]]:
  seen, groups = set(), []
  for start in range(len(games)):
    if start in seen:
      continue
    group, stack = [], [start]
    seen.add(start)
    while stack:
      i = stack.pop()
      group.append(i)
      for j in np.flatnonzero(games[i]):
        if int(j) not in seen:
          seen.add(int(j))
          stack.append(int(j))
    groups.append(sorted(group))
  return groups


def fit(games: np.ndarray, points: np.ndarray, *, prior_sd: float = 1000.0,
        anchor: int = 0, anchor_elo: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
  """Maximum a posteriori Elo ratings under the Bradley-Terry model.

  Args:
    games: [n, n] games played between each pair (symmetric).
    points: [n, n] points (wins + draws / 2) of row player against column player.
    prior_sd: sd in Elo of the Gaussian prior on each rating.
    anchor: index of the player whose rating is fixed.
    anchor_elo: that player's rating.

  Returns:
    ([n] Elo ratings, [n] standard errors relative to the anchor, 0 for it).

  Raises:
    ValueError: when the players are not all connected by games.
  """
  n = len(games)
  groups = _components(games)
  if len(groups) > 1:
    raise ValueError(f"players are not connected by games: {len(groups)} separate groups")
  ridge = (ELO_PER_LOG_ODDS / prior_sd) ** 2
  theta = np.zeros(n)

  def log_posterior(t):
    d = t[:, None] - t[None, :]
    return float(np.sum(points * -np.logaddexp(0, -d)) - ridge * np.sum(t * t) / 2)

  current = log_posterior(theta)
  for _ in range(100):
    d = theta[:, None] - theta[None, :]
    p = 1 / (1 + np.exp(-d))
    gradient = np.sum(points - games * p, axis=1) - ridge * theta
    weights = games * p * (1 - p)
    information = np.diag(weights.sum(axis=1)) - weights + ridge * np.eye(n)
    step = np.linalg.solve(information, gradient)
    scale = 1.0
    while scale > 1e-6:  # The posterior is concave; halving only guards against overshoot.
      candidate = log_posterior(theta + scale * step)
      if candidate >= current - 1e-12:
        break
      scale /= 2
    theta, current = theta + scale * step, candidate
    if np.max(np.abs(scale * step)) < 1e-10:
      break
  d = theta[:, None] - theta[None, :]
  p = 1 / (1 + np.exp(-d))
  weights = games * p * (1 - p)
  covariance = np.linalg.inv(np.diag(weights.sum(axis=1)) - weights + ridge * np.eye(n))
  variance = np.diag(covariance) + covariance[anchor, anchor] - 2 * covariance[:, anchor]
  elo = ELO_PER_LOG_ODDS * (theta - theta[anchor]) + anchor_elo
  return elo, ELO_PER_LOG_ODDS * np.sqrt(np.maximum(variance, 0.0))


def table(players, games, points, elo, se, anchor: int) -> str:
  """Players sorted by rating: Elo, standard error, games, score."""
  width = max(6, *(len(p) for p in players))
  lines = [f"{'rank':>4}  {'player':<{width}}  {'elo':>7}  {'+-se':>6}  {'games':>5}  {'score':>6}"]
  for rank, i in enumerate(np.argsort(-elo, kind="stable"), start=1):
    played = games[i].sum()
    note = "  (anchor)" if i == anchor else ""
    lines.append(f"{rank:4d}  {players[i]:<{width}}  {elo[i]:7.1f}  {se[i]:6.1f}  {played:5.0f}  "
                 f"{100 * points[i].sum() / played:5.1f}%{note}")
  return "\n".join(lines)


def as_json(players, games, points, elo, se, anchor: int, anchor_elo: float) -> dict:
  """The ratings as plain data: {"anchor", "anchor_elo", "players": {name: {elo, se, games,
  score}}} (score: the fraction of points a player took from its games)."""
  return {"anchor": players[anchor], "anchor_elo": anchor_elo,
          "players": {name: {"elo": float(elo[i]), "se": float(se[i]),
                             "games": int(games[i].sum()),
                             "score": float(points[i].sum() / games[i].sum())}
                      for i, name in enumerate(players)}}


def main(argv=None):
  parser = argparse.ArgumentParser(description="Elo ratings from match results (results.jsonl).")
  parser.add_argument("directories", nargs="+", metavar="DIR", help="match output directories")
  parser.add_argument("--anchor", default=None,
                      help="player whose rating is fixed (default: first alphabetically)")
  parser.add_argument("--anchor-elo", type=float, default=0.0)
  parser.add_argument("--prior-sd", type=float, default=1000.0,
                      help="sd (Elo) of the Gaussian prior that keeps undefeated players finite")
  parser.add_argument("--json", metavar="FILE",
                      help="also write the ratings there (what `python -m agz_jax.plot "
                           "--ratings FILE` draws)")
  parser.add_argument("--without-failures", action="store_true",
                      help="leave out the games an engine failed in (crashed, hung, answered "
                           "junk); by default such a game is a loss for that engine")
  args = parser.parse_args(argv)
  try:
    results = load_results(args.directories)
    if args.without_failures:
      results = [r for r in results if r.get("reason") != "error"]
      if not results:
        raise ValueError("no games left without the ones an engine failed in")
    players, games, points = tally(results)
    if args.anchor is not None and args.anchor not in players:
      raise ValueError(f"anchor {args.anchor!r} is not a player (players: {', '.join(players)})")
    groups = _components(games)
    if len(groups) > 1:
      raise ValueError("players not connected by games: " + " | ".join(
          ", ".join(players[i] for i in g) for g in groups))
    anchor = players.index(args.anchor) if args.anchor is not None else 0
    elo, se = fit(games, points, prior_sd=args.prior_sd, anchor=anchor,
                  anchor_elo=args.anchor_elo)
  except ValueError as e:
    sys.exit(f"ratings: {e}")
  print(table(players, games, points, elo, se, anchor))
  if args.json:
    with open(args.json, "w", encoding="utf-8") as f:
      json.dump(as_json(players, games, points, elo, se, anchor, args.anchor_elo), f, indent=1)
  print(f"{int(games.sum() / 2)} games; {players[anchor]} fixed at {args.anchor_elo:g} Elo; +-se: "
        f"standard error relative to it (inverse Fisher information); Gaussian prior sd "
        f"{args.prior_sd:g} Elo on each rating keeps undefeated players finite.")


if __name__ == "__main__":
  main()
