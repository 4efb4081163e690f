"""Positions per second of the input planes: AlphaGo Zero's 17 against AlphaGo's 48 and KataGo's.

The cost of hand-made knowledge: the same positions, the same batch, both plane
sets computed by `go.features` under jit in one run. Positions come from the
imported human games (random moves of random games) when `--data` holds an
import, else from random legal play. Also prints how many ladders the positions
make the reader read and how many of them it finds, which is what the 48 planes'
cost depends on, the 48 planes without the ladder reading (both ladder planes
left empty), which splits their cost between the reader and the rest, and the
legal-move mask alone (positional superko), which every plane set but the 17
needs: a floor under the 48 planes' time. KataGo's planes ("katago", 22 planes and 8
global features) are timed with and without their four ladder planes ("katago_noladders"),
which read ladders on three boards from both sides.

  python bench/features_speed.py                        # 19x19, batch 256, human positions
  python bench/features_speed.py --data none --size 9   # random-play positions
"""

import argparse
import dataclasses
import functools
import os

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import alphago, data, go
from agz_jax.data import positions

import timing


def human_positions(cfg: go.GoConfig, directory: str, batch: int, seed: int) -> go.GoState:
  archive = data.load(directory)
  rng = np.random.default_rng(seed)
  table = jax.tree.map(jnp.asarray, positions.make_table(archive, rng.choice(archive.num_games, batch)))
  lengths = np.asarray(table.length)
  moves = (rng.random(batch) * lengths).astype(np.int32)[:, None]
  replay = jax.jit(functools.partial(positions.replay_positions, cfg))
  return replay(table, jnp.arange(batch), jnp.asarray(moves))


def random_positions(cfg: go.GoConfig, batch: int, moves: int, seed: int) -> go.GoState:
  states = jax.vmap(lambda _: go.init(cfg))(jnp.arange(batch))
  legal = jax.jit(jax.vmap(lambda s: go.legal_actions(cfg, s)))
  step = jax.jit(jax.vmap(lambda s, a: go.step(cfg, s, a)))
  key = jax.random.PRNGKey(seed)
  for _ in range(moves):
    key, k = jax.random.split(key)
    mask = legal(states).at[:, -1].set(False)
    states = step(states, jax.random.categorical(k, jnp.where(mask, 0.0, -1e9)))
  return states


def without_ladders(cfg: go.GoConfig, states: go.GoState):
  """The 48 planes with both ladder planes empty (no reading), and the ladders they would read."""
  planes, *_, capture, escape = jax.vmap(functools.partial(
      alphago.planes._alphago_without_ladders, cfg, colour_plane=False))(states)  # pylint: disable=protected-access
  return planes, jnp.sum(capture) + jnp.sum(escape)


def ladder_settings(reader: str | None = None, lanes: float | None = None) -> alphago.LadderSettings:
  """This backend's ladder settings, read where `reader` says ('device' or 'host') on `lanes`
  lanes per position (None: as they are)."""
  default = alphago.ladder_settings()
  return dataclasses.replace(default, reader=reader or default.reader,
                             lanes=default.lanes if lanes is None else lanes)


def positions_per_second(cfg: go.GoConfig, encoding: str, states: go.GoState,
                         repeats: int, ladder: alphago.LadderSettings | None = None) -> float:
  if encoding == "without ladders":
    fn = jax.jit(functools.partial(without_ladders, cfg))
  elif encoding == "legal moves":
    fn = jax.jit(jax.vmap(functools.partial(go.legal_actions, cfg)))
  else:
    fn = jax.jit(functools.partial(go.features, cfg, encoding=encoding, ladder=ladder))
  return states.board.shape[0] / timing.seconds(fn, states, repeats=repeats)


def arguments(description: str) -> argparse.Namespace:
  """The command line of this benchmark and of bench/ladder_reader.py."""
  parser = argparse.ArgumentParser(description=description)
  parser.add_argument("--size", type=int, default=19)
  parser.add_argument("--batch", type=int, default=256)
  parser.add_argument("--repeats", type=int, default=9)
  parser.add_argument("--data", default="data/kgs", help="an imported games folder, or 'none'")
  parser.add_argument("--seed", type=int, default=0)
  return parser.parse_args()


def the_positions(args: argparse.Namespace) -> tuple[go.GoConfig, go.GoState]:
  """The benchmark's rules and positions (human ones where args.data holds an import), with
  a line saying what they are and where they run."""
  base = go.GoConfig(size=args.size, max_moves=2 * args.size * args.size)
  use_data = args.data != "none" and os.path.isfile(os.path.join(args.data, data.GAMES_FILE))
  if use_data:
    states = human_positions(base, args.data, args.batch, args.seed)
    source = f"random positions of human games in {args.data}"
  else:
    states = random_positions(base, args.batch, args.size * args.size // 2, args.seed)
    source = f"after {args.size * args.size // 2} random legal moves"
  print(timing.environment())
  print(f"{args.size}x{args.size}, batch {args.batch}, {source}")
  return base, states


def main():
  args = arguments(__doc__.splitlines()[0])
  base, states = the_positions(args)
  planes = jax.jit(functools.partial(go.features, base, encoding="alphago48"))(states)
  plain, readings = jax.jit(functools.partial(without_ladders, base))(states)
  np.testing.assert_array_equal(np.asarray(plain)[..., :44], np.asarray(planes)[..., :44])
  print(f"  ladders read {int(readings) / args.batch:.2f}, found: ladder captures "
        f"{float(planes[..., 44].sum()) / args.batch:.2f}, ladder escapes "
        f"{float(planes[..., 45].sum()) / args.batch:.2f} per position")
  speeds = {}
  labels = {"without ladders": "alphago48 without the ladder reading",
            "legal moves": "the legal-move mask alone (superko)"}
  for name in ("agz17", "alphago48", "alphago49", "katago", "katago_noladders",
               "without ladders", "legal moves"):
    speeds[name] = positions_per_second(base, name, states, args.repeats)
    label = labels.get(name) or f"{name:16s} {go.num_planes(base, name):3d} planes"
    print(f"  {label} {speeds[name]:12,.0f} positions/s")
  # The other place to read the ladders (LadderSettings.reader): on the host's CPU through a
  # callback, the batch in one chunk per core, or inside the program.
  place = alphago.ladder_settings().reader
  other = {"host": "device", "device": "host"}[place]
  elsewhere = positions_per_second(base, "alphago48", states, args.repeats,
                                   ladder_settings(reader=other))
  print(f"  alphago48 with the ladders read on the {other} {elsewhere:12,.0f} positions/s "
        f"({elsewhere / speeds['alphago48']:.2f}x the default, on the {place})")
  print(f"  ratio alphago48 / agz17: {speeds['alphago48'] / speeds['agz17']:.4f} "
        f"({speeds['agz17'] / speeds['alphago48']:.0f}x slower)")
  share = 1 - speeds["alphago48"] / speeds["without ladders"]
  print(f"  the ladder reading's share of alphago48's time: {share:.0%}")
  print(f"  ratio katago / agz17: {speeds['katago'] / speeds['agz17']:.4f}; katago_noladders / "
        f"agz17: {speeds['katago_noladders'] / speeds['agz17']:.4f}; katago / katago_noladders: "
        f"{speeds['katago'] / speeds['katago_noladders']:.4f}")


if __name__ == "__main__":
  main()
