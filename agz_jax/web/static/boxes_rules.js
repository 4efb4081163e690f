// The rules of Dots and Boxes in plain JavaScript, the same as agz_jax/dots_and_boxes/rules.py,
// so that a page can play without a server. An ES module with no dependencies (browsers, Node).
//
// Lines are numbered as in OpenSpiel's dots_and_boxes (DotsConfig): the horizontal lines first,
// row by row, h(r, c) = r * cols + c (r in 0..rows, c in 0..cols-1), then the vertical ones,
// v(r, c) = (rows + 1) * cols + r * (cols + 1) + c (r in 0..rows-1, c in 0..cols). Box (r, c),
// numbered r * cols + c, has the sides h(r, c), h(r+1, c), v(r, c) and v(r, c+1).
//
// A player who completes a box (or two at once) owns it and draws again; otherwise the turn
// passes. The game ends when every line is drawn; more boxes wins, equal counts draw.
//
// A state is a frozen object: {rows, cols, lines: [L] bool, boxes: [N] (+1 the first player's,
// -1 the second's, 0 none), toPlay: +1 or -1, moveCount}. Functions never change their input.

export const FIRST = 1;
export const SECOND = -1;

/** The number of lines of a rows x cols board of boxes. */
export function numLines(rows, cols) {
  return (rows + 1) * cols + rows * (cols + 1);
}

/** The index of line h(r, c) or v(r, c) (kind "h" or "v"); throws when there is no such line. */
export function lineIndex(rows, cols, kind, r, c) {
  if (kind === "h" && r >= 0 && r <= rows && c >= 0 && c < cols) return r * cols + c;
  if (kind === "v" && r >= 0 && r < rows && c >= 0 && c <= cols) {
    return (rows + 1) * cols + r * (cols + 1) + c;
  }
  throw new Error(`no line ${kind}(${r},${c}) on a ${rows}x${cols} board`);
}

/** [kind, r, c] of a line index (the inverse of lineIndex). */
export function lineName(rows, cols, line) {
  const horizontal = (rows + 1) * cols;
  if (line < horizontal) return ["h", Math.floor(line / cols), line % cols];
  const rest = line - horizontal;
  return ["v", Math.floor(rest / (cols + 1)), rest % (cols + 1)];
}

/** The four sides of box (r, c): top, bottom, left, right. */
function boxSides(rows, cols, r, c) {
  return [lineIndex(rows, cols, "h", r, c), lineIndex(rows, cols, "h", r + 1, c),
          lineIndex(rows, cols, "v", r, c), lineIndex(rows, cols, "v", r, c + 1)];
}

function freeze(state) {
  Object.freeze(state.lines);
  Object.freeze(state.boxes);
  return Object.freeze(state);
}

/** An empty board of rows x cols boxes (1 to 10 each, as DotsConfig), the first player to move. */
export function newGame(rows, cols) {
  for (const [name, value] of [["rows", rows], ["cols", cols]]) {
    if (!Number.isInteger(value) || value < 1 || value > 10) {
      throw new Error(`newGame: ${name} (boxes) must be an integer from 1 to 10, got ${value}`);
    }
  }
  return freeze({rows, cols, lines: new Array(numLines(rows, cols)).fill(false),
                 boxes: new Array(rows * cols).fill(0), toPlay: FIRST, moveCount: 0});
}

/** Whether every line is drawn. */
export function isOver(state) {
  return state.lines.every(Boolean);
}

/** The lines not drawn yet, in increasing order (none once the game is over). */
export function legalMoves(state) {
  return state.lines.flatMap((drawn, line) => (drawn ? [] : [line]));
}

/** The player to move: FIRST (+1) or SECOND (-1). */
export function toPlay(state) {
  return state.toPlay;
}

/** {first, second}: the boxes each player owns. */
export function score(state) {
  return {first: state.boxes.filter((owner) => owner === FIRST).length,
          second: state.boxes.filter((owner) => owner === SECOND).length};
}

/** +1 if the first player has more boxes, -1 if the second has, 0 if equal (rules.py's result
 * of a finished game). */
export function result(state) {
  const {first, second} = score(state);
  return Math.sign(first - second);
}

/** The game after the player to move draws `line`; throws an Error on an illegal line (not an
 * integer, off the board, already drawn, or the game is over). */
export function play(state, line) {
  const total = state.lines.length;
  if (!Number.isInteger(line) || line < 0 || line >= total) {
    throw new Error(`illegal line ${line}: a ${state.rows}x${state.cols} board has lines ` +
                    `0..${total - 1}`);
  }
  if (isOver(state)) throw new Error(`illegal line ${line}: the game is over`);
  if (state.lines[line]) {
    const [kind, r, c] = lineName(state.rows, state.cols, line);
    throw new Error(`illegal line ${line} (${kind}(${r},${c})): it is already drawn`);
  }
  const lines = state.lines.map((drawn, i) => drawn || i === line);
  // Every complete box has an owner, so an unowned box with four sides is one this line completed.
  const boxes = state.boxes.map((owner, box) => {
    if (owner !== 0) return owner;
    const sides = boxSides(state.rows, state.cols, Math.floor(box / state.cols), box % state.cols);
    return sides.every((side) => lines[side]) ? state.toPlay : 0;
  });
  const scored = boxes.some((owner, box) => owner !== state.boxes[box]);
  return freeze({rows: state.rows, cols: state.cols, lines, boxes,
                 toPlay: scored ? state.toPlay : -state.toPlay, moveCount: state.moveCount + 1});
}

/** The network's input planes of `state` ("boxes", agz_jax/dots_and_boxes/features.py): a
 * Float32Array of H x W x 6 values, H = 2 rows + 1, W = 2 cols + 1 (dots, lines and boxes on
 * one grid), channels last, from the view of the player to move: the lines drawn, the boxes
 * the mover owns, the boxes the opponent owns, where a line can be, where a box is, and the
 * mover's lead in boxes over the number of boxes on every cell. */
export function planes(state) {
  const {rows, cols} = state;
  const h = 2 * rows + 1;
  const w = 2 * cols + 1;
  const out = new Float32Array(h * w * 6);
  const set = (y, x, channel, value) => { out[(y * w + x) * 6 + channel] = value; };
  state.lines.forEach((drawn, line) => {
    const [kind, r, c] = lineName(rows, cols, line);
    const [y, x] = kind === "h" ? [2 * r, 2 * c + 1] : [2 * r + 1, 2 * c];
    set(y, x, 0, drawn ? 1 : 0);
    set(y, x, 3, 1);
  });
  let lead = 0;
  state.boxes.forEach((owner, box) => {
    const y = 2 * Math.floor(box / cols) + 1;
    const x = 2 * (box % cols) + 1;
    set(y, x, 1, owner === state.toPlay ? 1 : 0);
    set(y, x, 2, owner === -state.toPlay ? 1 : 0);
    set(y, x, 4, 1);
    lead += owner === state.toPlay ? 1 : owner === -state.toPlay ? -1 : 0;
  });
  for (let cell = 0; cell < h * w; cell++) out[cell * 6 + 5] = lead / (rows * cols);
  return out;
}

/** The game as puct.js searches it, for a rows x cols board. */
export function searchGame(rows, cols) {
  return {
    numActions: numLines(rows, cols),
    legal: (state) => state.lines.map((drawn) => !drawn),
    play,
    isOver,
    result,
    toPlay,
  };
}
