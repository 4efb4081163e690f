// Replays games recorded by the JAX rules (tests/test_js_rules.py) with go_rules.js.
//
// stdin: JSON [{size, komi, max_moves, moves: [action, ...], after: [{legal, to_play, score,
// over}, ...]}, ...], one `after` entry per move (`legal` is [] once the game is over).
// Prints "ok N games", or exits 1 naming the game and move of the first disagreement.

import * as rules from "../../agz_jax/web/static/go_rules.js";
import { fail, readStdin, same } from "./check_common.mjs";

function check(game, index) {
  const where = `game ${index} (${game.size}x${game.size}, komi ${game.komi})`;
  let state = rules.newGame(game.size, game.komi, game.max_moves);
  const points = game.size * game.size;
  if (rules.legalMoves(state).length !== points + 1 || rules.toPlay(state) !== rules.BLACK ||
      rules.isOver(state) || rules.score(state) !== -game.komi) {
    fail(`${where}: a new game is not an empty board with black to move`);
  }
  if (game.after.length !== game.moves.length) {
    fail(`${where}: ${game.moves.length} moves but ${game.after.length} records`);
  }
  game.moves.forEach((action, move) => {
    const before = state;
    const frozen = JSON.stringify(before);
    const legalBefore = JSON.stringify(rules.legalMoves(before));
    try {
      state = rules.play(state, action);
    } catch (error) {
      fail(`${where}, move ${move} (action ${action}): play threw: ${error.message}`);
    }
    if (JSON.stringify(before) !== frozen || JSON.stringify(rules.legalMoves(before)) !==
        legalBefore) {
      fail(`${where}, move ${move}: play changed its input`);
    }
    const want = game.after[move];
    const got = {legal: rules.legalMoves(state), to_play: rules.toPlay(state),
                 score: rules.score(state), over: rules.isOver(state)};
    for (const key of Object.keys(got)) {
      if (!(key in want)) fail(`${where}, move ${move}: the record has no ${key}`);
      if (!same(got[key], want[key])) {
        fail(`${where}, move ${move} (action ${action}): ${key} is ` +
             `${JSON.stringify(got[key])}, the JAX rules say ${JSON.stringify(want[key])}`);
      }
    }
  });
}

const games = JSON.parse(await readStdin());
games.forEach(check);
console.log(`ok ${games.length} games`);
