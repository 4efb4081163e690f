"""A round robin between trained networks, every game on device, rated like GTP matches.

  python -m agz_jax.tournament --player all=workdir/ablation/all \\
      --player baseline=workdir/ablation/baseline --games 64 --simulations 32 \\
      --out matches/ablation_round_robin
  python -m agz_jax.ratings matches/ablation_round_robin matches/all_vs_gnugo1 --anchor gnugo-l1

Each pair plays `--games` games at once (arena.play_match, half with each
colour, the first moves sampled so that the games differ), each network with
its own search at a fixed number of simulations. The games go to
OUT/results.jsonl in the format of `agz_jax.match`, so `agz_jax.ratings`
rates them together with matches against GTP engines (GNU Go as the anchor).
The networks must play the same game (board size, komi, history).

`--opponent NAME` adds a scripted player of the game (Dots and Boxes: random,
greedy), which plays every network but not the other scripted players:

  python -m agz_jax.tournament --player boxes=workdir/dots_3x3 --opponent random \
      --opponent greedy --games 100 --simulations 64 --out matches/dots_3x3

`--policy-only` compares Go policy networks without search, the way AlphaGo's
paper compares its RL and SL policies: every move of both sides is sampled
from the policy over the sensible moves (legal, not filling one's own eye), a
side with none passes, and each game is played to the end and scored:

  python -m agz_jax.tournament --player rl=workdir/rl_policy_cpu \
      --player sl=pretrained/alphago-19x19/sl_policy --policy-only --games 200 \
      --out matches/rl_vs_sl
"""

import argparse
import itertools
import json
import os
import sys
import time

import jax
import jax.numpy as jnp

from agz_jax import arena, game as game_lib, go, policy_games, search
from agz_jax.metrics import format_eta


def parse_player(text: str) -> tuple[str, str]:
  """'NAME=CHECKPOINT' -> (name, checkpoint)."""
  name, sep, path = text.partition("=")
  if not sep or not name or not path:
    raise ValueError(f"--player {text!r}: give NAME=CHECKPOINT (a training workdir or checkpoint)")
  return name, path


def _same_game(networks: dict) -> game_lib.Game:
  """The one game every network plays; a ValueError naming the first that differs."""
  games = {name: game_lib.make(net.config.game) for name, net in networks.items()}
  (first, game), *rest = games.items()
  for name, other in rest:
    if other != game:
      raise ValueError(f"{name} plays {other.cfg}, {first} plays {game.cfg}: a round robin "
                       f"needs one game")
  return game


def _match(game, a, b, settings, *, games: int, temperature_moves: int):
  """The jitted match of network a against b (their evaluators are static), or against the
  game's scripted player b (a name: its variables are then ignored). Networks of the same
  shape share one compiled match: a round robin of one run's checkpoints compiles once."""
  shape = lambda net: net if isinstance(net, str) else (
      json.dumps(net.config.model.to_dict(), sort_keys=True), net.encoding)
  return _compiled(game, shape(a), shape(b), a, b, settings, games, temperature_moves)


_CACHE = {}


def _compiled(game, shape_a, shape_b, a, b, settings, games, temperature_moves):
  key = (game, shape_a, shape_b, settings, games, temperature_moves)
  if key in _CACHE:
    return _CACHE[key]
  eval_a = search.flax_network(game, a.model, a.encoding)
  if isinstance(b, str):
    opponent = game.opponent(b)
    match = jax.jit(lambda va, vb, key: arena.play_match(
        game, eval_a, va, None, key, num_games=games, search=settings,
        temperature_moves=temperature_moves, moves_b=opponent, per_game=True))
  else:
    eval_b = search.flax_network(game, b.model, b.encoding)
    match = jax.jit(lambda va, vb, key: arena.play_match(
        game, eval_a, va, vb, key, num_games=games, search=settings,
        temperature_moves=temperature_moves, evaluator_b=eval_b, per_game=True))
  _CACHE[key] = match
  return match


def check_policies(game: game_lib.Game, networks: dict) -> None:
  """Raises a ValueError naming the first network that cannot play a --policy-only match: one
  with a value output, or with another architecture or planes than the first (the games of a
  pair run through one compiled policy)."""
  if game.module is not go:
    raise ValueError(f"--policy-only plays Go policy networks; these play {game.module.__name__}")
  (first, net), *_ = networks.items()
  for name, other in networks.items():
    if other.has_value:
      raise ValueError(f"--policy-only: {name} has a value output; it compares policy networks "
                       "(tasks sl_policy, rl_policy): drop --policy-only to search with it")
    if (other.config.model.to_dict(), other.encoding) != (net.config.model.to_dict(), net.encoding):
      raise ValueError(f"--policy-only: {name} is a {other.name} on {other.encoding}, {first} a "
                       f"{net.name} on {net.encoding}: compare networks of one architecture")


def _policy_match(game, a, games: int):
  """The jitted match of two policies alone (a's architecture for both): (params_a, params_b,
  key) -> the outcome dict of _match."""
  key = ("policy", game, json.dumps(a.config.model.to_dict(), sort_keys=True), a.encoding, games)
  if key not in _CACHE:
    def match(params_a, params_b, rng_key):
      played = policy_games.play_games(game.cfg, a.encoding, a.model, params_a, params_b, rng_key,
                                    num_games=games, record=False)
      z = played.z
      return {"wins": jnp.sum(z > 0), "losses": jnp.sum(z < 0), "draws": jnp.sum(z == 0),
              "length": jnp.mean(played.length.astype(jnp.float32)), "result_a": z,
              "lengths": played.length}

    _CACHE[key] = jax.jit(match)
  return _CACHE[key]


def game_lines(name_a: str, name_b: str, result_a, lengths, *, first_game: int,
               cfg) -> list[dict]:
  """results.jsonl lines of one pair's games (a moves first in the first half)."""
  half = len(result_a) // 2
  lines = []
  for g, (r, moves) in enumerate(zip(result_a, lengths)):
    black, white = (name_a, name_b) if g < half else (name_b, name_a)
    winner = None if r == 0 else (name_a if r > 0 else name_b)
    colour = None if winner is None else ("B" if winner == black else "W")
    lines.append({"game": first_game + g, "black": black, "white": white, "winner": winner,
                  "result": "0" if colour is None else f"{colour}+", "reason": "score",
                  "moves": int(moves),
                  **{k: getattr(cfg, k) for k in ("size", "komi", "rows", "cols")
                     if hasattr(cfg, k)}})
  return lines


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(
      description="Round robin between trained networks, played on device; results.jsonl for "
                  "agz_jax.ratings.")
  parser.add_argument("--player", action="append", required=True, metavar="NAME=CHECKPOINT",
                      help="a network (repeat; at least two, or one and an --opponent)")
  parser.add_argument("--opponent", action="append", default=[], metavar="NAME",
                      help="a scripted player of the game (Dots and Boxes: random, greedy) that "
                           "plays every network (repeat)")
  parser.add_argument("--games", type=int, default=64, help="games per pair (even)")
  parser.add_argument("--simulations", type=int, default=32)
  parser.add_argument("--algorithm", default="gumbel", choices=search.ALGORITHMS[:2])
  parser.add_argument("--temperature-moves", type=int, default=4,
                      help="moves sampled from the search policy at the start of each game")
  parser.add_argument("--policy-only", action="store_true",
                      help="Go policy networks without search: every move sampled from the "
                           "policy over sensible moves (AlphaGo's RL-against-SL comparison)")
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--out", required=True, help="output directory (results.jsonl)")
  args = parser.parse_args(argv)
  try:
    players = dict(parse_player(p) for p in args.player)
    if len(players) + len(args.opponent) < 2 or not players:
      raise ValueError("--player: a round robin needs at least two players, one a network")
    if set(players) & set(args.opponent):
      raise ValueError(f"{sorted(set(players) & set(args.opponent))[0]!r} names a network and "
                       "a scripted player: give the network another name")
    if args.games < 2 or args.games % 2:
      raise ValueError(f"--games must be even and positive (both colours), got {args.games}")
    from agz_jax.players.network import Network  # pylint: disable=import-outside-toplevel
    networks = {name: Network.from_checkpoint(path) for name, path in players.items()}
    game = _same_game(networks)
    for name in args.opponent:
      # Raises for a player the game has not, or one that cannot play this board (the
      # perfect Dots and Boxes player on a board beyond its solution); solves it if it can.
      jax.eval_shape(game.opponent(name), jax.tree.map(lambda x: jnp.asarray(x)[None],
                                                        game.init()), jax.random.PRNGKey(0))
    if args.policy_only:
      if args.opponent:
        raise ValueError("--policy-only compares networks: drop --opponent")
      check_policies(game, networks)
    out = os.path.join(args.out, "results.jsonl")
    if os.path.exists(out):
      raise ValueError(f"{out} exists: give a new --out")
  except (ValueError, FileNotFoundError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  os.makedirs(args.out, exist_ok=True)
  pairs = list(itertools.combinations(sorted(networks), 2))
  pairs += [(name, opponent) for name in sorted(networks) for opponent in args.opponent]
  key = jax.random.PRNGKey(args.seed)
  started, played = time.monotonic(), 0
  with open(out, "w", encoding="utf-8") as f:
    for number, (name_a, name_b) in enumerate(pairs):
      a, b = networks[name_a], networks.get(name_b, name_b)
      if args.policy_only:
        match = _policy_match(game, a, args.games)
        outcome = jax.device_get(match(a.variables["params"], b.variables["params"],
                                       jax.random.fold_in(key, number)))
      else:
        settings = a.search_config(algorithm=args.algorithm, simulations=args.simulations,
                                   considered_actions=16)
        match = _match(game, a, b, settings, games=args.games,
                       temperature_moves=args.temperature_moves)
        variables_b = None if isinstance(b, str) else b.variables
        outcome = jax.device_get(match(a.variables, variables_b,
                                       jax.random.fold_in(key, number)))
      for line in game_lines(name_a, name_b, outcome["result_a"], outcome["lengths"],
                             first_game=played, cfg=game.cfg):
        f.write(json.dumps(line) + "\n")
      f.flush()
      played += args.games
      done = number + 1
      eta = (time.monotonic() - started) / done * (len(pairs) - done)
      print(f"[{done}/{len(pairs)}] {name_a} {int(outcome['wins'])} - "
            f"{int(outcome['losses'])} {name_b} ({int(outcome['draws'])} drawn, "
            f"{float(outcome['length']):.0f} moves a game) ETA {format_eta(eta)}", flush=True)
  print(f"{played} games in {out}; rate them: python -m agz_jax.ratings {args.out}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
