"""lz-analyze: the interval analysis stream of Leela Zero, which Lizzie and Sabaki read.

  lz-analyze [COLOUR] [INTERVAL]   (INTERVAL in centiseconds, default 100)

After '=' the engine writes one line of `info move ... visits ... winrate ...
prior ... order ... pv ...` items every interval, each search twice as long as
the one before (up to 4096 simulations), until the next command arrives.
"""

from agz_jax import go
from agz_jax.gtp import protocol
from agz_jax.gtp.protocol import COLOURS
from agz_jax.players import win_rate


def parse_args(args: list[str]) -> tuple[float, int | None]:
  """(interval in seconds, at least 0.01; colour or None) of lz-analyze's arguments.

  The interval is a number of centiseconds, bare or after the word 'interval';
  other words (options of other engines' analysis commands) are ignored.

  Raises:
    GtpError: for an interval that is not an integer from 0 to 360000.
  """
  colour, interval = None, 1.0
  for a in args:
    if a.lower() in COLOURS:
      colour = COLOURS[a.lower()]
    elif a[:1] in "+-." or any(ch.isdigit() or ch.isnumeric() for ch in a):
      interval = protocol.integer(a, "interval (centiseconds)", 0, 360000) / 100
  return max(interval, 0.01), colour


def info_line(cfg: go.GoConfig, result: dict) -> str:
  """One line of info items from a player's analyse result, most visited first."""
  items = []
  for order, c in enumerate(result["candidates"]):
    pv = " ".join(go.action_to_gtp(cfg, a) for a in c["pv"])
    items.append(f"info move {go.action_to_gtp(cfg, c['action'])} visits {max(1, c['visits'])} "
                 f"winrate {round(10000 * win_rate(c['value']))} "
                 f"prior {round(10000 * c['prior'])} order {order} pv {pv}")
  return " ".join(items)


def stream(engine, reader, out, interval: float, colour: int | None) -> None:
  """Writes info lines on the engine's position every `interval` seconds until input arrives.

  Args:
    engine: the Engine (its cfg, state, player and simulations).
    reader: a protocol.LineReader, asked whether input is waiting.
    out: the stream written to.
    interval: seconds between lines.
    colour: analyse for this colour (a pass is assumed first if it is not to move), or None.
  """
  cfg, state = engine.cfg, engine.state
  if int(state.terminated):
    return
  if colour is not None and colour != int(state.to_play):
    state = go.play(cfg, [cfg.pass_action], state)
  if int(state.terminated):
    return
  # The engine's --simulations, else the player's own, doubling while nobody interrupts.
  sims = engine.settings.simulations or engine.player.simulations or 1
  while True:
    out.write(info_line(cfg, engine.player.analyse(cfg, state, sims)) + "\n")
    out.flush()
    if reader.waiting(interval):
      return
    sims = min(2 * sims, 4096)
