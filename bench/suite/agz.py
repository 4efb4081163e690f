"""The agz part: a configs/gpu_9x9.py training run for the part's time, then its final
network against a random player and against its iteration-0 network; the final network
kept in OUT/ship/agz-9x9 (and .tar.gz). Then a GTP engine's search on the device: one tree
of pretrained/human-19x19 under a clock, its leaves evaluated one at a time (mctx) against 8
at a time (search.leaf_batch), root visits in the same budgets (under --smoke: the part's own
network)."""

import os
import time

from suite.common import Record, fresh, metrics, steady_rate


def run(rec: Record, sizes: dict, deadline: float, args) -> None:
  from agz_jax import checkpoint, training  # pylint: disable=import-outside-toplevel
  from configs import cpu_9x9, gpu_9x9  # pylint: disable=import-outside-toplevel
  if args.smoke:
    config = cpu_9x9.get_config()
    config.model.blocks, config.model.channels, config.model.value_hidden = 1, 8, 16
    config.search.num_simulations, config.search.max_num_considered_actions = 4, 4
    config.selfplay.num_games, config.selfplay.steps_per_iteration = 4, 4
    config.replay.min_ready, config.train.batch_size = 8, 8
    config.train.updates_per_iteration = 1
    config.eval.num_simulations, config.mesh.cpu_devices = 2, 1
    config.iterations, config.game.size = sizes["iterations"], sizes["size"]
    config.replay.rows_per_game = 2 * sizes["size"] ** 2 + config.selfplay.steps_per_iteration
  else:
    config = gpu_9x9.get_config()
  config.eval.every = 0  # the matches after the run measure it; none during it
  config.checkpoint.every = config.iterations  # the replay buffer makes saves slow
  workdir = os.path.join(args.out, "agz_9x9")
  limit = deadline - time.perf_counter() - sizes["reserve_s"]
  print(f"  training {config.model.blocks} x {config.model.channels} {config.model.dtype} for "
        f"{limit:.0f} s", flush=True)
  start = time.perf_counter()
  training.train_and_evaluate(config, fresh(workdir), time_limit_s=limit)
  seconds = time.perf_counter() - start
  # The final network, to measure (and ship, if stronger) against pretrained/zero-9x9 at home.
  shipped = checkpoint.export_with_archive(workdir, fresh(os.path.join(args.out, "ship")),
                                           "agz-9x9")
  print(f"  final network in {shipped} (and {shipped}.tar.gz)", flush=True)
  rows = metrics(workdir)
  last = rows[-1]
  f = {"iterations": int(last["iteration"]), "train_seconds": seconds, "network": shipped,
       "positions_per_s": steady_rate(rows),
       "positions": int(last["iteration"]) * config.selfplay.num_games
       * config.selfplay.steps_per_iteration}
  f.update({k: last[k] for k in ("loss_policy", "loss_value") if k in last})
  size = config.game.size
  rec.add(f, [(f"{size}x{size}, {config.model.blocks} x {config.model.channels} "
               f"{config.model.dtype}, "
               f"{config.selfplay.num_games} games x {config.search.num_simulations} sims: "
               f"iterations in {seconds / 60:.1f} min (compiling included), self-play "
               f"positions/s", f"{f['iterations']} ({f['positions']:,} positions), "
               f"{f['positions_per_s']:,.0f}"),
              ("final losses: policy, value", ", ".join(
                  f"{last[k]:.2f}" if k in last else "not trained yet"
                  for k in ("loss_policy", "loss_value")))])
  for opponent, who in (("random", "a random player"), ("iteration 0", "its iteration-0 network")):
    outcome = final_match(workdir, opponent, sizes["match_games"])
    key = opponent.replace(" ", "")
    rec.add({f"vs_{key}_{k}": v for k, v in outcome.items()},
            [(f"final network against {who} ({outcome['games']} games, "
              f"{outcome['simulations']} sims)",
              f"**{outcome['win_rate']:.1%}** (95%: {outcome['low']:.1%} - "
              f"{outcome['high']:.1%}; {outcome['wins']:.0f}-{outcome['losses']:.0f}"
              f"-{outcome['draws']:.0f})")])
  spec = shipped if sizes["search"] is None else sizes["search"]
  visits = {leaves: searched_visits(spec, sizes["search_size"], sizes["search_seconds"], leaves)
            for leaves in LEAVES}
  one, many = (sum(visits[n]) for n in LEAVES)
  rec.add({f"search_leaves{n}_root_visits": sum(v) for n, v in visits.items()},
          [(f"one tree of {os.path.basename(spec)} under a clock, {sizes['search_seconds']:g} s a "
            f"move, {len(visits[1])} moves: root visits with {LEAVES[0]} leaf a step; with "
            f"{LEAVES[1]} (ratio)", f"{one}; {many} ({many / max(one, 1):.2f}x)")])


LEAVES = (1, 8)


def searched_visits(spec: str, size: int, seconds: float, leaves: int, moves: int = 3) -> list:
  """Root visits of `moves` searches of `seconds` each from the empty board (each move played
  before the next, the tree kept), one PUCT tree on the first device, `leaves` a step."""
  # pylint: disable-next=import-outside-toplevel
  from agz_jax import go, players
  path = spec if os.path.isdir(spec) else players.pretrained_path(spec)
  player = players.SearchPlayer(players.Network.from_checkpoint(path), simulations=1,
                                algorithm="puct", considered_actions=1, trees=1, leaves=leaves)
  cfg = go.GoConfig(size=size, komi=7.5, **player.planes)
  player.prepare(cfg)
  state, visits = go.init(cfg), []
  for _ in range(moves):
    out = player.analyse(cfg, state, seconds=seconds)
    visits.append(sum(c["visits"] for c in out["candidates"]))
    state = go.play(cfg, [out["action"]], state)
  print(f"  one tree, {leaves} leaves a step: root visits {visits}", flush=True)
  return visits


def final_match(workdir: str, opponent: str, num_games: int) -> dict:
  """The run's final network against `opponent` ('random' or 'iteration 0'), on the device,
  half the games with each colour, with the run's evaluation settings."""
  import functools  # pylint: disable=import-outside-toplevel
  import jax  # pylint: disable=import-outside-toplevel
  # pylint: disable-next=import-outside-toplevel
  from agz_jax import arena, checkpoint, game as game_lib, nets, players, search, stats
  config, current = checkpoint.load_network(workdir)
  game = game_lib.make(config.game)
  evaluator = search.flax_network(game, nets.make(config.model), config.model.encoding)
  e = config.eval
  settings = search.SearchConfig.from_config(config.search, num_simulations=e.num_simulations,
                                             dirichlet_fraction=e.dirichlet_fraction)
  if opponent == "random":
    reference, moves_b = None, lambda states, key: jax.vmap(
        functools.partial(players.random_move, game.cfg))(
            states, jax.random.split(key, states.to_play.shape[0]))
  else:
    reference = checkpoint.load_network(os.path.join(workdir, "checkpoints", "0"))[1]
    moves_b = None
  match = jax.jit(lambda a, b, key: arena.play_match(
      game, evaluator, a, b, key, num_games=num_games, search=settings,
      temperature_moves=e.temperature_moves, moves_b=moves_b))
  start = time.perf_counter()
  out = {k: float(v) for k, v in match(current, reference, jax.random.PRNGKey(17)).items()}
  points = out["wins"] + 0.5 * out["draws"]
  low, high = stats.wilson_interval(points, num_games)  # points scored, not the rate
  out.update(games=num_games, simulations=e.num_simulations, win_rate=points / num_games,
             low=low, high=high, seconds=time.perf_counter() - start)
  print(f"  against {opponent}: {out['wins']:.0f} wins, {out['losses']:.0f} losses, "
        f"{out['draws']:.0f} draws of {num_games} ({out['seconds']:.0f} s, compiling included)",
        flush=True)
  return out
