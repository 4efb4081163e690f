"""Work of uneven lengths on a fixed number of lanes: AlphaGo's two loops of that kind.

The ladder reader (`ladders.read`: a lane reads one ladder) and the rollouts
(`rollout.rollouts`: a lane plays one game) both run a `while_loop` whose every
step advances every lane by one move; a lane whose item is done takes the next
one waiting. The loop ends with its longest item, so the last few long items
would keep every lane stepping: once everything has been handed out and few lanes
are still busy, the busy ones move onto fewer lanes (`widths`), since on a CPU a
step costs in proportion to its lanes. An accelerator runs the lanes side by side
(shrink 1: the lanes never narrow).
"""

import jax
import jax.numpy as jnp


def backend_kind() -> str:
  """'cpu' or 'accelerator': the keys of the per-backend settings (ladder lanes, rollout lanes)."""
  return "cpu" if jax.default_backend() == "cpu" else "accelerator"


def widths(lanes: int, shrink: int, fewest: int = 1, *, end_at_fewest: bool = False) -> list[int]:
  """The lanes of each phase: `lanes`, then divided by `shrink` (rounded down) as long as that
  leaves at least `fewest`; with `end_at_fewest`, a division that leaves fewer ends on a last
  phase of `fewest` lanes (the ladder reader's longest readings finish on one lane)."""
  out = [lanes]
  while shrink > 1 and out[-1] > fewest:
    if out[-1] // shrink < fewest:
      if end_at_fewest:
        out.append(fewest)
      break
    out.append(out[-1] // shrink)
  return out


def busy_first(busy: jnp.ndarray, width: int) -> jnp.ndarray:
  """[width] lane indices: the busy lanes (at most `width` of them), in lane order, then idle
  ones."""
  return jnp.argsort(~busy, stable=True)[:width]


def drain(carry, step, *, phases: list[int], waiting, busy, narrow):
  """Steps the lanes until no item is waiting and none is busy, the lanes narrowing between phases.

  Args:
    carry: the loop's state, on phases[0] lanes.
    step: carry -> carry: every lane one step further (and, its business, free lanes handed
      the next items).
    phases: the lanes of each phase (`widths`).
    waiting: carry -> [] bool, items not yet handed to a lane.
    busy: carry -> [] int32, lanes with an item in progress.
    narrow: (carry, width) -> the carry on `width` lanes, the busy ones kept (`busy_first`).

  A phase ends once nothing is waiting and at most the next phase's lanes are busy; the last
  once nothing is left.

  Returns:
    the carry at the end, on phases[-1] lanes.
  """
  for i, width in enumerate(phases):
    if i:
      carry = narrow(carry, width)
    then = phases[i + 1] if i + 1 < len(phases) else 0
    carry = jax.lax.while_loop(lambda c, then=then: waiting(c) | (busy(c) > then), step, carry)
  return carry
