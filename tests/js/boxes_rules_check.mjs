// Replays games recorded by the JAX rules (tests/test_js_rules.py) with boxes_rules.js.
//
// stdin: JSON [{rows, cols, moves: [line, ...], after: [{legal, to_play, scores: {first,
// second}, over, result?}, ...]}, ...], one `after` entry per move (`result` on the last).
// Prints "ok N games", or exits 1 naming the game and move of the first disagreement.

import * as rules from "../../agz_jax/web/static/boxes_rules.js";
import { fail, readStdin, same } from "./check_common.mjs";

function check(game, index) {
  const where = `game ${index} (${game.rows}x${game.cols})`;
  let state = rules.newGame(game.rows, game.cols);
  if (rules.legalMoves(state).length !== rules.numLines(game.rows, game.cols) ||
      rules.toPlay(state) !== rules.FIRST || rules.isOver(state)) {
    fail(`${where}: a new game is not an empty board with the first player to move`);
  }
  if (game.after.length !== game.moves.length) {
    fail(`${where}: ${game.moves.length} moves but ${game.after.length} records`);
  }
  game.moves.forEach((line, move) => {
    const before = state;
    const frozen = JSON.stringify(before);
    try {
      state = rules.play(state, line);
    } catch (error) {
      fail(`${where}, move ${move} (line ${line}): play threw: ${error.message}`);
    }
    if (JSON.stringify(before) !== frozen) fail(`${where}, move ${move}: play changed its input`);
    const want = game.after[move];
    const got = {legal: rules.legalMoves(state), to_play: rules.toPlay(state),
                 scores: rules.score(state), over: rules.isOver(state)};
    if ("result" in want) got.result = rules.result(state);
    for (const key of Object.keys(got)) {
      if (!(key in want)) fail(`${where}, move ${move}: the record has no ${key}`);
      if (!same(got[key], want[key])) {
        fail(`${where}, move ${move} (line ${line}): ${key} is ${JSON.stringify(got[key])}, ` +
             `the JAX rules say ${JSON.stringify(want[key])}`);
      }
    }
  });
}

const games = JSON.parse(await readStdin());
games.forEach(check);
console.log(`ok ${games.length} games`);
