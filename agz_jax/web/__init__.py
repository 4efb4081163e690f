"""Play a trained network in the browser: Go or Dots and Boxes, from the checkpoint.

  python -m agz_jax.web --pretrained zero-9x9              # then open http://127.0.0.1:8000
  python -m agz_jax.web --checkpoint workdir/dots_3x3 --port 8080

The page shows the board, takes your move by a click, answers with the
engine's move, its win rate and the search's visits as an overlay; it has
undo, new game, a choice of colour (or of moving first or second) and of
thinking time, and for Go the game as SGF. The server listens on localhost
unless --host says otherwise; it holds one game at a time.
"""

import argparse
import sys

from agz_jax import parallel, paths, players
from agz_jax.players.load import load_player, pretrained_path


def make_session(spec: str, *, seconds: float = 1.0, komi: float = players.KOMI, seed: int = 0):
  """The session of the checkpoint (or bundle) `spec`: its game decides which.

  Raises:
    FileNotFoundError: no checkpoint there.
    ValueError: a checkpoint that cannot play.
  """
  from agz_jax import go  # pylint: disable=import-outside-toplevel
  from agz_jax.web.sessions import DotsSession, GoSession  # pylint: disable=import-outside-toplevel
  player = load_player(spec, seed=seed)
  network = getattr(player, "network", None)
  if network is not None and network.game.module is not go:
    if not isinstance(player, players.SearchPlayer):
      raise ValueError(f"{spec}: {network.name} has no value output to search with; the page "
                       "plays a network of this game that has one")
    return DotsSession(player, seconds=seconds)
  return GoSession(player, komi=komi, seconds=seconds)


def main(argv=None):
  parser = argparse.ArgumentParser(description="Play a trained network in the browser.")
  who = parser.add_mutually_exclusive_group(required=True)
  who.add_argument("--checkpoint", help="a training workdir or checkpoint (Go or Dots and Boxes)")
  who.add_argument("--pretrained", help="a network shipped in the repository's pretrained/ folder")
  parser.add_argument("--host", default="127.0.0.1",
                      help="address to listen on (default: this machine only)")
  parser.add_argument("--port", type=int, default=8000)
  parser.add_argument("--seconds", type=float, default=1.0, help="the engine's time per move")
  parser.add_argument("--komi", type=float, default=players.KOMI, help="Go: komi")
  parser.add_argument("--seed", type=int, default=0)
  parallel.add_engine_flags(parser)
  args = parser.parse_args(argv)
  try:
    parallel.use_engine_flags(args)
    spec = args.checkpoint or pretrained_path(args.pretrained)
    session = make_session(spec, seconds=args.seconds, komi=args.komi, seed=args.seed)
  except (FileNotFoundError, ValueError, paths.UnsupportedPath) as e:
    sys.exit(f"web: {e}")
  from agz_jax.web.server import make_server  # pylint: disable=import-outside-toplevel
  try:
    server = make_server(session, args.host, args.port)
  except OSError as e:
    sys.exit(f"web: cannot listen on {args.host}:{args.port} ({e.strerror}): try another --port")
  host, port = server.server_address[:2]
  print(f"playing {session.view()['engine']} ({session.game_name}) on http://{host}:{port}/ "
        "(Ctrl-C stops)", flush=True)
  try:
    server.serve_forever()
  except KeyboardInterrupt:
    pass
  finally:
    server.server_close()
