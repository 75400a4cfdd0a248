// Drawings made on the phone: the scores over the game, the dice faces, the triangle board.
import { h, s } from "./dom.js";

export const COLOURS = ["#1f6f5c", "#c2410c", "#6d28d9", "#0369a1", "#a16207", "#be185d",
  "#4d7c0f", "#475569", "#b91c1c", "#0f766e", "#7c2d12", "#1e3a8a"];

/** Scores over the game: one line per player; points[k] is every score after action k. */
export function lineChart(players, points, label) {
  const W = 320, H = 180, L = 40, R = 8, T = 8, B = 22;
  const all = points.flat();
  let lo = Math.min(0, ...all), hi = Math.max(1, ...all);
  if (hi === lo) hi = lo + 1;
  const n = Math.max(points.length - 1, 1);
  const x = (k) => L + ((W - L - R) * k) / n;
  const y = (v) => T + ((H - T - B) * (hi - v)) / (hi - lo);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img", "aria-label": label });
  svg.append(s("title", {}, label));
  for (const v of [lo, (lo + hi) / 2, hi]) {
    const yy = y(v);
    svg.append(s("line", { x1: L, x2: W - R, y1: yy, y2: yy, class: "grid" }));
    svg.append(s("text", { x: L - 4, y: yy + 4, "text-anchor": "end", class: "axis" }, Math.round(v)));
  }
  if (lo < 0) svg.append(s("line", { x1: L, x2: W - R, y1: y(0), y2: y(0), class: "zero" }));
  svg.append(s("text", { x: L, y: H - 6, class: "axis" }, "0"));
  svg.append(s("text", { x: W - R, y: H - 6, "text-anchor": "end", class: "axis" }, points.length - 1));
  players.forEach((name, p) => {
    const path = points.map((row, k) => `${x(k).toFixed(1)},${y(row[p]).toFixed(1)}`).join(" ");
    svg.append(s("polyline", { points: path, fill: "none", stroke: COLOURS[p % COLOURS.length],
      "stroke-width": 2.5, "stroke-linejoin": "round", class: "series" }, s("title", {}, name)));
  });
  return svg;
}

/** Per-face counts as bars, with the count a fair die would give drawn as a dashed line. */
export function faceBars(faces, label) {
  const W = 320, H = 160, L = 8, B = 22, T = 14;
  const counts = [1, 2, 3, 4, 5, 6].map((f) => Number(faces[String(f)] || 0));
  const total = counts.reduce((a, b) => a + b, 0);
  const expected = total / 6;
  const top = Math.max(1, expected, ...counts);
  const slot = (W - 2 * L) / 6;
  const y = (v) => T + (H - T - B) * (1 - v / top);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart bars", role: "img", "aria-label": label });
  svg.append(s("title", {}, label));
  counts.forEach((c, i) => {
    const x = L + i * slot + slot * 0.15;
    svg.append(s("rect", { x, y: y(c), width: slot * 0.7, height: H - B - y(c), class: "bar" }));
    svg.append(s("text", { x: x + slot * 0.35, y: y(c) - 3, "text-anchor": "middle", class: "axis" }, c));
    svg.append(s("text", { x: x + slot * 0.35, y: H - 6, "text-anchor": "middle", class: "face" }, i + 1));
  });
  if (total) {
    svg.append(s("line", { x1: L, x2: W - L, y1: y(expected), y2: y(expected), class: "expected" }));
  }
  return svg;
}

// -- the triangle board (RULES §5.2): vertex (i, j) sits at (i + j/2, j·√3/2) -----------------

const R3 = Math.sqrt(3) / 2;

export function parseCell(name) {
  const m = /^([UD])\((-?\d+),(-?\d+)\)$/.exec(name.replace(/\s/g, ""));
  return m ? { kind: m[1], i: Number(m[2]), j: Number(m[3]), name: `${m[1]}(${m[2]},${m[3]})` } : null;
}

function vertices(c) {
  return c.kind === "U"
    ? [[c.i, c.j], [c.i + 1, c.j], [c.i, c.j + 1]]
    : [[c.i + 1, c.j], [c.i, c.j + 1], [c.i + 1, c.j + 1]];
}

const cell = (kind, i, j) => ({ kind, i, j, name: `${kind}(${i},${j})` });
const hexDistance = ([a, b]) => Math.max(Math.abs(a), Math.abs(b), Math.abs(a + b));

/** The cells of a board shape named as the engine names them ("hexagon:4", ...), or null. */
export function shapeCells(spec) {
  const m = /^(hexagon|triangle|rhombus)(?::(\d+)(?:x(\d+))?)?$/.exec(String(spec || "").trim());
  if (!m) return null;
  const out = [];
  if (m[1] === "hexagon") {
    const side = Number(m[2] || 4);
    for (let j = -side; j < side; j++) {
      for (let i = -2 * side; i < 2 * side; i++) {
        for (const kind of "UD") {
          const c = cell(kind, i, j);
          if (vertices(c).every((v) => hexDistance(v) <= side)) out.push(c);
        }
      }
    }
  } else if (m[1] === "triangle") {
    const side = Number(m[2] || 8);
    for (let j = 0; j < side; j++) for (let i = 0; i < side - j; i++) out.push(cell("U", i, j));
    for (let j = 0; j < side - 1; j++) for (let i = 0; i < side - 1 - j; i++) out.push(cell("D", i, j));
  } else {
    const w = Number(m[2] || 6), hh = Number(m[3] || m[2] || 6);
    for (let j = 0; j < hh; j++) for (let i = 0; i < w; i++) for (const k of "UD") out.push(cell(k, i, j));
  }
  return out;
}

const point = ([i, j]) => [i + j / 2, -j * R3];

/** Side names of a cell, clockwise, each with its two vertices (RULES §5.2). */
function sides(c) {
  const [a, b, d] = vertices(c);
  return c.kind === "U"
    ? { bottom: [a, b], left: [a, d], right: [b, d] }
    : { top: [b, d], right: [a, d], left: [a, b] };
}

/** The sides a stone shows in a cell with a rotation: s_r, s_r+1, s_r+2 clockwise. */
export function stoneSides(kind, stone, rotation) {
  const v = [...stone].map(Number);
  const names = kind === "U" ? ["bottom", "left", "right"] : ["top", "right", "left"];
  return Object.fromEntries(names.map((n, k) => [n, v[(rotation + k) % 3]]));
}

function triangle(c, attrs, values) {
  const pts = vertices(c).map(point);
  const g = s("g", { "data-cell": c.name });
  g.append(s("polygon", { points: pts.map((p) => p.join(",")).join(" "), ...attrs }));
  if (values) {
    const cx = (pts[0][0] + pts[1][0] + pts[2][0]) / 3, cy = (pts[0][1] + pts[1][1] + pts[2][1]) / 3;
    for (const [side, [p, q]] of Object.entries(sides(c))) {
      if (values[side] === undefined) continue;
      const [px, py] = point(p), [qx, qy] = point(q);
      const mx = (px + qx) / 2, my = (py + qy) / 2;
      const tx = mx + (cx - mx) * 0.5, ty = my + (cy - my) * 0.5;
      g.append(s("text", { x: tx.toFixed(3), y: (ty + 0.01).toFixed(3), "text-anchor": "middle",
        class: "side" }, values[side]));
    }
  }
  return g;
}

function bounds(cells) {
  const pts = cells.flatMap((c) => vertices(c).map(point));
  const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1]);
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
}

/** A viewBox around the focus cells with a margin, at least 6 units wide, inside the board. */
function frame(focus, cells) {
  const [bx0, by0, bx1, by1] = bounds(cells);
  let [x0, y0, x1, y1] = bounds(focus);
  const grow = (lo, hi, min, edgeLo, edgeHi) => {
    let a = lo - 1, b = hi + 1;
    if (b - a < min) { const mid = (a + b) / 2; a = mid - min / 2; b = mid + min / 2; }
    return [Math.max(a, edgeLo), Math.min(b, edgeHi)];
  };
  [x0, x1] = grow(x0, x1, 6, bx0, bx1);
  [y0, y1] = grow(y0, y1, 4.5, by0, by1);
  const pad = 0.15;
  return [x0 - pad, y0 - pad, x1 - x0 + 2 * pad, y1 - y0 + 2 * pad];
}

/** The board: empty cells, laid stones with their side values, the legal cells, the best one.
 * With ``onCell`` every cell the stone fits is a button, tapped or from the keyboard (Tab to it,
 * Enter or Space), named by ``cellLabel(cell, points)`` with the most its placements score. */
export function triangleBoard(state, { label, onCell, cellLabel } = {}) {
  const laid = new Map((state.board || []).map((b) => [b.cell, b]));
  // Every legal placement, so every cell the stone can go to is tappable (not only the best five).
  const placements = state.placements || state.best_placements || [];
  const bestValue = placements.length ? Math.max(...placements.map((p) => p.value)) : null;
  const best = placements.find((p) => p.value === bestValue) || null;
  const legalCells = new Set(placements.map((p) => p.cell));
  const cellPoints = new Map();
  for (const p of placements) {
    const v = p.points ?? p.value;
    if (!cellPoints.has(p.cell) || v > cellPoints.get(p.cell)) cellPoints.set(p.cell, v);
  }
  // Buttons inside an image are hidden from screen readers: a board that takes taps is a group.
  const interactive = Boolean(onCell) && legalCells.size > 0;
  let cells = shapeCells(state.board_shape);
  if (!cells) {
    const names = new Set([...laid.keys(), ...legalCells]);
    cells = [...names].map(parseCell).filter(Boolean);
  }
  // Zoom to the stones in play (and where the next may go) so early boards stay readable.
  const focus = cells.filter((c) => laid.has(c.name) || legalCells.has(c.name));
  const box = frame(focus.length ? focus : cells, cells);
  const svg = s("svg", { viewBox: box.map((v) => v.toFixed(3)).join(" "), class: "board",
    role: interactive ? "group" : "img", "aria-label": label });
  svg.append(s("title", {}, label));
  for (const c of cells) {
    const stone = laid.get(c.name);
    if (stone) {
      svg.append(triangle(c, { class: "stone" }, stone.sides));
    } else {
      const isBest = best && best.cell === c.name;
      const cls = isBest ? "cell best" : legalCells.has(c.name) ? "cell legal" : "cell";
      const g = triangle(c, { class: cls },
        isBest && state.hand ? stoneSides(c.kind, state.hand, best.rotation) : null);
      if (legalCells.has(c.name) && onCell) {
        // Only the cells the stone fits are tab stops; the rest of the board stays out of the way.
        g.classList.add("tappable");
        g.setAttribute("role", "button");
        g.setAttribute("tabindex", "0");
        g.dataset.focus = `cell-${c.name}`;
        if (cellLabel) g.setAttribute("aria-label", cellLabel(c.name, cellPoints.get(c.name)));
        g.addEventListener("click", () => onCell(c.name));
        g.addEventListener("keydown", (e) => {
          if (e.key !== "Enter" && e.key !== " ") return;
          e.preventDefault(); // Space would scroll the page
          onCell(c.name);
        });
      }
      svg.append(g);
    }
  }
  return svg;
}

/** A stone drawn alone (the one in hand), sides clockwise from the bottom. */
export function stoneIcon(stone, label) {
  const c = cell("U", 0, 0);
  const svg = s("svg", { viewBox: "-0.1 -0.97 1.2 1.07", class: "stone-icon", role: "img",
    "aria-label": label });
  svg.append(triangle(c, { class: "stone" }, stoneSides("U", stone, 0)));
  return svg;
}

export { h };
