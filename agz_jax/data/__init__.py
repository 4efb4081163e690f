"""Human game records for supervised learning: import from SGF, store, split, batch.

`python -m agz_jax.data.import_sgf SRC... --out DIR` reads SGF files and tar
archives (such as the KGS 6d+ archives) into DIR/games.npz; `load(DIR)` gives
them back as a GameArchive of numpy arrays.

The importer (sgfmill, the JAX rules) is loaded only when `import_games` is
called, so that reading an archive stays light and `python -m` can run the
importer module without it having been imported already.
"""

from agz_jax.data.games import (GAMES_FILE, Game, GameArchive, from_games, game, load,
                                padded_moves, save, split_by_date, value_games)


def import_games(sources, size: int = 19, min_moves: int = 20, chunk_size: int = 512,
                 progress: bool = True):
  """Reads SGF games into a GameArchive; see `agz_jax.data.import_sgf.import_games`.

  Returns:
    (GameArchive, counts).
  """
  from agz_jax.data import import_sgf  # pylint: disable=import-outside-toplevel
  return import_sgf.import_games(sources, size, min_moves, chunk_size, progress)


__all__ = [
    "GAMES_FILE", "Game", "GameArchive", "from_games", "game", "import_games", "load",
    "padded_moves", "save", "split_by_date", "value_games",
]
