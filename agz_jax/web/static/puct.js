// AlphaGo Zero's PUCT search in plain JavaScript, the same search as the Python players'
// (agz_jax.search: mctx's search loop and muzero_action_selection with the Q transforms of
// agz_jax/search/action_selection.py), so that a page can search without a server. An ES
// module with no dependencies (browsers, Node).
//
// A game is an object of functions over immutable states:
//   {numActions, legal(state) -> [A] bool, play(state, action) -> state,
//    isOver(state) -> bool, result(state) -> +1 / -1 / 0 for the first player, toPlay(state)}
// An evaluator is evaluate(state) -> {logits: [A] numbers, value: number for the player to
// move, in [-1, 1]}, or a promise of it (a network in ONNX Runtime Web, or any function).
//
// The tree follows mctx's: node 0 is the root, evaluated before the first simulation (one
// visit, its value); a simulation walks down by PUCT to a child not yet in the tree, plays
// it, evaluates the new position and backs its value up, each edge with its reward (the
// game's result for the mover, where the move ends the game) and its discount (-1 where the
// turn passes, +1 where the same player moves again, 0 below the end). Only the root's
// illegal moves are masked; inside the tree an illegal child has a zero prior and counts as
// the lowest value. mctx breaks exact ties between children with a 1e-7 random term; here
// the first child wins a tie.

/** The search settings of a Python player (search.SearchConfig's PUCT fields). */
export const DEFAULT_SETTINGS = Object.freeze({
  pbCInit: 1.25,
  pbCBase: 19652.0,
  qTransform: "siblings",  // or "bounded"
  firstPlay: "loss",       // or "parent", "reduction"
  fpuReduction: 0.2,
  priorTemperature: 1,     // the prior is softmax(logits / priorTemperature)
  valueScale: [],          // the value at move m times valueScale[floor(m / valueScaleMoves)]
  valueScaleMoves: 50,     // (the last entry from its range on); []: unscaled
});

const MASKED = -3.4028234663852886e38;  // float32's lowest: an illegal move's logit

function softmax(logits) {
  let top = -Infinity;
  for (const x of logits) top = Math.max(top, x);
  const out = logits.map((x) => Math.exp(x - top));
  const total = out.reduce((a, b) => a + b, 0);
  return out.map((x) => x / total);
}

function maskedLogits(logits, legal) {
  let top = -Infinity;
  for (let a = 0; a < logits.length; a++) if (legal[a]) top = Math.max(top, logits[a]);
  return logits.map((x, a) => (legal[a] ? x - top : MASKED));
}

function newNode(game, state, evaluation) {
  const n = game.numActions;
  return {
    state,
    logits: maskedLogits(evaluation.logits, game.legal(state)),
    visits: 1,
    value: evaluation.value,
    children: new Array(n).fill(-1),
    childVisits: new Array(n).fill(0),
    childValues: new Array(n).fill(0),
    childRewards: new Array(n).fill(0),
    childDiscounts: new Array(n).fill(0),
    parent: -1,
    action: -1,
  };
}

/** [A] the children's Q for the node's player: reward + discount * the child's value. */
export function qValues(node) {
  return node.childValues.map((v, a) => node.childRewards[a] + node.childDiscounts[a] * v);
}

/** [A] the Q transform of agz_jax.search.action_selection.QTransform, in [0, 1]. */
export function transformedQ(node, settings) {
  const q = qValues(node);
  const visited = node.childVisits.map((v) => v > 0);
  if (settings.firstPlay === "loss") {  // mctx's own transforms
    if (settings.qTransform === "bounded") return q.map((x, a) => (visited[a] ? (x + 1) / 2 : 0));
    const safe = q.map((x, a) => (visited[a] ? x : node.value));
    const low = Math.min(node.value, ...safe);
    const high = Math.max(node.value, ...safe);
    return q.map((x, a) => ((visited[a] ? x : low) - low) / Math.max(high - low, 1e-8));
  }
  const prior = softmax(node.logits);
  const counted = visited.map((v, a) => v || node.logits[a] > MASKED / 2);
  let fpu = node.value;
  if (settings.firstPlay === "reduction") {
    const mass = prior.reduce((s, p, a) => s + (visited[a] ? p : 0), 0);
    fpu = node.value - settings.fpuReduction * Math.sqrt(mass);
  }
  fpu = Math.min(1, Math.max(-1, fpu));
  const values = q.map((x, a) => (visited[a] ? x : fpu));
  if (settings.qTransform === "bounded") return values.map((x, a) => (counted[a] ? (x + 1) / 2 : 0));
  const kept = values.filter((_, a) => counted[a]);
  const low = Math.min(node.value, ...kept);
  const high = Math.max(node.value, ...kept);
  return values.map((x, a) => (counted[a] ? (x - low) / Math.max(high - low, 1e-8) : 0));
}

/** The child PUCT visits next (mctx.muzero_action_selection); the root's illegal moves never. */
export function selectChild(node, settings, rootLegal = null) {
  const pbC = settings.pbCInit + Math.log((node.visits + settings.pbCBase + 1) / settings.pbCBase);
  const prior = softmax(node.logits);
  const q = transformedQ(node, settings);
  let best = -1;
  let bestScore = -Infinity;
  for (let a = 0; a < prior.length; a++) {
    if (rootLegal && !rootLegal[a]) continue;
    const score = q[a] + (Math.sqrt(node.visits) * pbC * prior[a]) / (node.childVisits[a] + 1);
    if (score > bestScore) {
      best = a;
      bestScore = score;
    }
  }
  return best;
}

/**
 * Searches `state` (unfinished) with `simulations` simulations.
 *
 * @returns {Promise<{action: number, value: number, visits: number[], qvalues: number[],
 *           prior: number[], nodes: object[], valueScale?: number}>} the most visited move (the
 *   first of equals), the root's mean value, its children's visits, Q values and prior, the
 *   tree, and with settings.valueScale the scale put on the root's value.
 */
export async function search(game, state, evaluate, simulations, settings = DEFAULT_SETTINGS) {
  settings = {...DEFAULT_SETTINGS, ...settings};
  if (settings.priorTemperature !== 1) {
    const evaluateOwn = evaluate;
    const temperature = settings.priorTemperature;
    evaluate = async (s) => {
      const evaluation = await evaluateOwn(s);
      return {...evaluation, logits: Array.from(evaluation.logits, (x) => x / temperature)};
    };
  }
  if (settings.valueScale.length > 0) {
    const evaluateOwn = evaluate;
    const {valueScale, valueScaleMoves} = settings;
    evaluate = async (s) => {
      const evaluation = await evaluateOwn(s);
      const phase = Math.min(Math.floor(s.moveCount / valueScaleMoves), valueScale.length - 1);
      return {...evaluation, value: evaluation.value * valueScale[phase]};
    };
  }
  const nodes = [newNode(game, state, await evaluate(state))];
  const rootLegal = game.legal(state);
  for (let sim = 0; sim < simulations; sim++) {
    let index = 0;
    let action;
    for (;;) {  // down to a child not in the tree
      action = selectChild(nodes[index], settings, index === 0 ? rootLegal : null);
      const child = nodes[index].children[action];
      if (child < 0) break;
      index = child;
    }
    const parent = nodes[index];
    const wasOver = game.isOver(parent.state);
    const after = wasOver ? parent.state : game.play(parent.state, action);  // below the end: no move
    const over = game.isOver(after);
    const node = newNode(game, after, over ? {logits: new Array(game.numActions).fill(0), value: 0}
                                           : await evaluate(after));
    if (over) node.value = 0;
    node.parent = index;
    node.action = action;
    const mover = game.toPlay(parent.state);
    parent.childRewards[action] = over && !wasOver ? game.result(after) * mover : 0;
    parent.childDiscounts[action] = over ? 0 : game.toPlay(after) === mover ? 1 : -1;
    parent.children[action] = nodes.length;
    nodes.push(node);
    // Back up, as mctx: each parent's mean takes the child's value through its edge.
    let leaf = nodes.length - 1;
    let value = node.value;
    while (leaf !== 0) {
      const up = nodes[nodes[leaf].parent];
      const a = nodes[leaf].action;
      value = up.childRewards[a] + up.childDiscounts[a] * value;
      up.value = (up.value * up.visits + value) / (up.visits + 1);
      up.visits += 1;
      up.childValues[a] = nodes[leaf].value;
      up.childVisits[a] += 1;
      leaf = nodes[leaf].parent;
    }
  }
  const root = nodes[0];
  let action = 0;
  for (let a = 1; a < root.childVisits.length; a++) {
    if (root.childVisits[a] > root.childVisits[action]) action = a;
  }
  const found = {action, value: root.value, visits: root.childVisits.slice(),
                 qvalues: qValues(root), prior: softmax(root.logits), nodes};
  if (settings.valueScale.length > 0) {  // the scale put on the root's value, as the players say
    const {valueScale, valueScaleMoves} = settings;
    found.valueScale =
      valueScale[Math.min(Math.floor(state.moveCount / valueScaleMoves), valueScale.length - 1)];
  }
  return found;
}
