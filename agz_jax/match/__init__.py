"""Matches between two GTP engines, refereed and scored by our rules.

  python -m agz_jax.match \\
      --black "/usr/games/gnugo --mode gtp --level 1 --chinese-rules --capture-all-dead" \\
      --white "python -m agz_jax.gtp --random --seed {seed}" \\
      --games 20 --size 9 --komi 7.5 --out matches/gnugo_vs_random

`--black` is engine A and `--white` engine B: A has black in the even games
(0, 2, ...), B in the odd ones. Each of the P parallel workers owns one process
of each engine and reuses it (clear_board) from game to game; `{seed}` in a
command becomes a number of its own for every process, so that two workers do
not replay the same games against a deterministic opponent.

Every move is checked with our rules: a move they reject (occupied, suicide,
positional superko), a refused command, a crash or a timeout loses the game for
that engine. Games that end with two passes or at the move limit are counted
with Tromp-Taylor area scoring (go.score); both engines' own `final_score`
answers are logged next to ours. GNU Go needs --chinese-rules
--capture-all-dead to play under this scoring (without the second flag it
passes with dead stones on the board, which area scoring then counts as alive);
it only knows simple ko unless given --positional-superko, so without that flag
a rare superko repetition loses it the game here.

`--sprt ELO0 ELO1` (with --alpha, --beta) stops the match as soon as a sequential
probability ratio test accepts H0 (A is ELO0 Elo stronger than B) or H1 (ELO1), printing
the log-likelihood ratio and its bounds after each game (match.sprt); `--openings FILE`
starts each pair of games, colours swapped, from the first --opening-moves moves of one
game of an SGF file or folder, so that the pair differs only in who plays which side
(`--random-openings MOVES`: from MOVES random moves on the third line and in, for boards
with no human games; without openings engines that search alike replay the same games,
which the summary counts);
`--sprt-pairs` then has the test count whole pairs (their five possible scores: the
pentanomial model), which decides sooner at narrow bounds where colour decides many pairs.

Output: DIR/games/NNNN.sgf, one JSON line per game in DIR/results.jsonl (read
by agz_jax.ratings), each engine process's stderr in DIR/logs/. Running the
same command again on the same DIR plays only the games not yet in
results.jsonl.
"""

from agz_jax.match.cli import main
from agz_jax.match.process import EngineFailure, EngineStartError, GtpProcess, GtpRefused
from agz_jax.match.referee import Outcome, load_openings, play_game, random_openings
from agz_jax.match.report import default_name, player_names, summary
from agz_jax.match.runner import a_record, pair_counts, run_match
from agz_jax.match.sprt import Sprt

__all__ = ["EngineFailure", "EngineStartError", "GtpProcess", "GtpRefused", "Outcome", "Sprt",
           "a_record", "default_name", "load_openings", "main", "pair_counts", "play_game",
           "player_names", "random_openings", "run_match", "summary"]
