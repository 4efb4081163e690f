"""AlphaGo's value-network data: one position per self-play game, generated on device.

  python -m agz_jax.data.value_data --sl pretrained/alphago-19x19/sl_policy \\
      --rl pretrained/alphago-19x19/rl_policy --games 20000 --out data/value_selfplay \\
      [--encoding alphago49] [--u-max 450] [--time-limit SECONDS]

Each game (Nature 2016, Methods): draw U uniformly from 1..U_max; moves
1..U-1 are sampled from the SL policy, move U is uniformly random among the
legal points, moves U+1.. are sampled from the RL policy until the game ends
(policies sample among sensible moves and pass when none is left); keep only
s_{U+1}, the position right after the random move, with the game's result from
the view of the player to move there. Games that end before move U+1 are
dropped. A batch of games is played at once, split over the devices (on a CPU,
one device per core); every game draws its moves from its own key, so the games
do not depend on how the batch is split.

The output folder holds `info.json` (encoding, board size, komi, U_max, the
checkpoints, the seed and batch) and one file per batch, `games_NNNNN.npz`:
`planes` (each kept position's input planes, bits packed: [N, ceil(H*W*F/8)]
uint8), `z` ([N] float32), `move` ([N] int32, U). A batch's file appears only
once the batch is done, so a stopped run (Ctrl-C, `--time-limit`) loses at
most the batch it was playing, and the same command again goes on from there.
The value task (`task = "value"`) reads the folder; its last games are held out
for testing.
"""

import argparse
import functools
import glob
import json
import os
import sys
import time
import zipfile

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec

from agz_jax import checkpoint, go, nets, parallel
from agz_jax.metrics import format_eta

# What a folder's games were made with: a second run into the folder must agree on all of them.
_SETTINGS = ("encoding", "size", "komi", "u_max", "max_moves", "sl", "rl", "seed", "batch")


def value_planes(cfg: go.GoConfig, states, policy_planes, policy_encoding: str,
                 encoding: str) -> jax.Array:
  """The value network's planes of `states`, from the policies' planes where they hold them
  (the same encoding; alphago49 is alphago48 and the colour to play)."""
  if encoding == policy_encoding:
    return policy_planes
  if encoding == "alphago49" and policy_encoding == "alphago48":
    black = (states.to_play == go.BLACK).astype(policy_planes.dtype)
    colour = jnp.broadcast_to(black[:, None, None, None], policy_planes.shape[:3] + (1,))
    return jnp.concatenate([policy_planes, colour], axis=-1)
  return go.features(cfg, states, encoding)


def draw_games(key: jax.Array, num_games: int, u_max: int) -> tuple[jax.Array, jax.Array]:
  """(keys [G, 2], u [G]): each game's own key and its U, uniform over 1..u_max.

  The U are sorted: split over the devices in order, each device's games then
  need the SL policy for fewer plies while others already need the RL policy
  (`generate` runs a network only while one of the device's games needs it).
  """
  k_u, k_games = jax.random.split(key)
  u = jnp.sort(jax.random.randint(k_u, (num_games,), 1, u_max + 1))
  return jax.random.split(k_games, num_games), u


def generate(cfg: go.GoConfig, model, sl_params, rl_params, games, *, policy_encoding: str,
             encoding: str, first_game=0):
  """Plays `games` = (keys [G, 2], u [G]) to their ends.

  Returns:
    (planes [G, H, W, F] uint8 of s_{U+1}, z [G] float32 for the player to move
    there, u [G] int32, kept [G] bool: the game reached s_{U+1}, moves [G, T]
    int32: every move played, ply by ply).
  """
  del first_game  # every game carries its own key
  keys, u = games
  num_games = u.shape[0]
  sensible_fn = jax.vmap(functools.partial(go.sensible_moves, cfg))
  legal_fn = jax.vmap(functools.partial(go.legal_actions, cfg))
  planes_shape = go.planes_shape(cfg, encoding)

  def logits_of(params, planes, needed):
    # A network runs only while a game of this device needs it.
    return jax.lax.cond(jnp.any(needed), lambda: model.apply({"params": params}, planes),
                        lambda: jnp.zeros((num_games, cfg.num_actions), jnp.float32))

  def body(carry):
    states, t, kept_planes, mover, moves = carry
    ply_keys = jax.vmap(jax.random.fold_in, (0, None))(keys, t)
    k_policy, k_random = jnp.moveaxis(jax.vmap(jax.random.split)(ply_keys), 1, 0)
    planes = go.features(cfg, states, policy_encoding)
    move = t + 1                                  # the move about to be played (1-based)
    # s_{U+1} is the position before move U + 1: keep it (and who moves there).
    here = (move == u + 1) & ~states.terminated
    kept_planes = jnp.where(here[:, None, None, None],
                            value_planes(cfg, states, planes, policy_encoding, encoding)
                            .astype(jnp.uint8), kept_planes)
    mover = jnp.where(here, states.to_play, mover)
    use_sl = move < u
    playing = ~states.terminated & (move != u)
    logits = jnp.where(use_sl[:, None], logits_of(sl_params, planes, use_sl & playing),
                       logits_of(rl_params, planes, ~use_sl & playing))
    sensible = sensible_fn(states)
    masked = jnp.where(sensible, logits, jnp.finfo(logits.dtype).min)
    sampled = jax.vmap(jax.random.categorical)(k_policy, masked)
    policy_move = jnp.where(jnp.any(sensible, -1), sampled, cfg.pass_action)
    legal_points = legal_fn(states).at[:, cfg.pass_action].set(False)
    noise = jax.vmap(lambda k: jax.random.uniform(k, (cfg.num_actions,)))(k_random)
    random_move = jnp.where(jnp.any(legal_points, -1),
                            jnp.argmax(jnp.where(legal_points, noise, -1.0), -1), cfg.pass_action)
    action = jnp.where(move == u, random_move, policy_move).astype(jnp.int32)
    states = jax.vmap(functools.partial(go.step, cfg))(states, action)
    return states, t + 1, kept_planes, mover, moves.at[:, t].set(action)

  def running(carry):
    states, t, *_ = carry
    return (t < cfg.max_moves) & ~jnp.all(states.terminated)

  states = jax.vmap(lambda _: go.init(cfg))(jnp.arange(num_games))
  init = (states, jnp.int32(0), jnp.zeros((num_games,) + planes_shape, jnp.uint8),
          jnp.zeros(num_games, jnp.int8), jnp.zeros((num_games, cfg.max_moves), jnp.int32))
  states, _, kept_planes, mover, moves = jax.lax.while_loop(running, body, init)
  kept = mover != 0
  z = jax.vmap(functools.partial(go.result, cfg))(states) * mover.astype(jnp.float32)
  return kept_planes, z, u, kept, moves


def player(cfg: go.GoConfig, model, mesh, *, policy_encoding: str, encoding: str):
  """The jitted `generate` of one batch, its games split over `mesh` (None: one device)."""
  fn = functools.partial(generate, cfg, model, policy_encoding=policy_encoding, encoding=encoding)
  return jax.jit(parallel.per_shard(mesh, fn, games_arg=2,
                                    out_specs=PartitionSpec(parallel.DATA)))


def load_policy(path: str):
  """(config, model, params) of a policy checkpoint (SL or RL)."""
  config, variables = checkpoint.load_network(path)
  if config.model.kind != "policy":
    raise ValueError(f"{path} holds a {config.model.kind!r} network, not a policy network "
                     "(task sl_policy or rl_policy)")
  return config, nets.make(config.model), jax.tree.map(jnp.asarray, variables["params"])


def batch_files(path: str) -> list[str]:
  """The folder's batch files, in order."""
  return sorted(glob.glob(os.path.join(path, "games_*.npz")))


def write_batch(out: str, index: int, planes: np.ndarray, z: np.ndarray, move: np.ndarray) -> None:
  """Adds batch `index`'s kept positions to `out`, as one file written whole."""
  packed = np.packbits(planes.reshape(len(planes), -1), axis=-1)
  final = os.path.join(out, f"games_{index:05d}.npz")
  partial = final + ".partial.npz"
  np.savez(partial, planes=packed, z=z.astype(np.float32), move=move.astype(np.int32))
  os.replace(partial, final)


def write(out: str, planes: np.ndarray, z: np.ndarray, move: np.ndarray, info: dict) -> None:
  """A value-data folder holding these positions as one batch."""
  os.makedirs(out, exist_ok=True)
  with open(os.path.join(out, "info.json"), "w", encoding="utf-8") as f:
    json.dump(info, f, indent=1)
  write_batch(out, 0, planes, z, move)


def read(path: str) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray]:
  """(info, packed planes, z, move) of a folder written by `write` or the command, its batches
  in order.

  Raises:
    FileNotFoundError: no value data there, saying how to make it.
    ValueError: a batch file that does not read or holds planes of another shape.
  """
  files = batch_files(path)
  if not files or not os.path.isfile(os.path.join(path, "info.json")):
    raise FileNotFoundError(f"no value data in {path!r}: generate it with python -m "
                            "agz_jax.data.value_data --sl SL --rl RL --games N --out DIR")
  with open(os.path.join(path, "info.json"), encoding="utf-8") as f:
    info = json.load(f)
  cfg = go.GoConfig(size=info["size"])
  width = -(-cfg.num_points * go.num_planes(cfg, info["encoding"]) // 8)
  batches = []
  for name in files:
    try:
      with np.load(name) as batch:
        batches.append({k: batch[k] for k in ("planes", "z", "move")})
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
      raise ValueError(f"{name} is damaged ({type(e).__name__}): delete it and run the command "
                       "that wrote the folder again, which writes it anew") from None
    shapes = {k: v.shape for k, v in batches[-1].items()}
    n = shapes["z"][0]
    if shapes["planes"] != (n, width) or shapes["move"] != (n,):
      raise ValueError(f"{name} holds planes of shape {shapes['planes']}, not ({n}, {width}) "
                       f"({info['encoding']} on {info['size']}x{info['size']}): it belongs to "
                       "another folder; delete it and run the command again")
  planes, z, move = (np.concatenate([b[k] for b in batches]) for k in ("planes", "z", "move"))
  return {**info, "positions": int(len(z)), "batches": len(files)}, planes, z, move


def start_or_resume(out: str, settings: dict, keys=_SETTINGS) -> int:
  """The number of batches already in `out` (0 for a new folder, whose info.json `settings`
  become), after checking that they were made with the same `keys` of the settings."""
  info_path = os.path.join(out, "info.json")
  if not os.path.isfile(info_path):
    if os.path.isdir(out) and os.listdir(out):
      raise ValueError(f"{out} is not empty and holds no value data: give a new --out")
    os.makedirs(out, exist_ok=True)
    with open(info_path, "w", encoding="utf-8") as f:
      json.dump(settings, f, indent=1)
    return 0
  with open(info_path, encoding="utf-8") as f:
    info = json.load(f)
  differ = [k for k in keys if info.get(k) != settings[k]]
  if differ:
    k = differ[0]
    raise ValueError(f"{out} holds value data made with {k}={info.get(k)!r}, not {settings[k]!r}: "
                     "run with its settings to go on, or give a new --out")
  return len(batch_files(out))


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description="AlphaGo's value data: one position per game.")
  parser.add_argument("--sl", required=True, help="the SL policy checkpoint (moves 1..U-1)")
  parser.add_argument("--rl", required=True, help="the RL policy checkpoint (moves U+1..)")
  parser.add_argument("--games", type=int, required=True,
                      help="games to play in all (a folder that holds some already goes on)")
  parser.add_argument("--out", required=True, help="output folder")
  parser.add_argument("--encoding", default="alphago49",
                      help="the value network's input planes (default alphago49)")
  parser.add_argument("--u-max", type=int, default=None,
                      help="U is drawn from 1..U_MAX (default: 450 on 19x19, scaled by the "
                           "board's points elsewhere)")
  parser.add_argument("--batch", type=int, default=64,
                      help="games played at once, split over the devices")
  parser.add_argument("--max-moves", type=int, default=None,
                      help="a game still going is scored here (default: 2 x points)")
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--time-limit", type=float, default=None,
                      help="seconds: start no batch that would end after this (the same "
                           "command again goes on)")
  parser.add_argument("--cpu-devices", type=int, default=None,
                      help="on a machine without an accelerator, split the CPU into this many "
                           "devices, each playing its share of a batch (default: one per core)")
  args = parser.parse_args(argv)
  try:
    parallel.use_cpu_devices(len(os.sched_getaffinity(0)) if args.cpu_devices is None
                             else args.cpu_devices)
    sl_config, model, sl_params = load_policy(args.sl)
    rl_config, _, rl_params = load_policy(args.rl)
    for key in ("kind", "encoding", "layers", "filters"):
      if sl_config.model[key] != rl_config.model[key]:
        raise ValueError(f"the SL and RL policies differ in model.{key} "
                         f"({sl_config.model[key]!r}, {rl_config.model[key]!r}): the RL policy "
                         "is trained from the SL one")
    size, komi = sl_config.game.size, sl_config.game.komi
    cfg = go.GoConfig(size=size, komi=komi, history=8,
                      max_moves=args.max_moves or 2 * size * size)
    go.check_encoding(cfg, args.encoding)
    u_max = args.u_max or max(2, round(450 * size * size / 361))
    if args.games < 1 or args.batch < 1:
      raise ValueError("--games and --batch must be positive")
    mesh = parallel.make_mesh()
    if args.batch % mesh.size:
      raise ValueError(f"--batch {args.batch} does not split over {mesh.size} devices: give a "
                       f"multiple of {mesh.size}")
    settings = {"encoding": args.encoding, "size": size, "komi": komi, "u_max": u_max,
                "max_moves": cfg.max_moves, "sl": args.sl, "rl": args.rl, "seed": args.seed,
                "batch": args.batch}
    done_batches = start_or_resume(args.out, settings)
  except (ValueError, FileNotFoundError) as e:
    print(f"value_data: {e}", file=sys.stderr)
    return 2
  play = player(cfg, model, mesh if mesh.size > 1 else None,
                policy_encoding=sl_config.model.encoding, encoding=args.encoding)
  batches = -(-args.games // args.batch)
  if done_batches:
    print(f"{args.out}: {done_batches} of {batches} batches already played, going on", flush=True)
  key, started, last = jax.random.PRNGKey(args.seed), time.monotonic(), None
  kept_total = 0
  for index in range(done_batches, batches):
    if (args.time_limit is not None and last is not None
        and time.monotonic() - started + last > args.time_limit):
      print(f"stopped at the time limit after batch {index}: run the same command to go on",
            flush=True)
      return 0
    t0 = time.monotonic()
    games = draw_games(jax.random.fold_in(key, index), args.batch, u_max)
    planes, z, u, kept, _ = jax.device_get(play(sl_params, rl_params, games))
    write_batch(args.out, index, planes[kept], z[kept], u[kept])
    last, kept_total = time.monotonic() - t0, kept_total + int(kept.sum())
    played = (index + 1 - done_batches) * args.batch
    rate = played / (time.monotonic() - started)
    print(f"batch {index + 1}/{batches}: {(index + 1) * args.batch} games, {kept_total} positions "
          f"kept this run, {last:.0f} s the batch, {rate:.2f} games/s, "
          f"ETA {format_eta((batches - index - 1) * args.batch / rate)}", flush=True)
  info, _, z, _ = read(args.out)
  print(f"{info['positions']} positions from {info['batches']} batches in {args.out} "
        f"(mean z {z.mean():+.3f})")
  return 0


if __name__ == "__main__":
  sys.exit(main())
