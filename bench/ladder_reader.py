"""Where the ladder reader's time goes, on the positions of bench/features_speed.py.

AlphaGo's 48 planes spend most of their time reading ladders. This prints, for a
batch of positions (human ones where --data holds an import):

  - the ladders the batch asks for: how many, how many are decided where they
    start, and the moves the others try when each is read alone to its end
    (`ladders.read_alone`): in all, the median, the longest;
  - the reading's cost: the 48 planes' time minus their time without the ladder
    reading, per ladder read and per move tried;
  - the longest reading alone, timed on one lane: the time that no number of
    lanes can take below, since `ladders.read` waits for its longest reading;
  - `ladders.read` itself, with the steps its loop would take at the default lanes
    ((moves tried) / lanes plus the longest reading).

  python bench/ladder_reader.py --data data/kgs_2017_05      # 19x19, batch 256
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np

import features_speed
import timing
from agz_jax import alphago, go
from agz_jax.alphago import ladders

FEATURES = alphago.planes  # its private steps: the candidates, the planes without the reading


def candidates(cfg: go.GoConfig, states: go.GoState):
  """The batch's ladders as the 48 planes list them: (count, capacity, ladder_at)."""
  _, *found = jax.vmap(functools.partial(
      FEATURES._alphago_without_ladders, cfg, colour_plane=False))(states)  # pylint: disable=protected-access
  count, capacity, ladder_at, _ = FEATURES._ladder_candidates(cfg, *found)  # pylint: disable=protected-access
  return count, capacity, ladder_at


def starts(cfg: go.GoConfig, states: go.GoState):
  """Every ladder of the batch where it starts, and how many there are."""
  count, capacity, ladder_at = candidates(cfg, states)
  return count, jax.vmap(ladder_at)(jnp.minimum(jnp.arange(capacity), jnp.maximum(count - 1, 0)))


def measure(cfg: go.GoConfig, states: go.GoState, repeats: int) -> dict:
  """Prints and returns the figures of the module docstring for one batch of positions, the
  ladders read inside the program (what `ladders.read_alone` times too) on any backend."""
  return _measure(cfg, states, repeats, features_speed.ladder_settings(reader="device"))


def _measure(cfg: go.GoConfig, states: go.GoState, repeats: int,
             ladder: alphago.LadderSettings) -> dict:
  batch = states.board.shape[0]
  # The ladders, each read alone to its end (only the undecided ones need a lane).
  count, start = jax.jit(functools.partial(starts, cfg))(states)
  count = int(count)
  undecided = np.flatnonzero(np.asarray(start.status)[:count] == ladders.UNDECIDED)
  f = {"ladders": count, "undecided": len(undecided)}
  if not len(undecided):
    print(f"  ladders: {count:,}, every one decided where it starts: nothing to read")
    return f
  ends = jax.jit(jax.vmap(functools.partial(ladders.read_alone, cfg)))(
      jax.tree.map(lambda a: a[undecided], start))
  tries = np.asarray(ends.tries)
  f.update(tries=int(tries.sum()), tries_median=float(np.median(tries)),
           tries_p99=float(np.percentile(tries, 99)), tries_longest=int(tries.max()))
  print(f"  ladders: {count:,} ({count / batch:.2f} per position), {len(undecided):,} not "
        f"decided where they start; moves tried reading those alone: {f['tries']:,} in all, "
        f"median {f['tries_median']:.0f}, 99th percentile {f['tries_p99']:.0f}, longest "
        f"{f['tries_longest']}")

  # The reading's cost: the 48 planes against the same planes without it.
  with_ladders = jax.jit(functools.partial(go.features, cfg, encoding="alphago48",
                                           ladder=ladder))
  without = jax.jit(functools.partial(features_speed.without_ladders, cfg))
  f["planes_s"] = timing.seconds(with_ladders, states, repeats=repeats)
  f["without_reading_s"] = timing.seconds(without, states, repeats=repeats)
  reading = f["planes_s"] - f["without_reading_s"]
  f.update(us_per_ladder=reading / count * 1e6, us_per_move=reading / f["tries"] * 1e6)
  print(f"  48 planes {f['planes_s'] * 1e3:,.1f} ms, without the ladder reading "
        f"{f['without_reading_s'] * 1e3:,.1f} ms: the reading {reading * 1e3:,.1f} ms "
        f"({reading / f['planes_s']:.0%}), {f['us_per_ladder']:,.1f} us per ladder, "
        f"{f['us_per_move']:,.2f} us per move tried")

  # The longest reading alone, on one lane.
  one = jax.tree.map(lambda a: a[int(undecided[np.argmax(tries)])], start)
  f["longest_alone_s"] = timing.seconds(jax.jit(functools.partial(ladders.read_alone, cfg)),
                                         one, repeats=repeats)
  print(f"  the longest reading alone ({f['tries_longest']} moves tried), one lane: "
        f"{f['longest_alone_s'] * 1e3:,.2f} ms "
        f"({f['longest_alone_s'] / f['tries_longest'] * 1e6:,.1f} us per move); no lane count "
        f"takes the batch below it: at most {batch / f['longest_alone_s']:,.0f} positions/s")

  lanes = ladder.lanes_for(batch)
  f["loop_steps"] = f["tries"] / lanes + f["tries_longest"]
  print(f"  ladders.read at the default {lanes} lanes: about {f['loop_steps']:,.0f} loop steps "
        f"({f['tries'] / lanes:,.0f} for the moves, {f['tries_longest']} for the longest reading)")
  return f


def main():
  args = features_speed.arguments(__doc__.splitlines()[0])
  cfg, states = features_speed.the_positions(args)
  measure(cfg, states, args.repeats)


if __name__ == "__main__":
  main()
