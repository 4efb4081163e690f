// The page of `python -m agz_jax.web.standalone`: Dots and Boxes or Go against an AlphaZero
// network that runs in the browser (ONNX Runtime Web, the network as network.onnx), searched
// by the players' PUCT search in JavaScript (puct.js) on the rules in JavaScript
// (boxes_rules.js, go_rules.js; KataGo's planes in go_katago.js); in Go the engine settles the game as the GTP engine does
// (go_endgame.js: no own eye filled, no pass that hands over points, resignation where a
// count agrees). settings.json (written by the export) holds the game and its
// board, the simulations per move and the search settings of the network's training run.
//
// For tests and curious readers the game is window.agzGame: {moves, state, status, resigned},
// status one of "loading", "your-move", "thinking", "over", "error" (also the #status element's
// data-status), resigned true once the engine has resigned.

import * as ort from "./ort/ort.wasm.min.mjs";
import * as boxes from "./boxes_rules.js";
import * as go from "./go_rules.js";
import * as endgame from "./go_endgame.js";
import * as katago from "./go_katago.js";
import {search} from "./puct.js";

const SVG = "http://www.w3.org/2000/svg";
const CELL = 60;    // Dots and Boxes: pixels between two dots
const POINT = 40;   // Go: pixels between two lines
const MARGIN = 24;
const THICK = 10;

function svg(tag, attributes) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) el.setAttribute(key, value);
  return el;
}

// What differs between the games: rules, planes, drawing, score.
const VIEWS = {
  dots_and_boxes: (s) => ({
    title: "Dots and Boxes",
    help: "Draw a line by clicking it; complete a box to own it and draw again.",
    rules: boxes,
    newGame: () => boxes.newGame(s.rows, s.cols),
    planes: boxes.planes,
    shape: [1, 2 * s.rows + 1, 2 * s.cols + 1, 6],
    searchGame: boxes.searchGame(s.rows, s.cols),
    canPass: false,
    endgame: null,
    firstPlayer: boxes.FIRST,
    draw(board, game, onMove) {
      const state = game.state;
      board.setAttribute("width", 2 * MARGIN + s.cols * CELL);
      board.setAttribute("height", 2 * MARGIN + s.rows * CELL);
      state.boxes.forEach((owner, box) => {
        const who = owner === 0 ? "none" : owner === game.engine ? "engine" : "you";
        board.append(svg("rect", {class: `box ${who}`, x: MARGIN + (box % s.cols) * CELL,
                                  y: MARGIN + Math.floor(box / s.cols) * CELL,
                                  width: CELL, height: CELL}));
      });
      state.lines.forEach((drawn, line) => {
        const [kind, r, c] = boxes.lineName(s.rows, s.cols, line);
        const x = MARGIN + c * CELL;
        const y = MARGIN + r * CELL;
        const rect = kind === "h" ? {x, y: y - THICK / 2, width: CELL, height: THICK}
                                  : {x: x - THICK / 2, y, width: THICK, height: CELL};
        const cls = drawn ? (line === game.last ? "line drawn last" : "line drawn") : "line free";
        const el = svg("rect", {class: cls, "data-action": line, ...rect});
        if (!drawn) el.addEventListener("click", () => onMove(line));
        board.append(el);
      });
      for (let r = 0; r <= s.rows; r++) {
        for (let c = 0; c <= s.cols; c++) {
          board.append(svg("circle", {class: "dot", cx: MARGIN + c * CELL,
                                      cy: MARGIN + r * CELL, r: 5}));
        }
      }
    },
    // (the human's points, the engine's): boxes
    points(state, engine) {
      const {first, second} = boxes.score(state);
      return engine === boxes.SECOND ? [first, second] : [second, first];
    },
  }),
  go: (s) => ({
    title: `Go ${s.size}x${s.size}`,
    help: `Click a point to play, or pass; two passes end the game, scored by area ` +
          `(Tromp-Taylor, komi ${s.komi}).`,
    rules: go,
    newGame: () => go.newGame(s.size, s.komi, s.maxMoves),
    planes: s.encoding === "katago_noladders" ? katago.katagoPlanes : go.agzPlanes,
    shape: [1, s.size, s.size,
            s.encoding === "katago_noladders" ? katago.NUM_PLANES : 2 * go.HISTORY + 1],
    searchGame: go.searchGame(s.size),
    canPass: true,
    endgame,
    firstPlayer: go.BLACK,
    draw(board, game, onMove) {
      const state = game.state;
      const side = 2 * MARGIN + (s.size - 1) * POINT;
      board.setAttribute("width", side);
      board.setAttribute("height", side);
      board.append(svg("rect", {class: "wood", x: 0, y: 0, width: side, height: side}));
      const end = MARGIN + (s.size - 1) * POINT;
      for (let i = 0; i < s.size; i++) {
        const at = MARGIN + i * POINT;
        board.append(svg("line", {class: "grid", x1: MARGIN, y1: at, x2: end, y2: at}));
        board.append(svg("line", {class: "grid", x1: at, y1: MARGIN, x2: at, y2: end}));
      }
      const legal = new Set(game.status === "your-move" ? go.legalMoves(state) : []);
      state.board.forEach((stone, point) => {
        const cx = MARGIN + (point % s.size) * POINT;
        const cy = MARGIN + Math.floor(point / s.size) * POINT;
        if (stone !== go.EMPTY) {
          const colour = stone === go.BLACK ? "black" : "white";
          board.append(svg("circle", {class: `stone ${colour}${point === game.last ? " last" : ""}`,
                                      cx, cy, r: POINT * 0.45}));
          return;
        }
        const el = svg("circle", {class: legal.has(point) ? "point free" : "point",
                                  "data-action": point, cx, cy, r: POINT * 0.45});
        if (legal.has(point)) el.addEventListener("click", () => onMove(point));
        board.append(el);
      });
    },
    // (the human's points, the engine's): each side's Tromp-Taylor area, komi to white
    points(state, engine) {
      const owner = go.ownership(state);
      const black = owner.filter((v) => v === go.BLACK).length;
      const white = owner.filter((v) => v === go.WHITE).length + state.komi;
      return engine === go.WHITE ? [black, white] : [white, black];
    },
  }),
};

const game = {moves: [], state: null, status: "loading", engine: 0, last: -1, resigned: false};
window.agzGame = game;
const statusEl = document.getElementById("status");
const scoreEl = document.getElementById("score");
const board = document.getElementById("board");

function setStatus(status, text) {
  game.status = status;
  statusEl.dataset.status = status;
  statusEl.textContent = text;
}

const settings = await (await fetch("settings.json")).json();
const view = VIEWS[settings.game](settings);
document.getElementById("title").textContent = view.title;
document.title = `agz_jax: ${view.title}`;
document.getElementById("help").textContent = view.help;
document.getElementById("pass").hidden = !view.canPass;

ort.env.wasm.numThreads = 1;  // no cross-origin isolation needed: any static server serves it
ort.env.wasm.wasmPaths = new URL("./ort/", import.meta.url).href;
let session;
try {
  session = await ort.InferenceSession.create("network.onnx", {executionProviders: ["wasm"]});
} catch (error) {
  setStatus("error", `The network did not load: ${error.message}`);
  throw error;
}
let evaluations = 0;
window.agzEvaluations = () => evaluations;

async function evaluate(state) {
  const input = new ort.Tensor("float32", view.planes(state), view.shape);
  const out = await session.run({planes: input});
  evaluations += 1;
  return {logits: Array.from(out.logits.data), value: out.value.data[0]};
}

function draw() {
  board.replaceChildren();
  view.draw(board, game, humanMove);
  const [you, engine] = view.points(game.state, game.engine);
  scoreEl.textContent = `you ${you} - ${engine} engine`;
  scoreEl.dataset.you = you;
  scoreEl.dataset.engine = engine;
}

function play(action) {
  game.state = view.rules.play(game.state, action);
  game.moves.push(action);
  game.last = action;
}

function finish() {
  const [you, engine] = view.points(game.state, game.engine);
  setStatus("over", game.resigned ? "Game over: the engine resigned, you won."
    : you > engine ? "Game over: you won." : you < engine
    ? "Game over: the engine won." : "Game over: a draw.");
  draw();
}

/** The engine's move in the current position, or null where it resigns. */
async function engineMove() {
  const state = game.state;
  const rules = view.endgame;
  const opponentPassed = game.moves.length > 0 && game.last === settings.size ** 2;
  if (rules?.passesAtOnce(state, opponentPassed)) return settings.size ** 2;
  const found = await search(view.searchGame, state, evaluate, settings.simulations,
                             settings.search);
  if (!rules) return found.action;
  if (await rules.resigns(state, found)) return null;
  return rules.settle(state, found, opponentPassed);
}

async function engineMoves() {
  const rules = view.rules;
  while (!rules.isOver(game.state) && rules.toPlay(game.state) === game.engine) {
    setStatus("thinking", "The engine is thinking…");
    draw();
    const action = await engineMove();
    if (action === null) {
      game.resigned = true;
      break;
    }
    play(action);
  }
  if (game.resigned || rules.isOver(game.state)) finish();
  else {
    const passed = view.canPass && game.last === settings.size ** 2;
    setStatus("your-move", passed ? "The engine passed. Your move." : "Your move.");
    draw();
  }
}

async function humanMove(action) {
  if (game.status !== "your-move" || view.rules.illegalReason?.(game.state, action)) return;
  play(action);
  if (view.rules.isOver(game.state)) finish();
  else if (view.rules.toPlay(game.state) === game.engine) await engineMoves();
  else draw();
}

async function newGame() {
  if (game.status === "thinking") return;
  const engineFirst = document.getElementById("engine-first").checked;
  game.engine = engineFirst ? view.firstPlayer : -view.firstPlayer;
  game.state = view.newGame();
  game.moves = [];
  game.last = -1;
  game.resigned = false;
  await engineMoves();
}

document.getElementById("new-game").addEventListener("click", newGame);
document.getElementById("pass").addEventListener("click", () => humanMove(settings.size ** 2));
await newGame();
