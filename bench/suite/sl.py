"""The sl part: the full-size SL policy network trained from human games for the part's
time, and its held-out top-1 and top-5."""

import os
import time

from suite.common import (SL_AIM_MINUTES, SL_AIM_TOP1, Record, data_kind, fresh, metrics,
                          steady_rate)


def synthetic_sgf(folder: str, size: int, num_games: int, seed: int = 0) -> str:
  """Writes `num_games` random legal games as SGF files (2016 for training, 2017-06 for
  validation, one in four): human games stand-ins for --smoke. Returns the folder."""
  import jax  # pylint: disable=import-outside-toplevel
  import numpy as np  # pylint: disable=import-outside-toplevel
  from agz_jax import go, players, sgf  # pylint: disable=import-outside-toplevel
  cfg = go.GoConfig(size=size)
  moves = size * size // 2

  @jax.jit
  def play(key):
    def step(states, k):
      actions = jax.vmap(lambda s, kk: players.random_move(cfg, s, kk))(
          states, jax.random.split(k, num_games))
      return jax.vmap(lambda s, a: go.step(cfg, s, a))(states, actions), actions
    states = jax.vmap(lambda _: go.init(cfg))(jax.numpy.arange(num_games))
    return jax.lax.scan(step, states, jax.random.split(key, moves))[1]

  actions = np.asarray(play(jax.random.PRNGKey(seed))).T
  os.makedirs(folder, exist_ok=True)
  for i, game in enumerate(actions):
    record = sgf.GameRecord(size=size, komi=7.5, result="B+R" if i % 2 else "W+R",
                            date="2017-06-01" if i % 4 == 3 else "2016-01-01",
                            moves=[(go.BLACK if j % 2 == 0 else go.WHITE, int(a))
                                   for j, a in enumerate(game)])
    with open(os.path.join(folder, f"{i:04d}.sgf"), "wb") as f:
      f.write(sgf.write(record))
  return folder


def _games_folder(rec: Record, args, size: int, sizes: dict) -> str:
  """An imported games folder: --data itself, or the import of its SGF files (--smoke without
  --data: of synthetic games)."""
  from agz_jax import data  # pylint: disable=import-outside-toplevel
  source = args.data
  if source is None:
    source = synthetic_sgf(os.path.join(args.out, "smoke_sgf"), size, sizes["synthetic_games"])
    rec.add({}, [("games", f"{sizes['synthetic_games']} random legal games as SGF "
                  f"(--smoke without --data)")])
  if data_kind(source) == "archive":
    return source
  start = time.perf_counter()
  archive, counts = data.import_games([source], size=size, progress=False)
  folder = os.path.join(args.out, "games")
  data.save(archive, folder)
  rec.add({"import_seconds": time.perf_counter() - start, "imported_games": counts["kept"]})
  print(f"  imported {counts['kept']:,} of {counts['games']:,} games in "
        f"{time.perf_counter() - start:.0f} s", flush=True)
  return folder


def run(rec: Record, sizes: dict, deadline: float, args) -> None:
  from agz_jax import training  # pylint: disable=import-outside-toplevel
  from configs import sl_policy_19x19  # pylint: disable=import-outside-toplevel
  config = sl_policy_19x19.get_config()
  if "size" in sizes:
    config.game.size, config.game.max_moves = sizes["size"], 2 * sizes["size"] ** 2
  for key, name in (("layers", "model.layers"), ("filters", "model.filters"),
                    ("dtype", "model.dtype"), ("encoding", "model.encoding"),
                    ("games_per_batch", "data.games_per_batch"),
                    ("positions_per_game", "data.positions_per_game"),
                    ("eval_positions", "eval.num_positions")):
    if key in sizes:
      section, field = name.split(".")
      config[section][field] = sizes[key]
  config.data.dir = _games_folder(rec, args, config.game.size, sizes)
  config.steps, config.log_every, config.eval.every = (sizes["steps"], sizes["log_every"],
                                                       sizes["eval_every"])
  config.checkpoint.every = config.steps
  workdir = os.path.join(args.out, "sl_policy")
  limit = deadline - time.perf_counter() - sizes["reserve_s"]
  print(f"  training {config.model.layers} x {config.model.filters} {config.model.dtype} for "
        f"{limit:.0f} s", flush=True)
  start = time.perf_counter()
  state = training.train_and_evaluate(config, fresh(workdir), time_limit_s=limit)
  seconds = time.perf_counter() - start
  rows = metrics(workdir)
  final = [r for r in rows if "val_top1" in r][-1]
  steps = int(state.step)
  positions = steps * config.data.games_per_batch * config.data.positions_per_game
  f = {"steps": steps, "positions": positions, "train_seconds": seconds,
       "positions_per_s": steady_rate(rows), "val_top1": final["val_top1"],
       "val_top5": final["val_top5"], "val_loss": final["val_loss"],
       "val_positions": config.eval.num_positions}
  aim = (f"aim {SL_AIM_TOP1:.0%} in {SL_AIM_MINUTES} min: "
         + ("met" if final["val_top1"] >= SL_AIM_TOP1 and seconds <= 60 * SL_AIM_MINUTES
            else "not met"))
  setting = (f"{config.model.layers} x {config.model.filters} {config.model.dtype}, "
             f"{config.model.encoding}")
  rec.add(f, [(f"{setting}: steps in {seconds / 60:.1f} min (compiling included), positions/s",
               f"{steps:,} ({positions:,} positions), {f['positions_per_s']:,.0f}"),
              (f"held-out top-1 / top-5 ({config.eval.num_positions:,} positions)",
               f"**{final['val_top1']:.1%}** / {final['val_top5']:.1%} ({aim})")])
