// The page of `python -m agz_jax.web.standalone`: Dots and Boxes against an AlphaZero network
// that runs in the browser (ONNX Runtime Web, the network as network.onnx), searched by the
// players' PUCT search in JavaScript (puct.js) on the rules in JavaScript (boxes_rules.js).
// settings.json (written by the export) holds the board, the simulations and the search's
// settings of the network's training run.
//
// For tests and curious readers the game is window.agzGame: {moves, state, status}, status
// one of "loading", "your-move", "thinking", "over", "error" (also the #status element's
// data-status).

import * as ort from "./ort/ort.wasm.min.mjs";
import * as rules from "./boxes_rules.js";
import {search} from "./puct.js";

const CELL = 60;  // pixels between two dots
const MARGIN = 20;
const THICK = 10;

const game = {moves: [], state: null, status: "loading", engine: rules.SECOND, last: -1};
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
const {rows, cols} = settings;
ort.env.wasm.numThreads = 1;  // no cross-origin isolation needed: any static server serves it
ort.env.wasm.wasmPaths = new URL("./ort/", import.meta.url).href;
let session;
try {
  session = await ort.InferenceSession.create("network.onnx", {executionProviders: ["wasm"]});
} catch (error) {
  setStatus("error", `The network did not load: ${error.message}`);
  throw error;
}

const shape = [1, 2 * rows + 1, 2 * cols + 1, 6];
let evaluations = 0;

async function evaluate(state) {
  const out = await session.run({planes: new ort.Tensor("float32", rules.planes(state), shape)});
  evaluations += 1;
  return {logits: Array.from(out.logits.data), value: out.value.data[0]};
}

const searchGame = rules.searchGame(rows, cols);

function svg(tag, attributes) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attributes)) el.setAttribute(key, value);
  return el;
}

function draw() {
  const state = game.state;
  board.setAttribute("width", 2 * MARGIN + cols * CELL);
  board.setAttribute("height", 2 * MARGIN + rows * CELL);
  board.replaceChildren();
  state.boxes.forEach((owner, box) => {
    const r = Math.floor(box / cols);
    const c = box % cols;
    const who = owner === 0 ? "none" : owner === game.engine ? "engine" : "you";
    board.append(svg("rect", {class: `box ${who}`, x: MARGIN + c * CELL, y: MARGIN + r * CELL,
                              width: CELL, height: CELL}));
  });
  state.lines.forEach((drawn, line) => {
    const [kind, r, c] = rules.lineName(rows, cols, line);
    const x = MARGIN + c * CELL;
    const y = MARGIN + r * CELL;
    const rect = kind === "h"
      ? {x, y: y - THICK / 2, width: CELL, height: THICK}
      : {x: x - THICK / 2, y, width: THICK, height: CELL};
    const cls = drawn ? (line === game.last ? "line drawn last" : "line drawn") : "line free";
    const el = svg("rect", {class: cls, "data-line": line, ...rect});
    if (!drawn) el.addEventListener("click", () => humanMove(line));
    board.append(el);
  });
  for (let r = 0; r <= rows; r++) {
    for (let c = 0; c <= cols; c++) {
      board.append(svg("circle", {class: "dot", cx: MARGIN + c * CELL, cy: MARGIN + r * CELL,
                                  r: 5}));
    }
  }
  const {first, second} = rules.score(state);
  const [you, engine] = game.engine === rules.SECOND ? [first, second] : [second, first];
  scoreEl.textContent = `you ${you} - ${engine} engine`;
  scoreEl.dataset.you = you;
  scoreEl.dataset.engine = engine;
}

function play(line) {
  game.state = rules.play(game.state, line);
  game.moves.push(line);
  game.last = line;
}

function finish() {
  const {first, second} = rules.score(game.state);
  const mine = game.engine === rules.SECOND ? first - second : second - first;
  setStatus("over", mine > 0 ? "Game over: you won." : mine < 0 ? "Game over: the engine won."
                                                                 : "Game over: a draw.");
  draw();
}

async function engineMoves() {
  while (!rules.isOver(game.state) && rules.toPlay(game.state) === game.engine) {
    setStatus("thinking", "The engine is thinking…");
    draw();
    const found = await search(searchGame, game.state, evaluate, settings.simulations,
                               settings.search);
    play(found.action);
  }
  if (rules.isOver(game.state)) finish();
  else {
    setStatus("your-move", "Your move.");
    draw();
  }
}

async function humanMove(line) {
  if (game.status !== "your-move" || game.state.lines[line]) return;
  play(line);
  if (rules.isOver(game.state)) finish();
  else if (rules.toPlay(game.state) === game.engine) await engineMoves();
  else draw();
}

async function newGame() {
  if (game.status === "thinking") return;
  game.engine = document.getElementById("engine-first").checked ? rules.FIRST : rules.SECOND;
  game.state = rules.newGame(rows, cols);
  game.moves = [];
  game.last = -1;
  await engineMoves();
}

document.getElementById("new-game").addEventListener("click", newGame);
window.agzEvaluations = () => evaluations;
await newGame();
