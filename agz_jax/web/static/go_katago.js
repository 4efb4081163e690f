// KataGo's input planes in plain JavaScript, the encoding "katago_noladders" of
// agz_jax/alphago/katago.py (its module docstring has the table), so that a page can run a
// network trained on them without a server. An ES module over go_rules.js's states.
//
// 22 spatial planes and 8 global features, each global a plane of one value after the 22,
// channels last: [P * 30]. The four ladder planes (14-17) stay empty, as in
// "katago_noladders"; the page does not read ladders.
//
// Benson's pass-alive areas (passAlive) follow agz_jax/go/benson.py's definitions: for each
// colour X, chains of X and X-regions (4-connected sets of points that are not X, counted only
// with an empty point); a region is vital to a chain when each of its empty points is a liberty
// of the chain; chains with fewer than two vital regions among those present are removed, and
// every region next to a removed chain with them, until nothing changes. X's area: its
// surviving chains and every region left with at most one point that no X stone touches.
// White's area is written over black's.

import {BLACK, EMPTY, WHITE, chains, illegalReason, neighbourPoints, ownership} from "./go_rules.js";

export const NUM_SPATIAL = 22;
export const NUM_GLOBAL = 8;
export const NUM_PLANES = NUM_SPATIAL + NUM_GLOBAL;
// Boards the planes read: the current one and the five before it (the last five moves).
export const HISTORY = 6;

/** Components of the points where `inside(p)` holds: [P] component number or -1. */
function components(size, inside) {
  const table = neighbourPoints(size);
  const label = new Array(size * size).fill(-1);
  const members = [];
  for (let start = 0; start < label.length; start++) {
    if (!inside(start) || label[start] >= 0) continue;
    const id = members.length;
    const group = [start];
    label[start] = id;
    for (let i = 0; i < group.length; i++) {
      for (const q of table[group[i]]) {
        if (inside(q) && label[q] < 0) {
          label[q] = id;
          group.push(q);
        }
      }
    }
    members.push(group);
  }
  return {label, members};
}

/** [P] bool: the pass-alive area of `colour` (stones and territory) on `board`. */
function areaOf(size, board, colour) {
  const table = neighbourPoints(size);
  const chain = components(size, (p) => board[p] === colour);
  const region = components(size, (p) => board[p] !== colour);
  // Per region: its empty points, the chains each of them touches, whether it is vital to a
  // chain (the chain touches every empty point) and its points no X stone touches.
  const vitalTo = region.members.map((points) => {
    const empties = points.filter((p) => board[p] === EMPTY);
    if (empties.length === 0) return [];
    const touching = (p) => new Set(table[p].map((q) => chain.label[q]).filter((c) => c >= 0));
    let common = touching(empties[0]);
    for (const p of empties.slice(1)) {
      const here = touching(p);
      common = new Set([...common].filter((c) => here.has(c)));
    }
    return [...common];
  });
  const hasEmpty = region.members.map((points) => points.some((p) => board[p] === EMPTY));
  const alive = new Array(chain.members.length).fill(true);
  let present = new Array(region.members.length).fill(true);
  for (let changed = true; changed;) {
    const count = new Array(chain.members.length).fill(0);
    vitalTo.forEach((list, r) => {
      if (present[r]) for (const c of list) count[c] += 1;
    });
    changed = false;
    alive.forEach((was, c) => {
      if (was && count[c] < 2) {
        alive[c] = false;
        changed = true;
      }
    });
    // A region next to a removed chain is removed too.
    present = region.members.map((points) => !points.some(
        (p) => table[p].some((q) => chain.label[q] >= 0 && !alive[chain.label[q]])));
  }
  const owned = region.members.map((points, r) => {
    if (!present[r] || !hasEmpty[r]) return false;
    const internal = points.filter((p) => !table[p].some((q) => board[q] === colour));
    return internal.length <= 1;
  });
  return board.map((v, p) => (v === colour ? alive[chain.label[p]] : owned[region.label[p]]));
}

/** Benson's pass-alive area of both players on a size x size board (go.pass_alive): [P] +1
 * black's, -1 white's, 0 neither. */
export function passAlive(size, board) {
  const black = areaOf(size, board, BLACK);
  const white = areaOf(size, board, WHITE);
  return board.map((_, p) => (white[p] ? WHITE : black[p] ? BLACK : EMPTY));
}

/** [P] owner of each point by KataGo's area count (katago.area): Tromp-Taylor's, overruled by
 * each side's pass-alive area. */
export function area(state) {
  const alive = passAlive(state.size, state.board);
  const tromp = ownership(state);
  return alive.map((owner, p) => (owner !== EMPTY ? owner : tromp[p]));
}

/** KataGo's komi parity wave (katago.komi_wave): a triangle of period 2 in [-0.5, 0.5], 0 at
 * the komis where a game can be drawn. */
export function komiWave(komi, points) {
  const floor = points % 2 === 0 ? 2 * Math.floor(komi / 2) : 2 * Math.floor((komi - 1) / 2) + 1;
  const delta = Math.min(Math.max(komi - floor, 0), 2);
  return delta < 0.5 ? delta : delta < 1.5 ? 1 - delta : delta - 2;
}

/** The 8 global features of `state` (katago.global_features): the moves 1..5 plies ago were
 * passes, komi from the mover's view / 20, a pass now would end the game, the komi wave. */
export function globalFeatures(state) {
  const boards = [state.board, ...state.previous].slice(0, HISTORY);
  const passed = [];
  for (let age = 1; age < HISTORY; age++) {
    const same = age <= state.moveCount && age < boards.length &&
                 boards[age - 1].every((v, p) => v === boards[age][p]);
    passed.push(same ? 1 : 0);
  }
  const points = state.size * state.size;
  let komi = state.toPlay === WHITE ? state.komi : -state.komi;
  komi = Math.min(Math.max(komi, -(points + 20)), points + 20);
  return [...passed, komi / 20, passed[0], komiWave(komi, points)];
}

/** KataGo's planes of `state` ("katago_noladders"): a Float32Array of size x size x 30,
 * channels last (the module's header). */
export function katagoPlanes(state) {
  const {size, board, toPlay: me} = state;
  const points = size * size;
  const out = new Float32Array(points * NUM_PLANES);
  const set = (p, plane) => { out[p * NUM_PLANES + plane] = 1; };
  const {chainOf, liberties} = chains(state);
  const owner = area(state);
  for (let p = 0; p < points; p++) {
    set(p, 0);
    if (board[p] === me) set(p, 1);
    else if (board[p] === -me) set(p, 2);
    if (board[p] !== EMPTY) {
      const libs = liberties[chainOf[p]].size;
      if (libs >= 1 && libs <= 3) set(p, 2 + libs);
    } else if (illegalReason(state, p) === "superko") {
      set(p, 6);
    }
    if (owner[p] === me) set(p, 18);
    else if (owner[p] === -me) set(p, 19);
  }
  // Where the moves 1..5 plies ago were played: one new stone of their mover, none for a pass.
  const boards = [board, ...state.previous];
  for (let age = 1; age < HISTORY && age <= state.moveCount && age < boards.length; age++) {
    const mover = age % 2 === 1 ? -me : me;
    const placed = [];
    for (let p = 0; p < points; p++) {
      if (boards[age][p] === EMPTY && boards[age - 1][p] === mover) placed.push(p);
    }
    if (placed.length === 1) set(placed[0], 8 + age);
  }
  globalFeatures(state).forEach((value, k) => {
    for (let p = 0; p < points; p++) out[p * NUM_PLANES + NUM_SPATIAL + k] = value;
  });
  return out;
}
