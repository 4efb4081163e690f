// Replays positions recorded by tests/test_js_endgame.py with go_rules.js and answers, for each,
// what go_endgame.js decides there.
//
// stdin: JSON [{size, komi, max_moves, moves: [action, ...], prefer: [action, ...],
// proposals: [{action, visits: [A], opponent_passed}, ...]}, ...].
// stdout: JSON [{sensible: [actions], dame, dame_prefer, press, settled: [action per proposal],
// playout_wins, resigns_lost, resigns_even, resigns_around_half}, ...] in the same order.

import * as rules from "../../agz_jax/web/static/go_rules.js";
import * as endgame from "../../agz_jax/web/static/go_endgame.js";
import { readStdin } from "./check_common.mjs";

/** A seeded generator of numbers in [0, 1) (mulberry32). */
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const positions = JSON.parse(await readStdin());
const out = [];
for (const [index, p] of positions.entries()) {
  let state = rules.newGame(p.size, p.komi, p.max_moves);
  for (const action of p.moves) state = rules.play(state, action);
  const sensible = [];
  endgame.sensible(state).forEach((ok, a) => { if (ok) sensible.push(a); });
  const pass = rules.passAction(p.size);
  const half = Math.floor(p.size * p.size / 2);
  const settled = p.proposals.map((found) =>
    endgame.passesAtOnce(state, found.opponent_passed) ? pass
      : endgame.settle(state, found, found.opponent_passed));
  out.push({
    sensible,
    dame: endgame.dameToFill(state),
    dame_prefer: endgame.dameToFill(state, p.prefer),
    press: endgame.pressingMove(state),
    settled,
    playout_wins: endgame.playoutWins(state, endgame.PLAYOUTS, seeded(index + 1)),
    resigns_lost: await endgame.resigns(state, {value: -1}, seeded(index + 1)),
    resigns_even: await endgame.resigns(state, {value: 0}, seeded(index + 1)),
    // A value the search scaled by 0.5 (read as -1), and one scaled by 0 (the count alone).
    resigns_lost_scaled: await endgame.resigns(state, {value: -0.5, valueScale: 0.5},
                                               seeded(index + 1)),
    resigns_unweighed: await endgame.resigns(state, {value: 0, valueScale: 0}, seeded(index + 1)),
    // The same board as if just before and at the first move it may resign on.
    resigns_around_half: [
      await endgame.resigns({...state, moveCount: half - 1}, {value: -1}, seeded(index + 1)),
      await endgame.resigns({...state, moveCount: half}, {value: -1}, seeded(index + 1))],
  });
}
console.log(JSON.stringify(out));
