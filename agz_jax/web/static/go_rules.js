// The rules of Go in plain JavaScript, the same as agz_jax/go/rules.py, so that a page can play
// without a server. An ES module with no dependencies (browsers, Node).
//
// Points are numbered as in GoConfig: point = row * size + col, row 0 at the top; the action
// size * size is a pass. Black (+1) moves first. A stone captures every opponent chain it leaves
// without a liberty; a play that leaves its own chain without a liberty (and captures nothing)
// is suicide, illegal. Positional superko: a play may not bring back any earlier whole-board
// position of the game (captures done; whoever is to move); a pass is always legal until the
// end. Two passes in a row, or max_moves moves (passes included), end the game. The score is
// Tromp-Taylor area, black area - white area - komi: a point counts for a colour when it holds
// its stone, or is empty and reaches (through empty points) stones of that colour only.
//
// A state is a frozen object: {size, komi, maxMoves, board: [P] (+1 black, -1 white, 0 empty),
// key (the board as a string), toPlay: +1 or -1, moveCount, passes, over, seen, seenCount,
// previous: the boards before the last moves, most recent first (at most HISTORY - 1, for the
// network's planes, as GoState.previous_boards)}.
// `seen` maps the key of every board of a line of play to its order of appearance; a state
// knows the first `seenCount` of them. It is shared copy-on-write: play appends to it when no
// other line has, and copies the state's own part otherwise, so no state ever sees a change.
// Functions never change their input in a way any state can observe.

// Boards a state keeps, its own included (GoConfig.history): AlphaGo Zero's 17 planes read 8.
export const HISTORY = 8;
export const BLACK = 1;
export const WHITE = -1;
export const EMPTY = 0;

// GTP column letters: A..T without I (agz_jax/go/coords.py).
const COLUMNS = "ABCDEFGHJKLMNOPQRST";

/** The pass action of a size x size board. */
export function passAction(size) {
  return size * size;
}

/** The GTP vertex of an action ('D4', 'pass'); GTP rows count from the bottom. */
export function actionToGtp(size, action) {
  if (action === size * size) return "pass";
  return `${COLUMNS[action % size]}${size - Math.floor(action / size)}`;
}

function boardKey(board) {
  let key = "";
  for (const v of board) key += v === BLACK ? "x" : v === WHITE ? "o" : ".";
  return key;
}

const NEIGHBOURS = new Map();

/** [P] arrays of the points next to each point of a size x size board (cached). */
function neighbourTable(size) {
  if (!NEIGHBOURS.has(size)) {
    const table = [];
    for (let point = 0; point < size * size; point++) {
      const r = Math.floor(point / size);
      const c = point % size;
      const out = [];
      if (r > 0) out.push(point - size);
      if (r < size - 1) out.push(point + size);
      if (c > 0) out.push(point - 1);
      if (c < size - 1) out.push(point + 1);
      table.push(out);
    }
    NEIGHBOURS.set(size, table);
  }
  return NEIGHBOURS.get(size);
}

const ANALYSES = new WeakMap();

/** The chains of a state's board, computed once per state: {chainOf: [P] chain number or -1 on
 * empty points (chains numbered in the order of their smallest point), stones: [chain] its
 * points, liberties: [chain] its number of liberties, libertySets: [chain] a Set of them}. */
function analyse(state) {
  let analysis = ANALYSES.get(state);
  if (analysis) return analysis;
  const {board} = state;
  const table = neighbourTable(state.size);
  const chainOf = new Array(board.length).fill(-1);
  const stones = [];
  const liberties = [];
  const libertySets = [];
  for (let start = 0; start < board.length; start++) {
    if (board[start] === EMPTY || chainOf[start] >= 0) continue;
    const id = stones.length;
    const chain = [start];
    const libs = new Set();
    chainOf[start] = id;
    for (let i = 0; i < chain.length; i++) {
      for (const q of table[chain[i]]) {
        if (board[q] === EMPTY) libs.add(q);
        else if (board[q] === board[start] && chainOf[q] < 0) {
          chainOf[q] = id;
          chain.push(q);
        }
      }
    }
    stones.push(chain);
    liberties.push(libs.size);
    libertySets.push(libs);
  }
  analysis = {chainOf, stones, liberties, libertySets};
  ANALYSES.set(state, analysis);
  return analysis;
}

/** The chains of a state's board (shared, not to be changed): {chainOf: [P] chain number, -1 on
 * empty points, in the order of the chains' smallest points; stones: [chain] its points;
 * liberties: [chain] a Set of its liberties}. */
export function chains(state) {
  const {chainOf, stones, libertySets} = analyse(state);
  return {chainOf, stones, liberties: libertySets};
}

/** [P] arrays of the points next to each point of a size x size board (shared, cached). */
export function neighbourPoints(size) {
  return neighbourTable(size);
}

function wasSeen(state, key) {
  const order = state.seen.get(key);
  return order !== undefined && order < state.seenCount;
}

const STONE_CHARS = {[BLACK]: "x", [WHITE]: "o"};

/** {board, key} after the player to move plays `point` ({} unless `build`), or {reason}
 * ("occupied", "suicide", "superko") when that is illegal. Checks in rules.py's order. */
function tryPlay(state, point, build = true) {
  const {board} = state;
  if (board[point] !== EMPTY) return {reason: "occupied"};
  const me = state.toPlay;
  const {chainOf, stones, liberties} = analyse(state);
  // The stone breathes through an empty neighbour, an own chain with another liberty, or a
  // capture; opponent chains whose last liberty is `point` are captured.
  let breathes = false;
  const captured = [];
  for (const q of neighbourTable(state.size)[point]) {
    if (board[q] === EMPTY) {
      breathes = true;
    } else if (board[q] === me) {
      if (liberties[chainOf[q]] > 1) breathes = true;
    } else if (liberties[chainOf[q]] === 1 && !captured.includes(chainOf[q])) {
      captured.push(chainOf[q]);
      breathes = true;
    }
  }
  if (!breathes) return {reason: "suicide"};
  let key;
  let after;
  if (captured.length === 0) {
    key = state.key.slice(0, point) + STONE_CHARS[me] + state.key.slice(point + 1);
  } else {
    after = board.slice();
    after[point] = me;
    for (const id of captured) for (const s of stones[id]) after[s] = EMPTY;
    key = boardKey(after);
  }
  if (wasSeen(state, key)) return {reason: "superko"};
  if (!build) return {};
  if (!after) {
    after = board.slice();
    after[point] = me;
  }
  return {board: after, key};
}

function freeze(state) {
  Object.freeze(state.board);
  return Object.freeze(state);
}

/** An empty size x size board (2 to 19, as GoConfig), black to move. maxMoves defaults to
 * 2 * size * size (GoConfig's None). */
export function newGame(size, komi = 7.5, maxMoves = 2 * size * size) {
  if (!Number.isInteger(size) || size < 2 || size > 19) {
    throw new Error(`newGame: size must be an integer from 2 to 19, got ${size}`);
  }
  if (typeof komi !== "number" || !Number.isFinite(komi)) {
    throw new Error(`newGame: komi must be a finite number, got ${komi}`);
  }
  if (!Number.isInteger(maxMoves) || maxMoves < 1) {
    throw new Error(`newGame: maxMoves must be a positive integer, got ${maxMoves}`);
  }
  const board = new Array(size * size).fill(EMPTY);
  const key = boardKey(board);
  return freeze({size, komi, maxMoves, board, key, toPlay: BLACK, moveCount: 0, passes: 0,
                 over: false, seen: new Map([[key, 0]]), seenCount: 1, previous: []});
}

/** Whether the game has ended (two passes in a row, or maxMoves moves). */
export function isOver(state) {
  return state.over;
}

/** The player to move: BLACK (+1) or WHITE (-1). */
export function toPlay(state) {
  return state.toPlay;
}

/** The legal actions in increasing order, pass (size * size) last, as go.legal_actions; none
 * once the game is over (go.legal_actions still allows a pass there, which changes nothing). */
export function legalMoves(state) {
  if (state.over) return [];
  const moves = [];
  for (let point = 0; point < state.board.length; point++) {
    if (state.board[point] !== EMPTY) continue;
    if (!("reason" in tryPlay(state, point, false))) moves.push(point);
  }
  moves.push(passAction(state.size));
  return moves;
}

/** Why the player to move may not take `action` ("occupied", "suicide", "superko", "the game
 * is over", "off the board"), or null when it is legal. */
export function illegalReason(state, action) {
  const pass = passAction(state.size);
  if (!Number.isInteger(action) || action < 0 || action > pass) return "off the board";
  if (state.over) return "the game is over";
  if (action === pass) return null;
  return tryPlay(state, action, false).reason ?? null;
}

const EXPLAINED = {
  "occupied": "the point is occupied",
  "suicide": "suicide, the stone would have no liberty",
  "superko": "superko, the board would repeat an earlier position",
};

/** The game after the player to move takes `action` (a point, or size * size to pass); throws
 * an Error naming why on an illegal one: off the board, the game is over, occupied, suicide,
 * superko. */
export function play(state, action) {
  const {size} = state;
  const pass = passAction(size);
  if (!Number.isInteger(action) || action < 0 || action > pass) {
    throw new Error(`illegal move ${action}: a ${size}x${size} board has actions 0..${pass} ` +
                    `(${pass} passes)`);
  }
  const colour = state.toPlay === BLACK ? "B" : "W";
  const name = `illegal move ${action} (${colour} ${actionToGtp(size, action)})`;
  if (state.over) throw new Error(`${name}: the game is over`);
  const moveCount = state.moveCount + 1;
  const common = {size, komi: state.komi, maxMoves: state.maxMoves, toPlay: -state.toPlay,
                  moveCount, previous: [state.board, ...state.previous].slice(0, HISTORY - 1)};
  if (action === pass) {
    const passes = state.passes + 1;
    return freeze({...common, board: state.board, key: state.key, passes,
                   over: passes >= 2 || moveCount >= state.maxMoves,
                   seen: state.seen, seenCount: state.seenCount});
  }
  const tried = tryPlay(state, action);
  if ("reason" in tried) throw new Error(`${name}: ${EXPLAINED[tried.reason]}`);
  // Copy-on-write: append to the shared map only if no other line of play has.
  let seen = state.seen;
  if (seen.size !== state.seenCount) {
    seen = new Map([...seen].filter(([, order]) => order < state.seenCount));
  }
  seen.set(tried.key, state.seenCount);
  return freeze({...common, board: tried.board, key: tried.key, passes: 0,
                 over: moveCount >= state.maxMoves,
                 seen, seenCount: state.seenCount + 1});
}

/** [P] owner of every point under Tromp-Taylor (go.ownership): +1 black, -1 white, 0 neither. */
export function ownership(state) {
  const {size, board} = state;
  const table = neighbourTable(size);
  const owner = board.slice();
  const done = new Array(board.length).fill(false);
  for (let start = 0; start < board.length; start++) {
    if (board[start] !== EMPTY || done[start]) continue;
    const region = [start];
    done[start] = true;
    let black = false;
    let white = false;
    for (let i = 0; i < region.length; i++) {
      for (const q of table[region[i]]) {
        if (board[q] === BLACK) black = true;
        else if (board[q] === WHITE) white = true;
        else if (!done[q]) {
          done[q] = true;
          region.push(q);
        }
      }
    }
    const colour = black && !white ? BLACK : white && !black ? WHITE : EMPTY;
    for (const p of region) owner[p] = colour;
  }
  return owner;
}

/** The Tromp-Taylor score, as go.score: black area - white area - komi. */
export function score(state) {
  return ownership(state).reduce((sum, v) => sum + v, 0) - state.komi;
}

/** +1 if black wins, -1 if white does, 0 on a draw (go.result without forfeits). */
export function result(state) {
  return Math.sign(score(state));
}

/** AlphaGo Zero's 17 input planes of `state` ("agz17", agz_jax/go/features.py): a Float32Array
 * of size x size x 17, channels last: the mover's stones on the current board and the 7
 * before it, the opponent's on the same boards (empty before the game's start), and ones
 * when black is to move. */
export function agzPlanes(state) {
  const {size, board, previous, toPlay: me} = state;
  const points = size * size;
  const planes = 2 * HISTORY + 1;
  const out = new Float32Array(points * planes);
  const boards = [board, ...previous];
  boards.forEach((b, t) => {
    for (let p = 0; p < points; p++) {
      if (b[p] === me) out[p * planes + t] = 1;
      else if (b[p] === -me) out[p * planes + HISTORY + t] = 1;
    }
  });
  if (me === BLACK) for (let p = 0; p < points; p++) out[p * planes + 2 * HISTORY] = 1;
  return out;
}

/** The game as puct.js searches it: the points and a pass. */
export function searchGame(size) {
  return {
    numActions: size * size + 1,
    legal: (state) => {
      const legal = new Array(size * size + 1).fill(false);
      for (const action of legalMoves(state)) legal[action] = true;
      return legal;
    },
    play,
    isOver,
    result,
    toPlay,
  };
}
