"use strict";
// The scoreboard: state arrives as server-sent events; actions go to the PROTOCOL.md routes.
const $ = (id) => document.getElementById(id);

function post(path, body) {
  return fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (r) => {
    if (!r.ok) {
      const err = await r.json().catch(() => ({ detail: r.statusText }));
      showProblem(err.detail || r.statusText);
      if (r.status === 401) $("pinbox").hidden = false;
    }
  });
}

function showProblem(text) {
  $("problem").hidden = !text;
  $("problem").textContent = text || "";
}

function label(action) {
  const [key, value] = Object.entries(action)[0];
  if (value === true) return key;
  if (Array.isArray(value)) return `${key} ${value.join(" ")}`;
  if (typeof value === "object") return `${key} ${value.stone} ${value.cell} r${value.rotation}`;
  return `${key} ${value}`;
}

function render(state) {
  $("game").textContent = state.game || "pipcam";
  const body = $("scores").querySelector("tbody");
  body.replaceChildren(...state.players.map((p) => {
    const tr = document.createElement("tr");
    if (p.name === state.to_move) tr.className = "to-move";
    tr.innerHTML = "<td></td><td></td>";
    tr.children[0].textContent = p.name + (state.winners.includes(p.name) ? " 🏆" : "");
    tr.children[1].textContent = p.score;
    return tr;
  }));
  const read = (state.table && state.table.dice_read) || [];
  $("dice").replaceChildren(...read.map((d) => {
    const el = document.createElement("span");
    el.className = "die " + d.status;
    el.textContent = d.value === null ? "?" : d.value;
    el.title = `confidence ${d.confidence}`;
    return el;
  }));
  const turn = state.turn;
  $("turn").textContent = turn && turn.total !== undefined
    ? `${turn.player}: turn total ${turn.total}` : (state.to_move ? `${state.to_move} to play` : "");
  $("event").textContent = state.last_event || "";
  showProblem(state.table && state.table.problem);
  const legal = (state.legal || []).slice(0, 24);
  $("legal").replaceChildren(...legal.map((a) => {
    const b = document.createElement("button");
    b.textContent = label(a);
    b.onclick = () => post("/api/actions", a);
    return b;
  }));
}

function connect() {
  const source = new EventSource("/api/events");
  source.addEventListener("state", (e) => { $("conn").textContent = "live"; render(JSON.parse(e.data)); });
  source.onerror = () => { $("conn").textContent = "reconnecting…"; };
}

$("undo").onclick = () => post("/api/undo");
$("redo").onclick = () => post("/api/redo");
$("pinform").onsubmit = (e) => {
  e.preventDefault();
  post("/api/pin", { pin: $("pin").value }).then(() => { $("pinbox").hidden = true; });
};
connect();
