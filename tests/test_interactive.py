"""interactive: a person's typed moves against a player, refusals explained and asked again."""

import pytest

from agz_jax import go, interactive, players

import helpers


def scripted(moves, *, human=go.BLACK, player=None):
  """Plays `moves` as the person; returns (game, lines said, boards shown)."""
  said, shown = [], []
  game = interactive.play(player or players.RandomPlayer(seed=3), human=human, moves=moves,
                          size=9, say=said.append, show=lambda g: shown.append(g.board()))
  return game, said, shown


def test_refused_moves_are_explained_and_asked_again():
  game, said, shown = scripted(["e5", "E5", "Z9", "", "C3"])
  refusals = [line for line in said if line.endswith("; try again")]
  assert refusals[0] == "E5 is illegal: occupied; try again"
  assert refusals[1].startswith("bad vertex 'Z9': expected a column A-J (no I) and a row 1-9")
  assert refusals[2].startswith("bad vertex ''")
  assert len(refusals) == 3
  # Nothing refused was played: E5 and C3 for the person, one answer after each, then the
  # script ran out and the person resigned.
  human_moves = [m[1] for m in game.engine.moves if m[0] == go.BLACK]
  assert human_moves == [go.gtp_to_action(game.cfg, "E5"), go.gtp_to_action(game.cfg, "C3")]
  assert sum(line.startswith("random (white) plays ") for line in said) == 2
  assert game.result == "W+R" and said[-1] == "game over: W+R"
  assert shown[0].splitlines()[-1] == "black to play, move 0, komi 7.5"
  assert "X" in shown[1] and "O" not in shown[1] and len(shown) == 6


def test_two_passes_end_the_game_with_its_score():
  # The player (black) passes as soon as the person passed and the score favours it:
  # one black stone owns the empty board, 81 - 7.5.
  game, said, _ = scripted(["pass"], human=go.WHITE)
  assert [m[1] for m in game.engine.moves][1:] == [game.cfg.pass_action] * 2
  assert game.result == "B+73.5" and said[-1] == "game over: B+73.5"


def test_a_network_answers_and_the_game_says_whose_turn_it_is(tmp_path):
  player = players.load_player(helpers.make_checkpoint(tmp_path), simulations=4)
  game = interactive.HumanGame(player, human=go.WHITE)
  with pytest.raises(ValueError, match="not the person's turn"):
    game.human_move("E5")
  vertex = game.reply()
  assert game.last_move == go.gtp_to_action(game.cfg, vertex) and game.to_play == go.WHITE
  with pytest.raises(ValueError, match="not the player's turn"):
    game.reply()
  assert game.human_move(vertex) == f"{vertex} is illegal: occupied"
  assert game.human_move("resign") is None and game.result == "B+R"


def test_the_person_plays_black_or_white_on_a_size_the_player_knows(tmp_path):
  with pytest.raises(ValueError, match="go.BLACK or go.WHITE"):
    interactive.HumanGame(players.RandomPlayer(), human=0)
  assert interactive.HumanGame(players.RandomPlayer()).cfg.size == 19
  network = players.load_player(helpers.make_checkpoint(tmp_path, size=5), simulations=0)
  assert interactive.HumanGame(network).cfg.size == 5
  with pytest.raises(ValueError, match="does not play 9x9"):
    interactive.HumanGame(network, size=9)


def test_undo_takes_back_to_the_persons_previous_turn_and_sgf_records_the_game():
  game = interactive.HumanGame(players.RandomPlayer(seed=3), human=go.WHITE, size=9)
  assert not game.undo()                                   # the person has not moved yet
  game.reply()
  assert game.human_move("E5") is None
  game.reply()
  assert len(game.moves) == 3 and game.last_search["action"] == game.moves[-1][1]
  assert game.sgf().count(";B[") == 2 and ";W[ee]" in game.sgf()
  assert game.undo()                                       # black's answer and white's E5
  assert len(game.moves) == 1 and game.moves[0][0] == go.BLACK and game.to_play == go.WHITE
  assert not game.undo()
