"""AlphaGo's value-network data: one position per self-play game, generated on device.

  python -m agz_jax.data.value_data --sl workdir/sl_policy_cpu --rl workdir/rl_policy_cpu \\
      --games 20000 --out data/value_selfplay [--encoding alphago49] [--u-max 450]

Each game (Nature 2016, Methods): draw U uniformly from 1..U_max; moves
1..U-1 are sampled from the SL policy, move U is uniformly random among the
legal points, moves U+1.. are sampled from the RL policy until the game ends
(policies sample among sensible moves and pass when none is left); keep only
s_{U+1}, the position right after the random move, with the game's result from
the view of the player to move there. Games that end before move U+1 are
dropped. A batch of games is played at once on device, each with its own U.

The output folder holds `value_data.npz`: `planes` (each position's input
planes, bits packed: [N, ceil(H*W*F/8)] uint8), `z` ([N] float32), `move`
([N] int32, U), and `info.json` (encoding, board size, komi, the
checkpoints). The value task (`task = "value"`) reads it; its last games are
held out for testing.
"""

import argparse
import functools
import json
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import checkpoint, go, nets
from agz_jax.metrics import format_eta


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


def generate(cfg: go.GoConfig, model, sl_params, rl_params, key: jax.Array, *,
             policy_encoding: str, encoding: str, num_games: int, u_max: int):
  """Plays `num_games` games; returns (planes [G, H, W, F] uint8 of s_{U+1}, z [G] float32 for
  the player to move there, u [G] int32, kept [G] bool: the game reached s_{U+1}, moves
  [T, G] int32: every move played, ply by ply)."""
  k_u, k_play = jax.random.split(key)
  u = jax.random.randint(k_u, (num_games,), 1, u_max + 1)
  sensible_fn = jax.vmap(functools.partial(go.sensible_moves, cfg))
  legal_fn = jax.vmap(functools.partial(go.legal_actions, cfg))
  planes_shape = go.planes_shape(cfg, encoding)

  def body(carry):
    states, t, key, kept_planes, mover, moves = carry
    key, k_policy, k_random = jax.random.split(key, 3)
    planes = go.features(cfg, states, policy_encoding)
    move = t + 1                                  # the move about to be played (1-based)
    # s_{U+1} is the position before move U + 1: keep it (and who moves there).
    here = (move == u + 1) & ~states.terminated
    kept_planes = jnp.where(here[:, None, None, None],
                            value_planes(cfg, states, planes, policy_encoding, encoding)
                            .astype(jnp.uint8), kept_planes)
    mover = jnp.where(here, states.to_play, mover)
    use_sl = move < u
    logits = jnp.where(use_sl[:, None], model.apply({"params": sl_params}, planes),
                       model.apply({"params": rl_params}, planes))
    sensible = sensible_fn(states)
    masked = jnp.where(sensible, logits, jnp.finfo(logits.dtype).min)
    sampled = jax.random.categorical(k_policy, masked)
    policy_move = jnp.where(jnp.any(sensible, -1), sampled, cfg.pass_action)
    legal_points = legal_fn(states).at[:, cfg.pass_action].set(False)
    noise = jax.random.uniform(k_random, legal_points.shape)
    random_move = jnp.where(jnp.any(legal_points, -1),
                            jnp.argmax(jnp.where(legal_points, noise, -1.0), -1), cfg.pass_action)
    action = jnp.where(move == u, random_move, policy_move).astype(jnp.int32)
    states = jax.vmap(functools.partial(go.step, cfg))(states, action)
    return states, t + 1, key, kept_planes, mover, moves.at[t].set(action)

  def running(carry):
    states, t, *_ = carry
    return (t < cfg.max_moves) & ~jnp.all(states.terminated)

  states = jax.vmap(lambda _: go.init(cfg))(jnp.arange(num_games))
  init = (states, jnp.int32(0), k_play, jnp.zeros((num_games,) + planes_shape, jnp.uint8),
          jnp.zeros(num_games, jnp.int8), jnp.zeros((cfg.max_moves, num_games), jnp.int32))
  states, _, _, kept_planes, mover, moves = jax.lax.while_loop(running, body, init)
  kept = mover != 0
  z = jax.vmap(functools.partial(go.result, cfg))(states) * mover.astype(jnp.float32)
  return kept_planes, z, u, kept, moves


def load_policy(path: str):
  """(config, model, params) of a policy checkpoint (SL or RL)."""
  config, variables = checkpoint.load_network(path)
  if config.model.kind != "policy":
    raise ValueError(f"{path} holds a {config.model.kind!r} network, not a policy network "
                     "(task sl_policy or rl_policy)")
  return config, nets.make(config.model), jax.tree.map(jnp.asarray, variables["params"])


def write(out: str, planes: np.ndarray, z: np.ndarray, move: np.ndarray, info: dict) -> None:
  os.makedirs(out, exist_ok=True)
  packed = np.packbits(planes.reshape(len(planes), -1), axis=-1)
  np.savez(os.path.join(out, "value_data.npz"), planes=packed, z=z.astype(np.float32),
           move=move.astype(np.int32))
  with open(os.path.join(out, "info.json"), "w", encoding="utf-8") as f:
    json.dump({**info, "positions": int(len(z))}, f, indent=1)


def read(path: str) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray]:
  """(info, packed planes, z, move) of a folder written by `write`.

  Raises:
    FileNotFoundError: no value data there, saying how to make it.
  """
  data = os.path.join(path, "value_data.npz")
  if not os.path.isfile(data):
    raise FileNotFoundError(f"no value data in {path!r}: generate it with python -m "
                            "agz_jax.data.value_data --sl SL --rl RL --out DIR")
  with open(os.path.join(path, "info.json"), encoding="utf-8") as f:
    info = json.load(f)
  arrays = np.load(data)
  return info, arrays["planes"], arrays["z"], arrays["move"]


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description="AlphaGo's value data: one position per game.")
  parser.add_argument("--sl", required=True, help="the SL policy checkpoint (moves 1..U-1)")
  parser.add_argument("--rl", required=True, help="the RL policy checkpoint (moves U+1..)")
  parser.add_argument("--games", type=int, required=True, help="games to play")
  parser.add_argument("--out", required=True, help="output folder")
  parser.add_argument("--encoding", default="alphago49",
                      help="the value network's input planes (default alphago49)")
  parser.add_argument("--u-max", type=int, default=None,
                      help="U is drawn from 1..U_MAX (default: 450 on 19x19, scaled by the "
                           "board's points elsewhere)")
  parser.add_argument("--batch", type=int, default=64, help="games played at once")
  parser.add_argument("--max-moves", type=int, default=None,
                      help="a game still going is scored here (default: 2 x points)")
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args(argv)
  try:
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
    if os.path.exists(os.path.join(args.out, "value_data.npz")):
      raise ValueError(f"{args.out} already holds value data: give a new --out")
  except (ValueError, FileNotFoundError) as e:
    print(f"value_data: {e}", file=sys.stderr)
    return 2
  play = jax.jit(functools.partial(generate, cfg, model, policy_encoding=sl_config.model.encoding,
                                   encoding=args.encoding, num_games=args.batch, u_max=u_max))
  planes, z, move = [], [], []
  key, started, played = jax.random.PRNGKey(args.seed), time.monotonic(), 0
  while played < args.games:
    out = jax.device_get(play(sl_params, rl_params, jax.random.fold_in(key, played)))
    kept = out[3]
    planes.append(out[0][kept])
    z.append(out[1][kept])
    move.append(out[2][kept])
    played += args.batch
    done = min(played, args.games)
    rate = done / (time.monotonic() - started)
    print(f"{done}/{args.games} games, {sum(len(x) for x in z)} positions kept, "
          f"{rate:.1f} games/s, ETA {format_eta((args.games - done) / rate)}", flush=True)
  planes, z, move = (np.concatenate(x)[:args.games] for x in (planes, z, move))
  write(args.out, planes, z, move, {"encoding": args.encoding, "size": size, "komi": komi,
                                    "u_max": u_max, "sl": args.sl, "rl": args.rl,
                                    "games": played})
  print(f"{len(z)} positions in {args.out} (mean z {z.mean():+.3f})")
  return 0


if __name__ == "__main__":
  sys.exit(main())
