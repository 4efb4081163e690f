// Searches positions of Dots and Boxes with puct.js and prints each search's root visits, for
// tests/test_js_search.py to compare with the Python player's search of the same positions.
// stdin: {"settings": {...}, "simulations": n, "positions": [{"rows", "cols", "moves"}]}.

import * as rules from "../../agz_jax/web/static/boxes_rules.js";
import {search} from "../../agz_jax/web/static/puct.js";
import {readStdin} from "./check_common.mjs";

/** The evaluator of the test (test_js_search.fake_evaluator, in float64). */
function evaluate(state) {
  const logits = state.lines.map((_, a) => 2 * Math.sin(1.3 * a + 0.7 * state.moveCount));
  const balance = state.boxes.reduce((s, owner) => s + owner, 0);
  const value = Math.tanh(0.35 * state.toPlay * balance + 0.1 * Math.cos(state.moveCount));
  return {logits, value};
}

const request = JSON.parse(await readStdin());
const out = [];
for (const {rows, cols, moves} of request.positions) {
  let state = rules.newGame(rows, cols);
  for (const line of moves) state = rules.play(state, line);
  const found = await search(rules.searchGame(rows, cols), state, evaluate, request.simulations,
                             request.settings);
  out.push({action: found.action, visits: found.visits, value: found.value});
}
console.log(JSON.stringify(out));
