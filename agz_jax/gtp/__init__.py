"""A GTP (version 2) engine, for Sabaki, GoGui, Lizzie and match runners.

  python -m agz_jax.gtp --checkpoint workdir/cpu_9x9 [--simulations 64] [--seconds-per-move 2]
  python -m agz_jax.gtp --checkpoint workdir/cpu_9x9 --policy-only   # the network's best move
  python -m agz_jax.gtp --random                                      # a random player (any size)
  python -m agz_jax.gtp --checkpoint workdir/sl_policy_cpu --sample-moves 30 --seed 7
      # an SL policy checkpoint always plays its policy; the first 30 moves drawn from it
  python -m agz_jax.gtp --player alphago:prior=workdir/sl_policy_cpu,rollout=workdir/rollout_policy \
      --seconds-per-move 2     # AlphaGo's search: SL prior, leaves valued by rollouts
  python -m agz_jax.gtp --pretrained alphago-19x19   # the bundle shipped in pretrained/

Commands: protocol_version, name, version, known_command, list_commands, quit,
boardsize, clear_board, komi, play, genmove, undo, showboard, final_score,
time_settings, time_left, loadsgf, printsgf, reg_genmove and lz-analyze (the
interval analysis stream of Leela Zero that Lizzie and Sabaki read).

Every line that GTP 2's preprocessing leaves a command of gets exactly one
answer; a malformed or illegal command gets a `? reason` reply, changes
nothing, and the engine goes on. As in GTP 2, only the space and the tab
separate words (other Unicode white space is part of a word), numbers are
ASCII decimals of sane size, and a line longer than 64 KiB is refused. A
move of the colour not to move is preceded by a pass of the other colour; that
pass never ends the game. After two passes the engine plays on when asked
(`play` or `genmove`), as GNU Go does, from the same position (superko then
remembers only the positions from there on).
Scoring is Tromp-Taylor area scoring (play GNU Go with --chinese-rules
--capture-all-dead). The PUCT search starts each genmove from the subtree of
the position reached (after our last move and the opponent's answer), keeping
its visits, unless --no-tree-reuse; the Gumbel search starts afresh every move.

Modules: protocol (lines, parsing, the serve loop, responses), engine (the
game's state and the commands), analysis (lz-analyze), cli (the command line).
"""

from agz_jax.gtp.cli import main
from agz_jax.gtp.engine import Engine
from agz_jax.gtp.protocol import COMMANDS, Command, GtpError, LineReader, handle, parse, serve

__all__ = ["COMMANDS", "Command", "Engine", "GtpError", "LineReader", "handle", "main", "parse",
           "serve"]
