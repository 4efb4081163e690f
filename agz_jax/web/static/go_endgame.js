// The GTP engine's endgame rules (agz_jax/players/move_policy.py) in plain JavaScript, so that
// the page's Go engine settles a game as the engine does in Sabaki or GoGui: the search
// proposes a move, these rules decide what is played. An ES module over go_rules.js's states.
//
// - Pass at once when the opponent passed and the Tromp-Taylor score favours the mover.
// - Never fill one of the mover's own eyes while another candidate fills none (an eye: an
//   empty point whose neighbours are all the mover's stones or the edge, with at most one
//   diagonal held by the opponent, none on the edge: go.sensible_moves).
// - Never pass while a neutral point is left whose filling raises the mover's score and
//   leaves the new stone two liberties or more (dameToFill).
// - Never pass while the count is against the mover: play a candidate that fills no own eye,
//   a worthwhile neutral point, or a liberty of the opponent's weakest chain (pressingMove).
// - Resign when the search's win rate is below RESIGN_THRESHOLD, after half the points' moves,
//   and random playouts of the position agree (fewer than RESIGN_PLAYOUT_WINS of PLAYOUTS won).
//   A value the search scaled (its valueScale) is read un-scaled; where the scale is 0 the
//   playouts alone resign, below RESIGN_THRESHOLD.
//
// The search's result is {action, visits: [A], value, valueScale?}: its candidates are the visited actions,
// most visited first (the chosen action first among equals), as players.Analysis lists them.

import {EMPTY, chains, illegalReason, isOver, legalMoves, neighbourPoints, ownership, passAction,
        play, score} from "./go_rules.js";

export const RESIGN_THRESHOLD = 0.05;
export const PLAYOUTS = 64;
export const RESIGN_PLAYOUT_WINS = 0.25;

function neighbours(size, point) {
  return neighbourPoints(size)[point];
}

/** Whether the empty `point` of `board` is an eye of `me`: every neighbour `me`'s stone or
 * the edge, at most one diagonal held by the opponent, none on the edge. */
function isOwnEye(size, board, me, point) {
  if (!neighbours(size, point).every((q) => board[q] === me)) return false;
  const r = Math.floor(point / size);
  const c = point % size;
  let defects = 0;
  let edge = false;
  for (const [dr, dc] of [[-1, -1], [-1, 1], [1, -1], [1, 1]]) {
    const rr = r + dr;
    const cc = c + dc;
    if (rr < 0 || rr >= size || cc < 0 || cc >= size) edge = true;
    else if (board[rr * size + cc] === -me) defects += 1;
  }
  return defects + (edge ? 1 : 0) < 2;
}

/** [P] bool: the mover's own eyes (go.features.own_eyes). */
export function ownEyes(state) {
  const {size, board, toPlay: me} = state;
  return board.map((stone, point) => stone === EMPTY && isOwnEye(size, board, me, point));
}

/** [P + 1] bool: the legal points that fill none of the mover's eyes; the pass false
 * (go.sensible_moves). */
export function sensible(state) {
  const out = new Array(state.size * state.size + 1).fill(false);
  const eyes = ownEyes(state);
  for (const action of legalMoves(state)) {
    if (action < eyes.length && !eyes[action]) out[action] = true;
  }
  return out;
}

/** [P] the mover's score gain of filling each neutral point (0 where it may not: not neutral,
 * not sensible, or the new stone's chain left with fewer than two liberties). */
export function dameGains(state) {
  const owner = ownership(state);
  const allowed = sensible(state);
  const before = score(state);
  return owner.map((who, point) => {
    if (who !== EMPTY || !allowed[point]) return 0;
    const after = play(state, point);
    const {chainOf, liberties} = chains(after);
    if (liberties[chainOf[point]].size < 2) return 0;
    return state.toPlay * (score(after) - before);
  });
}

/** A neutral point worth filling (move_policy.dame_to_fill): the first of `prefer` whose
 * filling raises the mover's score, else the one that raises it most (the first of equals);
 * null where none does. */
export function dameToFill(state, prefer = []) {
  const gains = dameGains(state);
  for (const action of prefer) if (action < gains.length && gains[action] > 0) return action;
  let best = 0;
  for (let p = 1; p < gains.length; p++) if (gains[p] > gains[best]) best = p;
  return gains[best] > 0 ? best : null;
}

/** For a mover behind on the count with nothing to play (move_policy.pressing_move): a sensible
 * liberty of the opponent's chain with the fewest liberties (the most stones, then the smallest
 * point, first among equals) that captures or leaves the new stone two liberties or more; else
 * any sensible point that does; null where there is neither. */
export function pressingMove(state) {
  const {size, board, toPlay: me} = state;
  const {chainOf, stones, liberties} = chains(state);
  const allowed = sensible(state);
  const keepsTwo = (point) => {
    const libs = new Set(neighbours(size, point).filter((q) => board[q] === EMPTY));
    for (const q of neighbours(size, point)) {
      if (board[q] === me) for (const l of liberties[chainOf[q]]) libs.add(l);
      else if (board[q] === -me) {
        const theirs = liberties[chainOf[q]];
        if (theirs.size === 1 && theirs.has(point)) return true;
      }
    }
    libs.delete(point);
    return libs.size >= 2;
  };
  const opponents = [...stones.keys()].filter((id) => board[stones[id][0]] === -me);
  opponents.sort((a, b) => liberties[a].size - liberties[b].size ||
                           stones[b].length - stones[a].length || a - b);
  for (const id of opponents) {
    for (const point of [...liberties[id]].sort((a, b) => a - b)) {
      if (allowed[point] && keepsTwo(point)) return point;
    }
  }
  for (let point = 0; point < board.length; point++) {
    if (allowed[point] && keepsTwo(point)) return point;
  }
  return null;
}

/** The search's candidates: visited actions, most visited first, `found.action` first among
 * equals, then by action. */
export function candidates(found) {
  const order = [];
  found.visits.forEach((v, a) => { if (v > 0) order.push(a); });
  const rank = (a) => -found.visits[a] - (a === found.action ? 0.5 : 0);
  return order.sort((a, b) => rank(a) - rank(b) || a - b);
}

/** The action the engine plays of the search's proposal (move_policy._settled): the proposed
 * move unless it fills an own eye or is a pass that hands over points. */
export function settle(state, found, opponentPassed) {
  const pass = passAction(state.size);
  const {action} = found;
  const allowed = sensible(state);
  if (action !== pass && allowed[action]) return action;
  const proposed = candidates(found);
  const behind = state.toPlay * score(state) < 0;
  if (action === pass && !behind) {
    const dame = opponentPassed ? null : dameToFill(state, proposed);
    return dame ?? pass;
  }
  for (const candidate of proposed) if (candidate !== pass && allowed[candidate]) return candidate;
  const dame = dameToFill(state);
  if (dame !== null) return dame;
  if (behind) {
    const press = pressingMove(state);
    if (press !== null) return press;
  }
  return action === pass || !behind ? pass : action;
}

/** A board for random playouts, changed in place: the rules of go_rules.js but the simple ko
 * rule for positional superko (as the engine's playouts, rollout.rollouts), and no record of
 * positions, so that a move costs a few flood fills near it rather than a pass over the board.
 * The first move is checked against the state's full rules. */
class PlayoutBoard {
  constructor(state) {
    this.state = state;
    this.size = state.size;
    this.board = Int8Array.from(state.board);
    this.toPlay = state.toPlay;
    this.passes = state.passes;
    this.ko = -1;  // the point the simple ko rule bans now
    this.table = neighbourPoints(state.size);
    this.seen = new Int32Array(this.board.length);
    this.stamp = 0;
  }

  /** The chain at `point`: its stones and number of liberties. */
  chain(point) {
    const {board, table, seen} = this;
    const colour = board[point];
    const stamp = ++this.stamp;
    const stones = [point];
    let liberties = 0;
    seen[point] = stamp;
    for (let i = 0; i < stones.length; i++) {
      for (const q of table[stones[i]]) {
        if (seen[q] === stamp) continue;
        if (board[q] === EMPTY) {
          seen[q] = stamp;
          liberties += 1;
        } else if (board[q] === colour) {
          seen[q] = stamp;
          stones.push(q);
        }
      }
    }
    return {stones, liberties};
  }

  legal(point) {
    if (this.board[point] !== EMPTY || point === this.ko) return false;
    if (this.state !== null) return illegalReason(this.state, point) === null;
    for (const q of this.table[point]) {
      const stone = this.board[q];
      if (stone === EMPTY) return true;
      const {liberties} = this.chain(q);
      if (stone === this.toPlay ? liberties > 1 : liberties === 1) return true;
    }
    return false;
  }

  play(point) {
    this.state = null;
    if (point < 0) {
      this.passes += 1;
      this.ko = -1;
    } else {
      const {board, table, toPlay: me} = this;
      board[point] = me;
      let captured = [];
      for (const q of table[point]) {
        if (board[q] !== -me) continue;
        const {stones, liberties} = this.chain(q);
        if (liberties === 0) {
          for (const s of stones) board[s] = EMPTY;
          captured = captured.concat(stones);
        }
      }
      const own = this.chain(point);
      this.ko = captured.length === 1 && own.stones.length === 1 && own.liberties === 1
          ? captured[0] : -1;
      this.passes = 0;
    }
    this.toPlay = -this.toPlay;
  }

  /** A uniformly random sensible move (no own eye filled): points tried in a random order
   * until one is legal; -1, a pass, where none is. */
  randomSensibleMove(random) {
    const points = [];
    this.board.forEach((stone, point) => {
      if (stone === EMPTY && !isOwnEye(this.size, this.board, this.toPlay, point)) points.push(point);
    });
    for (let left = points.length; left > 0; left--) {
      const pick = Math.floor(random() * left);
      const point = points[pick];
      points[pick] = points[left - 1];
      if (this.legal(point)) return point;
    }
    return -1;
  }
}

/** The share of `playouts` random games from `state` (uniformly random sensible moves, a pass
 * where there is none; the simple ko rule after the first move) that the player to move wins
 * by Tromp-Taylor; `random` gives numbers in [0, 1). */
export function playoutWins(state, playouts = PLAYOUTS, random = Math.random) {
  const me = state.toPlay;
  const limit = 2 * state.size * state.size;
  let won = 0;
  for (let i = 0; i < playouts; i++) {
    const board = new PlayoutBoard(state);
    if (!isOver(state)) {
      for (let move = 0; move < limit && board.passes < 2; move++) {
        board.play(board.randomSensibleMove(random));
      }
    }
    const owner = ownership({size: state.size, board: board.board});
    if (me * (owner.reduce((sum, v) => sum + v, 0) - state.komi) > 0) won += 1;
  }
  return won / playouts;
}

/** Whether the engine resigns after the search: its win rate below RESIGN_THRESHOLD, after half
 * the points' moves, and the playouts agree that it is behind. A promise: the playouts run a few
 * at a time, leaving the page free between them (64 take about half a second on 19x19). */
export async function resigns(state, found, random = Math.random) {
  const scale = found.valueScale ?? 1;
  const winRate = Math.min(1, Math.max(0, (found.value / (scale || 1) + 1) / 2));
  if (state.moveCount < Math.floor(state.board.length / 2)
      || (scale > 0 && !(winRate < RESIGN_THRESHOLD))) {
    return false;
  }
  const chunk = 8;
  let won = 0;
  for (let done = 0; done < PLAYOUTS; done += chunk) {
    won += playoutWins(state, chunk, random) * chunk;
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  return won / PLAYOUTS < (scale > 0 ? RESIGN_PLAYOUT_WINS : RESIGN_THRESHOLD);
}

/** Whether the engine passes without searching: the opponent passed and the count favours it. */
export function passesAtOnce(state, opponentPassed) {
  return opponentPassed && state.toPlay * score(state) > 0;
}
