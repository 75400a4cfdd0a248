// Each game's own part of the scoreboard: sheets, standings, the board. Scoring rows that are
// legal now are buttons, so tapping a row writes it (the same action as the table's buttons).
import { h } from "./dom.js";
import { t } from "./i18n.js";
import { stoneIcon, triangleBoard } from "./svg.js";
import { categoryName, DRAPKY_FIGURES, GENERAL_CATEGORIES } from "./words.js";

const legalScore = (state, id, column = 0) =>
  (state.legal || []).some((a) => a.score === id && (a.column || 0) === column);

const blank = (v) => (v === null || v === undefined ? "" : v);

function headerRow(names, first) {
  // A long name shortens (its full form is the title); the numbers under it never do.
  return h("tr", {}, h("th", { scope: "col" }, first),
    ...names.map((n) => h("th", { scope: "col", class: "num", title: n }, h("span", { class: "name" }, n))));
}

/** A sheet with one column per player: the columns are as wide as their numbers need. */
function gridTable(players, dataset, ...children) {
  return h("table", { class: "sheet grid", dataset, style: `--players: ${Math.max(players, 1)}` }, ...children);
}

/** Carried throws as tally bars, said as a number to a screen reader. */
function tallyRow(name, counts) {
  return h("tr", { class: "foot marks" }, h("th", { scope: "row" }, name),
    ...counts.map((m) => h("td", { class: "num tally", "aria-label": t("drapky.marks_of", { count: m }) },
      h("span", { "aria-hidden": "true" }, "|".repeat(m) || "0"))));
}

function scoreRow(state, act, { id, name, values, mover, preview, column }) {
  const legal = legalScore(state, id, column);
  const action = column ? { score: id, column } : { score: id };
  const label = h("th", { scope: "row" },
    legal ? h("button", { class: "row-button", onclick: () => act(action), dataset: { focus: `row-${id}-${column || 0}` },
      "aria-label": t("sheet.write", { name, points: preview ?? "" }) }, name) : name);
  const cells = values.map((v, p) => {
    const td = h("td", { class: "num" }, blank(v));
    if (p === mover && legal && (v === null || v === undefined)) {
      td.classList.add("preview");
      td.textContent = blank(preview);
    }
    return td;
  });
  const tr = h("tr", { class: legal ? "legal-row" : "", dataset: { row: id } }, label, ...cells);
  if (legal) tr.addEventListener("click", (e) => { if (e.target.tagName !== "BUTTON") act(action); });
  return tr;
}

function footRow(name, values, cls = "") {
  return h("tr", { class: `foot ${cls}` }, h("th", { scope: "row" }, name),
    ...values.map((v) => h("td", { class: "num" }, blank(v))));
}

function moverIndex(state) {
  return state.players.findIndex((p) => p.name === state.to_move);
}

function general(state, act) {
  const sheets = state.sheets || [];
  const names = sheets.map((sh) => sh.name);
  const mover = moverIndex(state);
  const nColumns = sheets.length ? sheets[0].columns.length : 1;
  const out = [];
  for (let c = 0; c < nColumns; c++) {
    const preview = (state.can_score || [])[c] || {};
    const rows = GENERAL_CATEGORIES.map((id) => scoreRow(state, act, {
      id, name: categoryName("general", id), column: c, mover, preview: preview[id],
      values: sheets.map((sh) => sh.columns[c].boxes[id]),
    }));
    const col = (key) => sheets.map((sh) => sh.columns[c][key]);
    const foot = [footRow(t("sheet.upper_sum"), col("upper_sum"))];
    if (col("upper_bonus").some(Boolean)) foot.push(footRow(t("sheet.upper_bonus"), col("upper_bonus")));
    if (col("general_bonus").some(Boolean)) {
      foot.push(footRow(t("sheet.general_bonus"), col("general_bonus")));
    }
    foot.push(footRow(t("sheet.total"), col("total"), "total"));
    out.push(gridTable(sheets.length, { column: c },
      nColumns > 1 ? h("caption", {}, t("sheet.column", { n: c + 1 })) : null,
      h("thead", {}, headerRow(names, t("sheet.category"))),
      h("tbody", {}, ...rows.slice(0, 6), footRow(t("sheet.upper_sum"), col("upper_sum"), "sub"),
        ...rows.slice(6)),
      h("tfoot", {}, ...foot.slice(1))));
  }
  return out;
}

function drapky(state, act) {
  const sheets = state.sheets || [];
  const mover = moverIndex(state);
  const preview = state.can_score || {};
  const rows = DRAPKY_FIGURES.map((id) => scoreRow(state, act, {
    id, name: categoryName("drapky", id), column: 0, mover, preview: preview[id],
    values: sheets.map((sh) => (sh.figures || {})[id]),
  }));
  const col = (key) => sheets.map((sh) => sh[key]);
  return [
    gridTable(sheets.length, {},
      h("thead", {}, headerRow(sheets.map((sh) => sh.name), t("sheet.figure"))),
      h("tbody", {}, ...rows),
      h("tfoot", {}, tallyRow(t("drapky.marks"), col("marks")),
        footRow(t("drapky.recorded"), col("recorded")),
        footRow(t("sheet.total"), col("points"), "total"),
        footRow(t("drapky.place"), col("place")))),
  ];
}

function thousand(state) {
  const rows = (state.standing || []).map((p) => {
    const notes = [];
    if (!p.opened) notes.push(t("thousand.closed"));
    if (p.on_barrel) notes.push(t("thousand.on_barrel", { n: p.barrel_attempts_left ?? 0 }));
    if (p.pit) notes.push(t("thousand.in_pit", { pit: p.pit }));
    if (p.falls) notes.push(t("thousand.falls", { n: p.falls }));
    return h("tr", { class: p.name === state.to_move ? "to-move" : "" },
      h("th", { scope: "row" }, p.name),
      h("td", { class: "num" }, p.score),
      h("td", { class: "bolts", "aria-label": t("thousand.bolts_of", { n: p.bolts }) },
        "●".repeat(p.bolts) + "○".repeat(Math.max(0, 3 - p.bolts))),
      h("td", { class: "notes" }, notes.join(" · ")));
  });
  return [
    h("table", { class: "sheet standing" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("player")),
        h("th", { scope: "col", class: "num" }, t("score")), h("th", { scope: "col" }, t("thousand.bolts")),
        h("th", { scope: "col" }, t("thousand.state")))),
      h("tbody", {}, ...rows)),
    h("p", { class: "info" }, t("thousand.barrel_at", { n: state.barrel_at }),
      state.pass_minimum !== undefined ? ` · ${t("thousand.pass_minimum", { n: state.pass_minimum })}` : ""),
  ];
}

function kymppitonni(state) {
  const brk = state.break || {};
  return [h("p", { class: "info break" },
    brk.holder ? t("kymppi.break_holder", { name: brk.holder, value: brk.value })
      : t("kymppi.break_none"),
    " · ", t("target", { n: state.target }),
    state.reached_target ? ` · ${t("kymppi.reached", { name: state.reached_target })}` : "")];
}

function zakazana(state) {
  const forbidden = state.forbidden || [];
  const rows = (state.scores || []).map((p) => h("tr", {},
    h("th", { scope: "row" }, p.name), h("td", { class: "turns" }, (p.turns || []).join(" + ") || "–"),
    h("td", { class: "num" }, p.score)));
  return [
    h("p", { class: "info" }, forbidden.length
      ? [t("zakazana.forbidden"), " ", ...forbidden.map((n) => h("span", { class: "chip" }, n))]
      : t("zakazana.not_chosen"),
    " · ", t("zakazana.round", { round: state.round, rounds: state.rounds })),
    h("table", { class: "sheet" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("player")),
        h("th", { scope: "col" }, t("zakazana.turns")), h("th", { scope: "col", class: "num" }, t("score")))),
      h("tbody", {}, ...rows)),
  ];
}

function triangles(state, act, ui) {
  const out = [];
  out.push(triangleBoard(state, { label: t("tri.board"), onCell: (cell) => ui.pickCell(cell),
    cellLabel: (cell, points) => t("tri.cell_label", { cell, points }) }));
  const info = [];
  if (state.hand) {
    info.push(h("span", { class: "hand" }, stoneIcon(state.hand, t("tri.hand", { stone: state.hand })),
      t("tri.hand", { stone: state.hand }), " · ", t("tri.pips", { n: state.hand_pips })));
  }
  const best = (state.best_placements || []).reduce((b, p) => (!b || p.value > b.value ? p : b), null);
  if (best) info.push(h("span", { class: "best-text" }, t("tri.best", { cell: best.cell, rotation: best.rotation, value: best.value })));
  if (state.last_move) {
    const m = state.last_move;
    info.push(h("span", {}, t("tri.last_move", { name: m.player, stone: m.stone, cell: m.cell, points: m.points })));
  }
  out.push(h("p", { class: "info stack" }, ...info));
  const names = state.players.map((p) => p.name);
  out.push(h("table", { class: "sheet" },
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("player")),
      h("th", { scope: "col", class: "num" }, t("tri.stones_left")), h("th", { scope: "col", class: "num" }, t("score")))),
    h("tbody", {}, ...names.map((n, p) => h("tr", { class: n === state.to_move ? "to-move" : "" },
      h("th", { scope: "row" }, n), h("td", { class: "num" }, (state.stones_left || [])[p] ?? ""),
      h("td", { class: "num" }, state.players[p].score))))));
  return out;
}

function sekvence(state) {
  return [h("p", { class: "info" }, t("target", { n: state.target }))];
}

function jeopardy(state) {
  const out = [h("p", { class: "info" }, t("target", { n: state.target }))];
  if (state.must_confirm) out.push(h("p", { class: "info warn" }, t("sest.must_confirm")));
  return out;
}

const SHEETS = {
  general, drapky, thousand, kymppitonni, triangles, sekvence,
  "zakazana-cisla": zakazana, "jednicky-a-petky": jeopardy, "sest-kostek": jeopardy,
};

/** The game's own sheet, or nothing for a game this page does not know. */
export function gameSheet(state, act, ui) {
  const make = SHEETS[state.game];
  return make ? make(state, act, ui) : [];
}
