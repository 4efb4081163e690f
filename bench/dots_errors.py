"""Where a Dots and Boxes network's moves against a scripted player leave best play: each of
its moves (and of its raw policy in the same position) judged by the exact solution
(dots_and_boxes.solver), by stage of the game, and the first such move of each game it lost.

A move is best when it keeps the most boxes the solution says the mover can make from the
position; a mistake gives some of them away (its cost, in boxes), and a losing one turns a
position won with best play into a lost one (the solution maximises the margin; a network
trained on wins may give boxes away and keep the win). Against a weak opponent
not every mistake loses, and a perfect player still loses some games moving first
(bench/dots_perfect.py), so the figures say where the network's losses come from, not how
many it must lose.

  python bench/dots_errors.py --player workdir/dots_3x3 --simulations 1024 --algorithm puct
  python bench/dots_errors.py --player workdir/dots_3x3 --simulations 64 --opponent random
"""

import argparse
import functools
import time

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import dots_and_boxes as dab, players, stats
from agz_jax.dots_and_boxes import solver
from agz_jax.game import Game

STAGES = ((0, 8), (8, 16), (16, 24))  # lines drawn before the move


def play(network, settings, opponent, games: int, seed: int):
  """Games of the network (first in the first half) against `opponent`; returns the lines
  drawn [G, L] in order, who drew each [G, L] (+1 the network), the policy's choice at each
  of the network's moves [G, L] (-1 elsewhere) and the network's box margin [G]."""
  cfg = network.game.cfg
  game = Game(dab, cfg)
  step = jax.jit(jax.vmap(functools.partial(dab.step, cfg)))
  scripted = jax.jit(functools.partial(opponent, cfg))
  states = jax.vmap(lambda _: dab.init(cfg))(jnp.arange(games))
  colour = np.where(np.arange(games) < games // 2, dab.FIRST, dab.SECOND)
  lines = np.zeros((games, cfg.num_lines), np.int32)
  mover = np.zeros((games, cfg.num_lines), np.int32)
  policy = np.full((games, cfg.num_lines), -1, np.int32)
  key = jax.random.PRNGKey(seed)
  for ply in range(cfg.num_lines):
    key, k_net, k_opp = jax.random.split(key, 3)
    out = players.search_positions(network.model, network.encoding, game, settings,
                                   network.variables, states, k_net)
    ours = np.asarray(states.to_play) == colour
    chosen = np.where(ours, np.asarray(out["best"]), np.asarray(scripted(states, k_opp)))
    lines[:, ply], mover[:, ply] = chosen, np.where(ours, 1, -1)
    policy[:, ply] = np.where(ours, np.argmax(np.asarray(out["prior"]), axis=-1), -1)
    states = step(states, jnp.asarray(chosen, jnp.int32))
  margin = np.asarray(jax.vmap(functools.partial(dab.score, cfg))(states)) * colour
  return lines, mover, policy, margin


def judge(cfg, values, lines, mover, policy):
  """Per network move: (stage, the played move's cost, the policy's cost, whether the move
  lost a won position, whether the policy's would have); per game the ply and cost of the
  network's first losing mistake (-1, 0 where none)."""
  rows, first = [], []
  for g in range(lines.shape[0]):
    drawn = np.zeros(cfg.num_lines, bool)
    first_mistake = (-1, 0)
    for ply in range(cfg.num_lines):
      if mover[g, ply] == 1:
        value = solver.line_values(cfg, values, drawn)
        best = value.max()
        cost, policy_cost = best - value[lines[g, ply]], best - value[policy[g, ply]]
        losing = best > 0 and value[lines[g, ply]] < 0
        rows.append((ply, int(cost), int(policy_cost), int(losing),
                     int(best > 0 and value[policy[g, ply]] < 0)))
        if losing and first_mistake[0] < 0:
          first_mistake = (ply, int(cost))
      drawn[lines[g, ply]] = True
    first.append(first_mistake)
  return np.asarray(rows), first


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--player", required=True, help="a Dots and Boxes training workdir or checkpoint")
  parser.add_argument("--opponent", default="greedy", choices=("greedy", "random"))
  parser.add_argument("--games", type=int, default=100, help="games (even: half moving first)")
  parser.add_argument("--simulations", type=int, default=1024)
  parser.add_argument("--algorithm", default="puct", choices=("puct", "gumbel"))
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args()
  network = players.Network.from_checkpoint(args.player)
  cfg = network.game.cfg
  if network.game.module is not dab:
    parser.error(f"{args.player} holds a {network.config.game.name} network, not Dots and Boxes")
  started = time.perf_counter()
  values = solver.solve(cfg)
  print(f"{cfg.rows} x {cfg.cols} boxes solved in {time.perf_counter() - started:.1f} s")
  settings = network.search_config(algorithm=args.algorithm, simulations=args.simulations,
                                   considered_actions=16).replace(dirichlet_fraction=0.0)
  started = time.perf_counter()
  lines, mover, policy, margin = play(network, settings, dab.OPPONENTS[args.opponent],
                                      args.games, args.seed)
  print(f"{args.games} games against {args.opponent} in {time.perf_counter() - started:.0f} s "
        f"({args.algorithm}, {args.simulations} simulations, no move sampled)")
  half = args.games // 2
  for side, part in (("first", margin[:half]), ("second", margin[half:]), ("both", margin)):
    wins = int((part > 0).sum())
    low, high = stats.wilson_interval(wins + (part == 0).sum() / 2, len(part))
    print(f"  moving {side:6s}: {wins}-{int((part < 0).sum())}-{int((part == 0).sum())} "
          f"({100 * low:.1f}-{100 * high:.1f}%)")
  rows, first = judge(cfg, values, lines, mover, policy)
  print("| lines drawn | network moves | best, searched | boxes given away | losing, searched "
        "| best, policy alone | losing, policy alone |")
  print("|---|---|---|---|---|---|---|")
  for low, high in STAGES:
    part = rows[(rows[:, 0] >= low) & (rows[:, 0] < high)]
    if len(part):
      print(f"| {low}-{high - 1} | {len(part)} | {100 * np.mean(part[:, 1] == 0):.1f}% | "
            f"{part[:, 1].sum()} | {part[:, 3].sum()} | {100 * np.mean(part[:, 2] == 0):.1f}% | "
            f"{part[:, 4].sum()} |")
  lost = [(g, first[g]) for g in range(len(margin)) if margin[g] < 0]
  print(f"lost games: {len(lost)}; the network's first losing mistake (ply, boxes) in each: "
        + ", ".join(f"game {g} ({'first' if g < half else 'second'}): "
                    + (f"ply {ply}, {cost}" if ply >= 0 else "none")
                    for g, (ply, cost) in lost))


if __name__ == "__main__":
  main()
