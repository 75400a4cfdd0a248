// The phone scoreboard. The state arrives as server-sent events (GET /api/events); every change
// goes through the PROTOCOL.md routes (api.js), so anything done here can also be scripted.
import { ask, get, image, post, refusalText } from "./api.js";
import { $, h, toast } from "./dom.js";
import { LANGUAGES, language, preferred, setLanguage, t } from "./i18n.js";
import { gameSheet } from "./sheets.js";
import { COLOURS, faceBars, lineChart } from "./svg.js";
import { choiceWord, describeAction, describeEvent, NATIVE_NAMES, optionHelp, optionName, sameMultiset,
  wordEnding, wordRefusal } from "./words.js";

let current = null; // the last state shown
let catalog = null; // GET /api/catalog, or null while it cannot be had
let selected = new Set(); // indices of the dice picked for a keep
let diceKey = "";
let cellFilter = null; // a triangle cell tapped on the board
let showAllPlacements = false;
let placeKey = ""; // the stone in hand those two were chosen for
let hint = null; // the coach's advice asked for on this phone: { version, advice | error | loading }

const VIEWS = ["board", "history", "stats", "new"];

// -- state ------------------------------------------------------------------------------------

function gameName(id) {
  const entry = catalog && catalog.find((g) => g.id === id);
  return entry ? entry.name : NATIVE_NAMES[id] || id;
}

/** Show a state; an older one (a late event) is ignored unless forced (after a reconnect). */
function accept(state, { force = false } = {}) {
  if (!state || typeof state !== "object") return;
  const seq = state.table ? state.table.seq : 0;
  const shown = current && current.table ? current.table.seq : -1;
  const sameGame = current && current.table && state.table && current.table.game_id === state.table.game_id;
  if (!force && sameGame && seq < shown) return;
  current = state;
  renderBoard();
  refreshSide();
}

// A change names the game's version it was chosen on (?seen=): the table refuses it if another
// phone, a button or the camera changed the game first. One change at a time per phone: a
// double tap sends one undo, not two.
let sending = false;

function seen(path) {
  const version = current && current.table ? current.table.version : undefined;
  return version === undefined ? path : `${path}?seen=${version}`;
}

async function send(path, body, method = "POST") {
  if (sending) return null;
  sending = true;
  try {
    const state = await post(seen(path), body, method);
    if (state) accept(state);
    else refresh(); // refused: show the game as it is now
    return state;
  } finally {
    sending = false;
  }
}

async function act(action) {
  return send("/api/actions", action);
}

async function refresh() {
  const state = await get("/api/state");
  if (state) accept(state, { force: true });
}

// -- live updates -------------------------------------------------------------------------------

let source = null;
let hadError = false;

function setConn(kind) {
  const el = $("conn");
  el.dataset.state = kind;
  $("conn-text").textContent = t(`conn.${kind}`);
}

function connect() {
  source = new EventSource("/api/events");
  source.addEventListener("state", (e) => {
    setConn("live");
    accept(JSON.parse(e.data));
  });
  source.onopen = () => {
    setConn("live");
    if (hadError) {
      hadError = false;
      refresh();
    }
  };
  source.onerror = () => {
    hadError = true;
    if (source.readyState === EventSource.CLOSED) {
      // The browser gives up on a refused stream (the Pi restarting): try again ourselves.
      setConn("offline");
      setTimeout(connect, 3000);
    } else {
      setConn("reconnecting");
    }
  };
}

// -- the scoreboard -------------------------------------------------------------------------------

/** Whether the game has ended and a player turns up the stones he still holds. */
function revealing(state) {
  return state.game === "triangles" && Boolean(state.end) && !state.finished;
}

function statusLine(state) {
  if (!state.game) return t("status.no_game");
  if (state.finished) {
    return t("status.finished", { names: state.winners.join(", ") || "–" });
  }
  // Triangles after its end: the stones still held are turned up to be subtracted (RULES §5.5).
  if (revealing(state)) return t("tri.reveal_status", { player: state.to_move });
  const vars = { player: state.to_move, n: state.roll_size };
  return t(`phase.${state.phase}`, vars);
}

function playersList(state) {
  return h("ol", { class: "players", "aria-label": t("players") }, ...state.players.map((p, i) => {
    const moving = p.name === state.to_move;
    const won = state.winners.includes(p.name);
    return h("li", { class: `${moving ? "to-move" : ""} ${won ? "winner" : ""}`,
      "aria-current": moving ? "true" : null },
    h("span", { class: "swatch", style: `background:${COLOURS[i % COLOURS.length]}` }),
    h("span", { class: "name" }, p.name),
    won ? h("span", { class: "tag win" }, `🏆 ${t("winner")}`) : null,
    moving ? h("span", { class: "tag turn" }, t("to_move")) : null,
    h("span", { class: "score" }, p.score));
  }));
}

function diceRead(state) {
  const read = (state.table && state.table.dice_read) || [];
  if (state.game === "triangles") return null; // stones, not dice
  if (state.table && state.table.camera === "none") return null; // no camera: the dice are typed
  const box = h("div", { class: "panel", id: "read-box" }, h("h3", {}, t("dice.read")));
  // A live camera says what it sees now, so a player knows it is watching: no dice in view,
  // or dice still moving (read once they lie still).
  const live = state.table && state.table.camera === "ok" ? state.table.reading : null;
  // The dice seen out of the roll zone (set aside, held) are numbered on after the zone's: a
  // misread one is corrected the same way, and the set-aside or hold it made with it.
  const aside = (state.table && state.table.aside_read) || [];
  if (!read.length && !aside.length) {
    const words = live === "empty" ? "dice.none_in_view"
      : live === "moving" ? "dice.moving" : "dice.none_read";
    box.append(h("p", { class: "muted", id: "read-status" }, t(words)));
    return withPhotosNote(state, box);
  }
  if (live === "moving") box.append(h("p", { class: "muted", id: "read-status" }, t("dice.moving")));
  box.append(h("div", { class: "dice", id: "dice-read" }, ...read.map((d, i) => readDie(d, i))));
  if (aside.length) {
    box.append(h("p", { class: "muted aside-title" }, t("dice.out_of_zone")),
      h("div", { class: "dice", id: "aside-read" },
        ...aside.map((d, j) => readDie(d, read.length + j))));
  }
  box.append(h("p", { class: "hint" }, t("dice.tap_to_correct")));
  // Which die is which: the camera's picture, each die boxed with the number it has here.
  if (state.table && state.table.camera === "ok") {
    box.append(h("button", { type: "button", id: "photo-open", onclick: () => showPhoto() },
      t("photo.show")));
  }
  return withPhotosNote(state, box);
}

// ``reading``: an earlier throw's photo (from the history), its dice as the players left them;
// none: the last throw's, whose dice are the board's. ``step``: the history step it is of, when a
// die tapped on it fixes that throw (PUT /api/history/{step}/die).
async function showPhoto(reading = null, step = null) {
  let frame = null; // the camera frame's width and height, which the dice's boxes are in
  const path = reading === null ? "/api/photo.jpg" : `/api/photo.jpg?reading=${reading}`;
  const src = await image(path, (headers) => {
    const size = (headers.get("X-Frame-Size") || "").split("x").map(Number);
    frame = size.length === 2 && size.every((n) => n > 0) ? size : null;
  });
  if (!src) return;
  const img = $("photo-image");
  const old = img.src;
  img.src = src;
  img.alt = t("photo.title");
  if (old.startsWith("blob:")) URL.revokeObjectURL(old);
  $("photo-hint").textContent = t(reading === null ? "photo.hint"
    : step === null ? "photo.hint_seen" : "photo.hint_earlier");
  // A die tapped on the photo is corrected as when it is tapped on the board; one of an earlier
  // throw fixes that throw, as Fix would, and names the die (two dice may show the same face).
  let earlier = null;
  if (reading !== null && step !== null) {
    const listed = await get(`/api/history/${step}/dice`);
    earlier = listed && listed.reading === reading ? listed.dice : null;
  }
  img.onclick = reading !== null && earlier === null ? null : (event) => {
    const table = (current && current.table) || {};
    const dice = earlier || [...(table.dice_read || []), ...(table.aside_read || [])];
    const rect = img.getBoundingClientRect();
    if (!frame || !rect.width || !rect.height) return;
    const x = ((event.clientX - rect.left) / rect.width) * frame[0];
    const y = ((event.clientY - rect.top) / rect.height) * frame[1];
    const i = dice.findIndex((d) => Array.isArray(d.box)
      && x >= d.box[0] && x <= d.box[2] && y >= d.box[1] && y <= d.box[3]);
    if (i < 0) return;
    $("photo-dialog").close();
    if (earlier) {
      correctDie(i, shownValue(dice[i]), (value) => send(`/api/history/${step}/die`,
        { die: i, value }, "PUT").then(showHistory));
    } else {
      correctDie(i, shownValue(dice[i]));
    }
  };
  $("photo-dialog").showModal();
}

/** A die of the last reading as the board shows its face: "–" no die there, "?" unread. */
function shownValue(d) {
  if (d.status === "no_die") return "–";
  return d.value === null || d.value === undefined ? "?" : d.value;
}

/** A die of the last reading as a button that corrects it (number i: the zone's, then on). */
// Why a die was not read, as the phones say it: blurred, at the camera's edge or partly
// hidden, else its status.
function unreadKey(d) {
  if (d.blurred) return "dice.blurred";
  if (d.cut) return "dice.cut";
  if (d.hidden) return "dice.hidden";
  return `dice.${d.status}`;
}

function readDie(d, i) {
  const gone = d.status === "no_die"; // a phone said nothing is there; tap again to undo that
  const value = shownValue(d);
  const pct = Math.round(Number(d.confidence || 0) * 100);
  const flag = d.status === "ok" ? "" : t(unreadKey(d));
  const mark = gone ? "×" : d.status === "cocked" ? "!" : "?";
  // A die with no value has no confidence to give: the camera's is in "no face" or in a face
  // it would not say (partly hidden), and "? 98%" reads as sure of nothing.
  const valued = !gone && value !== "?";
  const label = valued
    ? t("dice.read_label", { n: i + 1, value, pct, flag })
    : t("dice.unread_label", { n: i + 1, value, flag });
  return h("button", {
    class: `die read ${d.status}`, type: "button", dataset: { index: i, focus: `read-${i}` },
    // A die read surely has no flag: no space left before the full stop.
    "aria-label": label.replace(/ +\./, "."),
    onclick: () => correctDie(i, value),
  }, h("span", { class: "pips" }, value), h("span", { class: "conf" }, valued ? `${pct}%` : ""),
  flag ? h("span", { class: "flag", "aria-hidden": "true" }, mark) : null);
}

// Players should know when the camera keeps pictures of their table, and that a correction is
// what turns a photo into a lesson for the reader (pipcam photos exports them).
// A model tuned on the table's own photos is what those corrections bought: say since when.
function withPhotosNote(state, box) {
  const kept = state.table && state.table.photos;
  if (kept !== null && kept !== undefined) {
    box.append(h("p", { class: "hint", id: "photos-note" }, t("photos.kept", { n: kept })));
    const open = teachCount(state.table.photo_seq);
    if (open !== 0) {
      // A photo with missed dice is one question however many it missed: no dice count then.
      const words = open === null ? t("teach.open")
        : teachOpen.missing ? t("teach.open_missed", { n: open })
        : t("teach.open_n", { n: open });
      box.append(h("button", { type: "button", id: "teach-open", onclick: teach }, words));
    }
  }
  const tuned = state.table && state.table.tuned;
  if (tuned) {
    // The server says the day (YYYY-MM-DD); the page says it as its language does.
    const day = new Intl.DateTimeFormat(language(), { dateStyle: "long", timeZone: "UTC" })
      .format(new Date(`${tuned}T00:00:00Z`));
    box.append(h("p", { class: "hint", id: "tuned-note" }, t("model.tuned", { date: day })));
  }
  return box;
}

// How many dice the teach sheet asks about, fetched again after each kept photo (the table says
// photo_seq) and after answering; null until known. The server lists the sheet once for all phones.
let teachOpen = { seq: null, count: null, missing: 0 };

function teachCount(seq) {
  if (seq !== teachOpen.seq) {
    teachOpen.seq = seq;
    recountTeach();
  }
  return teachOpen.count;
}

async function recountTeach() {
  const sheet = await get("/api/teach?limit=1");
  const count = sheet && sheet.keeping ? sheet.count : null;
  const missing = sheet && sheet.keeping ? sheet.missing : 0;
  if (count !== teachOpen.count || missing !== teachOpen.missing) {
    Object.assign(teachOpen, { count, missing });
    renderBoard();
  }
}

// The teach sheet (GET/POST /api/teach): the dice of kept photos that the camera read unsurely,
// one at a time, at the players' pace. An answer labels the photo for the next tuning and changes
// no game; a read below 90 % teaches nothing until somebody answers it (pipcam/teach.py).
let teaching = false;

function askTeach(question, i, n, src) {
  const dialog = $("teach-dialog");
  $("teach-progress").textContent = t("teach.progress", { i, n });
  $("teach-image").src = src;
  const pct = Math.round(Number(question.confidence || 0) * 100);
  let read = t("teach.read", { value: question.value, pct });
  const status = t(unreadKey(question));
  if (question.value === null) read = t("teach.unread", { status });
  else if (question.disputed) read = t("teach.disputed", { value: question.value, pct });
  else if (question.doubted) read = t("teach.doubted", { value: question.value, pct });
  else if (question.looked_again) {
    const first = question.first === null || question.first === undefined ? "?" : question.first;
    read = t("teach.looked_again", { value: question.value, pct, first });
  }
  $("teach-read").textContent = read;
  dialog.returnValue = "";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue), { once: true });
    dialog.showModal();
  });
}

// A photo in which the camera missed dice (the players typed that throw): a tap on the photo
// says where one is, a face what it shows; the table outlines the die it finds under the tap.
function askPlace(question, i, n, src) {
  const dialog = $("place-dialog");
  $("place-progress").textContent = t("teach.progress", { i, n });
  $("place-ask").textContent = t("teach.missed", { n: question.missing });
  const photo = $("place-image");
  const mark = $("place-mark");
  const faces = [...$("place-faces").querySelectorAll("button")];
  photo.src = src;
  mark.hidden = true;
  // Small dice are hard to hit on a phone: the photo can be shown larger and scrolled.
  const frame = $("place-photo");
  const zoom = $("place-zoom");
  frame.classList.remove("zoomed");
  zoom.textContent = t("teach.zoom");
  zoom.onclick = () => {
    const zoomed = frame.classList.toggle("zoomed");
    zoom.textContent = t(zoomed ? "teach.unzoom" : "teach.zoom");
    if (zoomed && point) {
      const scroll = frame.parentElement;
      scroll.scrollLeft = point.x * frame.clientWidth - scroll.clientWidth / 2;
      scroll.scrollTop = point.y * frame.clientHeight - scroll.clientHeight / 2;
    }
  };
  faces.forEach((b) => { b.disabled = true; });
  let point = null;
  photo.onclick = (event) => {
    const r = photo.getBoundingClientRect();
    if (!r.width || !r.height) return;
    const x = Math.min(Math.max((event.clientX - r.left) / r.width, 0), 1);
    const y = Math.min(Math.max((event.clientY - r.top) / r.height, 0), 1);
    point = { x, y };
    mark.style.left = `${x * 100}%`;
    mark.style.top = `${y * 100}%`;
    mark.hidden = false;
    faces.forEach((b) => { b.disabled = false; });
  };
  dialog.returnValue = "";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => {
      const value = dialog.returnValue;
      resolve(/^[1-6]$/.test(value) && point ? { ...point, value: Number(value) } : value);
    }, { once: true });
    dialog.showModal();
  });
}

async function teach() {
  if (teaching) return;
  teaching = true;
  let answered = 0;
  try {
    const sheet = await get("/api/teach?limit=200");
    if (!sheet || !sheet.count) {
      toast(t("teach.nothing"), "ok");
      return;
    }
    const questions = sheet.questions;
    for (let i = 0; i < questions.length; i++) {
      const q = questions[i];
      if (q.missing > 0) {
        const src = await image(`/api/teach/${q.reading}/photo.jpg`);
        if (!src) return;
        const answer = await askPlace(q, i + 1, questions.length, src);
        URL.revokeObjectURL(src);
        if (answer === "") return;
        if (answer === "skip") continue;
        // Off the tray or out of view: the photo lacks that label no more.
        const done = answer === "absent"
          ? await post("/api/teach/absent", { reading: q.reading })
          : await post("/api/teach/place", { reading: q.reading, ...answer });
        if (done) {
          answered += 1;
          q.missing -= 1;
        }
        // Asked again while dice are missing, and after a tap where no die could be outlined.
        if (q.missing > 0) i--;
        continue;
      }
      const src = await image(`/api/teach/${q.reading}/${q.die}.jpg`);
      if (!src) return;
      const answer = await askTeach(q, i + 1, questions.length, src);
      URL.revokeObjectURL(src);
      if (answer === "") return;
      if (answer === "skip") continue;
      // "Can't tell" (a die blurred or lit past reading): asked no more, and nothing learnt of it.
      const value = answer === "unclear" ? null : Number(answer);
      const done = await post("/api/teach", { reading: q.reading, die: q.die, value });
      if (!done) return;
      if (value !== null) answered += 1;  // thanked for what teaches
    }
  } finally {
    teaching = false;
    if (answered) toast(t("teach.thanks", { n: answered }), "ok");
    recountTeach();
  }
}

// Typing a throw: the faces tapped one die after another, sent as {"roll": [...]} once all n are in.
let typed = { n: 0, dice: [] };

function showTyped() {
  const { n, dice } = typed;
  $("roll-title").textContent = t("roll.title", { n });
  $("roll-picked").replaceChildren(
    // A die tapped is taken out: one misread of a throw filled in is two taps to put right.
    h("span", { class: "dice", id: "roll-dice" }, ...dice.map((v, i) => h("button", {
      type: "button", class: "die", "aria-label": t("roll.take_out", { n: i + 1, value: v }),
      onclick: () => { typed.dice.splice(i, 1); showTyped(); } }, h("span", { class: "pips" }, v)))),
    h("span", { class: "muted", id: "roll-count" }, t("roll.count", { i: dice.length, n })));
  $("roll-ok").disabled = dice.length !== n;
  $("roll-back").disabled = dice.length === 0;
  for (const b of $("roll-faces").querySelectorAll("button")) b.disabled = dice.length >= n;
}

// ``done`` takes the throw typed: by default it is played; from the history, it fixes a step.
// ``start``: the dice filled in already (the throw to fix, the dice the camera did read).
function typeRoll(n, done = (dice) => act({ roll: dice }), start = []) {
  const dialog = $("roll-dialog");
  typed = { n, dice: start.slice(0, n) };
  showTyped();
  dialog.returnValue = "";
  dialog.addEventListener("close", () => {
    if (dialog.returnValue === "ok" && typed.dice.length === n) done(typed.dice);
  }, { once: true });
  dialog.showModal();
}

function bindRollDialog() {
  for (const b of $("roll-faces").querySelectorAll("button")) {
    b.addEventListener("click", () => {
      if (typed.dice.length < typed.n) typed.dice.push(Number(b.value));
      showTyped();
    });
  }
  $("roll-back").addEventListener("click", () => { typed.dice.pop(); showTyped(); });
}

// ``fix``: what a face chosen does instead of correcting the last reading (a die of an earlier
// throw's photo); "no die there" is then not offered: that throw is typed again.
function correctDie(index, shown, fix = null) {
  const dialog = $("die-dialog");
  $("die-title").textContent = t("correct.title", { n: index + 1, value: shown });
  $("die-no-die").hidden = fix !== null;
  dialog.returnValue = "";
  dialog.addEventListener("close", async () => {
    if (dialog.returnValue === "") return; // cancelled
    const value = Number(dialog.returnValue); // 0: no die there
    if (fix !== null) {
      if (value >= 1 && value <= 6) await fix(value);
      return;
    }
    if (value >= 0 && value <= 6) {
      const state = await post("/api/correct", { die: index, value });
      if (state && state.players) accept(state);
      else if (state) refresh();
    }
  }, { once: true });
  dialog.showModal();
}

/** The dice the game has on the table now, and those set aside or held. */
function tableDice(state) {
  if (state.turn) return { dice: state.turn.dice || [], kept: (state.turn.kept || []).flat() };
  if (state.game === "general" || state.game === "drapky") {
    return { dice: state.dice || [], kept: state.kept || [] };
  }
  return { dice: state.last_roll || [], kept: state.set_aside || [] };
}

function turnPanel(state) {
  const { dice, kept } = tableDice(state);
  const keeps = (state.legal || []).filter((a) => a.keep !== undefined);
  // A pick belongs to one throw: an update that leaves the dice on offer as they were (a photo
  // kept, the camera's status, another phone's view) keeps it; an action, another game or
  // another player to move starts afresh.
  const table = state.table || {};
  const key = `${table.game_id ?? ""}:${state.actions ?? ""}:${state.to_move ?? ""}:${dice.join()}`;
  if (state.game === "triangles") return null;
  if (key !== diceKey) {
    diceKey = key;
    selected = new Set();
  }
  const panel = h("div", { class: "panel", id: "turn-box" }, h("h3", {}, t("dice.on_table")));
  const facts = [];
  const total = state.turn ? state.turn.total : state.turn_total;
  if (total !== undefined) facts.push(h("span", { class: "total" }, t("turn.total", { n: total })));
  if (state.turn && state.turn.dice_left !== undefined) facts.push(t("turn.dice_left", { n: state.turn.dice_left }));
  if (state.throws_left !== undefined) facts.push(t("turn.throws_left", { n: state.throws_left }));
  if (state.dice_in_play !== undefined) facts.push(t("turn.dice_in_play", { n: state.dice_in_play }));
  if (state.throws_available !== undefined) {
    facts.push(t("drapky.throws", { used: state.throws_used ?? 0, available: state.throws_available }));
  }
  if (facts.length) panel.append(h("p", { class: "facts" }, ...facts.flatMap((f, i) => (i ? [" · ", f] : [f]))));
  if (dice.length) {
    panel.append(h("div", { class: "dice", id: "table-dice" }, ...dice.map((v, i) => {
      const pickable = keeps.length > 0;
      return h("button", { class: `die${selected.has(i) ? " selected" : ""}`, type: "button", dataset: { focus: `die-${i}` },
        "aria-pressed": pickable ? String(selected.has(i)) : null, disabled: !pickable,
        "aria-label": t("dice.die_label", { n: i + 1, value: v }),
        onclick: () => { selected.has(i) ? selected.delete(i) : selected.add(i); renderBoard(); } },
      h("span", { class: "pips" }, v));
    })));
  }
  if (kept.length) panel.append(h("p", { class: "kept" }, t("dice.kept", { dice: kept.join(" ") })));
  if (state.best && state.best.points !== undefined && state.phase === "decide") {
    panel.append(h("p", { class: "muted" }, t("turn.best", { n: state.best.points,
      dice: (state.best.scoring || []).join(" ") })));
  }
  // The engine's event (a throw, a bank, a bolt, the barrel, a break) in the page's language;
  // the engine's English for an event the page has no words for.
  const event = describeEvent(state.event) || state.last_event;
  if (event) panel.append(h("p", { class: "event" }, event));
  return panel.childElementCount > 1 ? panel : null;
}

/** A button; ``key`` names it for keeping the keyboard focus on it across re-renders. */
function button(label, onclick, cls = "", key = null) {
  return h("button", { type: "button", class: cls, onclick, dataset: key ? { focus: key } : null }, label);
}

// The problems of a throw the camera read but the game could not take: too few or too many
// dice, some unreadable, or faces the rules refuse. The dice it read surely start the typing.
const THROW_PROBLEMS = [
  "roll_zone_count", "roll_zone_missing", "doubtful", "covered", "out_of_view", "dice_read",
];

function readOfThrow(state) {
  const table = state.table || {};
  if (!THROW_PROBLEMS.includes(table.problem_code)) return [];
  return (table.dice_read || [])
    .filter((d) => d.status === "ok" && Number.isInteger(d.value))
    .map((d) => d.value);
}

function actionsPanel(state) {
  const legal = state.legal || [];
  const has = (k) => legal.find((a) => a[k] !== undefined);
  const bar = h("div", { class: "actions", id: "actions" });
  const own = ["bank", "stop", "pass"]; // these have their own buttons below
  if (state.suggestion && !own.some((k) => k in state.suggestion)) {
    bar.append(button(t("btn.suggestion", { action: describeAction(state.suggestion, state.game, "do") }),
      () => act(state.suggestion), "primary suggestion", "suggestion"));
  }
  if (state.roll_size > 0 && !state.finished) {
    // The camera's reading or typed (PROTOCOL): the way on when it misses a die, or has none.
    bar.append(h("button", { type: "button", id: "type-roll",
      onclick: () => typeRoll(state.roll_size, undefined, readOfThrow(state)) },
      t("btn.type_roll", { n: state.roll_size })));
  }
  const keeps = legal.filter((a) => a.keep !== undefined);
  if (keeps.length) {
    const { dice } = tableDice(state);
    const picked = [...selected].map((i) => dice[i]).sort((a, b) => a - b);
    const ok = keeps.some((a) => sameMultiset(a.keep, picked));
    const none = keeps.some((a) => a.keep.length === 0);
    const label = picked.length ? t("btn.keep", { dice: picked.join(" ") })
      : none ? t("btn.keep_none") : t("btn.keep_pick");
    bar.append(h("button", { type: "button", id: "keep", disabled: !ok, onclick: () => act({ keep: picked }),
      title: ok ? null : t("btn.keep_pick") }, label));
  }
  if (has("bank")) {
    const total = state.turn ? state.turn.total : state.turn_total;
    bar.append(button(t("btn.bank", { n: total ?? "" }), () => act({ bank: true }), "bank", "bank"));
  }
  if (state.table && state.table.coach && !state.finished && legal.length) {
    // Only where the player has a choice besides throwing: at a turn's start there is none.
    bar.append(button(t("btn.hint"), () => askHint(state.table.version), "", "hint"));
  }
  if (has("stop")) bar.append(button(t("btn.stop"), () => act({ stop: true }), "", "stop"));
  if (has("pass")) bar.append(button(t("btn.pass"), () => act({ pass: true }), "", "pass"));
  const pairs = legal.filter((a) => a.forbidden);
  if (pairs.length) {
    bar.append(h("p", { class: "label" }, t("zakazana.choose")),
      h("div", { class: "pairs" }, ...pairs.map((a) => button(a.forbidden.join(" + "), () => act(a), "", `pair-${a.forbidden.join("-")}`))));
  }
  if (revealing(state)) {
    const mover = state.players.findIndex((p) => p.name === state.to_move);
    bar.append(h("div", { class: "panel reveal", id: "reveal" },
      h("p", { class: "warn" }, state.ended_by ? t("tri.end_last_stone", { name: state.ended_by })
        : t("tri.end_no_fit")),
      h("p", {}, t("tri.reveal_hint", { count: (state.to_reveal || [])[mover] ?? "" }))));
  }
  if (has("draw")) {
    bar.append(revealing(state)
      ? drawPicker(t("tri.reveal_label", { player: state.to_move }), t("tri.reveal_button"))
      : drawPicker(t("tri.draw_label"), t("btn.draw")));
  }
  const places = legal.filter((a) => a.place);
  if (places.length) bar.append(placeList(state, places));
  bar.append(h("div", { class: "row undo-row" },
    h("button", { type: "button", id: "undo", disabled: !state.can_undo, onclick: () => send("/api/undo") }, `↶ ${t("btn.undo")}`),
    h("button", { type: "button", id: "redo", disabled: !state.can_redo, onclick: () => send("/api/redo") }, `↷ ${t("btn.redo")}`)));
  return bar;
}

function drawPicker(label, go) {
  const pick = (k) => h("select", { id: `draw-${k}`, "aria-label": t("tri.side", { n: k + 1 }) },
    ...[0, 1, 2, 3, 4, 5].map((v) => h("option", { value: v }, v)));
  const selects = [0, 1, 2].map(pick);
  return h("form", { class: "draw", onsubmit: (e) => {
    e.preventDefault();
    act({ draw: selects.map((x) => x.value).join("") });
  } }, h("span", { class: "label" }, label), ...selects,
  h("button", { class: "primary", id: "draw-go" }, go));
}

function placeList(state, places) {
  // The server gives every placement the points the engine will write: below the best or on the
  // rim a placement costs points, which the page must never guess (RULES §5.4).
  const points = new Map((state.placements || []).map((p) => [`${p.cell}/${p.rotation}`, p.points]));
  let list = places.map((a) => ({ a, v: points.get(`${a.place.cell}/${a.place.rotation}`) }))
    .filter((x) => x.v !== undefined)
    .sort((x, y) => y.v - x.v);
  const best = list.length ? list[0].v : 0;
  if (cellFilter) list = list.filter((x) => x.a.place.cell === cellFilter);
  const shown = showAllPlacements || cellFilter ? list : list.slice(0, 4);
  const box = h("div", { class: "places" }, h("p", { class: "label" },
    cellFilter ? t("tri.at_cell", { cell: cellFilter }) : t("tri.place_label")),
  ...shown.map(({ a, v }) => button(t("tri.place_button", { cell: a.place.cell, rotation: a.place.rotation, value: v }),
    () => act(a), v === best ? "primary" : "", `place-${a.place.cell}-${a.place.rotation}`)));
  if (cellFilter) box.append(button(t("tri.all_cells"), () => { cellFilter = null; renderBoard(); }, "link", "all-cells"));
  else if (list.length > shown.length) {
    box.append(button(t("tri.show_all", { n: list.length }), () => { showAllPlacements = true; renderBoard(); }, "link", "show-all"));
  }
  return box;
}

const ui = { pickCell: (cell) => { cellFilter = cell; renderBoard(); } };

/** A selector for the focused control of the scoreboard that finds it again after a re-render
 * (its id or data-focus key); "" when focus is there on something unnamed, null when elsewhere. */
function focusedControl() {
  const el = document.activeElement;
  if (!el || el === document.body || !$("view-board").contains(el)) return null;
  if (el.id) return `#${CSS.escape(el.id)}`;
  const key = el.dataset ? el.dataset.focus : undefined;
  return key ? `[data-focus="${CSS.escape(key)}"]` : "";
}

// Every update rebuilds the scoreboard: a keyboard or screen-reader user would be thrown back to
// the top of the page after each tap, or whenever another phone changes the game.
function restoreFocus(selector) {
  if (selector === null) return;
  const el = selector ? $("view-board").querySelector(selector) : null;
  if (el && !el.disabled) el.focus();
  else $("status").focus(); // the control is gone: the line saying what happens now
}

function renderBoard() {
  const state = current;
  const body = $("board-body");
  if (!state) return;
  const focused = focusedControl();
  try {
    fillBoard(state, body);
  } finally {
    restoreFocus(focused);
  }
}

/** Dice set aside as the others were thrown, unseen by the camera: one tap on the set-aside
 * enters it and the throw the camera read. */
function asideChoices(state) {
  const { keeps, dice } = state.table.problem_params;
  return h("div", { class: "actions", id: "aside-choices" }, ...keeps.map((keep, i) =>
    button(describeAction({ keep }, state.game, "do"), async () => {
      if (await act({ keep })) await act({ roll: dice });
    }, "primary", `aside-${i}`)));
}

function fillBoard(state, body) {
  document.title = state.game ? `${gameName(state.game)} · pipcam` : "pipcam";
  $("title").textContent = state.game ? gameName(state.game) : "pipcam";
  const problem = state.table && state.table.problem
    && wordRefusal(state.table.problem_code, state.table.problem_params, state.table.problem);
  const top = [];
  if (problem) top.push(h("div", { class: "problem", role: "alert", id: "problem" }, problem));
  if (problem && state.table.problem_code === "which_aside") top.push(asideChoices(state));
  const camera = state.table && state.table.camera;
  if (camera && camera !== "ok" && camera !== "none") {
    top.push(h("p", { class: "problem soft" }, t("camera.problem", { status: t(`camera.${camera}`) })));
  }
  // What the camera asks of the table's owner: more light, less, or a new calibration.
  for (const notice of (state.table && state.table.camera_notices) || []) {
    top.push(h("p", { class: "problem soft camera-notice" }, t(`camera.notice.${notice}`)));
  }
  $("board-top").replaceChildren(...top);
  // #status stays in the page (a live region announces changes to its text, not a new node).
  const status = statusLine(state);
  if ($("status").textContent !== status) $("status").textContent = status;
  const parts = [];
  if (!state.game) {
    parts.push(h("p", {}, h("a", { href: "#new", class: "button primary" }, t("nav.new"))));
    body.replaceChildren(...parts);
    return;
  }
  // A tapped cell and "show all" belong to one stone in hand: the next stone (the next
  // player's, or after an undo) starts from the best placements of the whole board again.
  const key = `${state.table ? state.table.game_id : ""}:${(state.board || []).length}:${state.to_move}:${state.hand}`;
  if (key !== placeKey) {
    placeKey = key;
    cellFilter = null;
    showAllPlacements = false;
  }
  // Why the game ended, unless simply its last round was played.
  const ending = state.finished ? wordEnding(state.ending) : null;
  if (ending) parts.push(h("p", { class: "ending", id: "ending" }, ending));
  parts.push(playersList(state), diceRead(state));
  if (!parts.at(-1)) parts.pop();
  if (!state.finished) {
    const turn = turnPanel(state);
    if (turn) parts.push(turn);
  }
  parts.push(actionsPanel(state));
  const advice = hintPanel(state);
  if (advice) parts.push(advice);
  parts.push(h("div", { class: "game-sheet", id: "sheet" }, ...gameSheet(state, act, ui)));
  body.replaceChildren(...parts);
}

// -- the coach (pipcam run --coach) ------------------------------------------------------------

/** Ask the coach about the game as this phone shows it (version); solving may take seconds. */
async function askHint(version) {
  hint = { version, loading: true };
  renderBoard();
  const r = await ask(`/api/advice?seen=${version}`);
  if (!hint || hint.version !== version) return; // the game moved on meanwhile
  if (r && r.ok) hint = { version, advice: r.data };
  else hint = { version, error: r ? refusalText(r.data, r.status) : t("error.network") };
  renderBoard();
}

function choiceWords(choice, game) {
  if (!choice.actions.length) return t("hint.throw");
  const words = describeAction(choice.actions[0], game, "do");
  return choice.then ? `${words}, ${t(`hint.then_${choice.then}`)}` : words;
}

const points = (v) => new Intl.NumberFormat(language(), { minimumFractionDigits: 1,
  maximumFractionDigits: 1 }).format(v);

/** The advice asked for, while the game is as it was when asked (any change takes it away). */
function hintPanel(state) {
  if (!hint || !state.table || hint.version !== state.table.version || state.finished) return null;
  const box = h("section", { class: "coach", id: "coach", "aria-live": "polite" });
  if (hint.loading || hint.error) {
    box.append(hint.loading ? h("p", { class: "muted" }, t("hint.thinking"))
      : h("p", { class: "problem soft" }, hint.error));
    return box;
  }
  const { advice } = hint;
  const best = advice.advice;
  const game = state.game;
  box.append(h("p", { class: "best" }, best.wins
    ? t("hint.wins", { action: choiceWords(best, game) })
    : t("hint.best", { action: choiceWords(best, game), value: points(best.value) })));
  // Ways that come to the same (keep what the bank sets aside, then bank) are this choice.
  if (best.same && best.same.length) {
    box.append(h("p", { class: "muted", id: "hint-same" },
      t("hint.same", { actions: best.same.map((c) => choiceWords(c, game)).join(", ") })));
  }
  const others = advice.choices.slice(1, 4);
  if (others.length) {
    box.append(h("ul", { class: "others" }, ...others.map((c) => h("li", {}, t("hint.other", {
      action: choiceWords(c, game), value: points(c.value),
      behind: c.wins ? t("hint.wins_too") : best.wins ? t("hint.no_win")
        : `−${points(best.value - c.value)}` })))));
  }
  box.append(h("p", { class: "muted" }, t(game === "general" ? "hint.about_general" : "hint.about_turn")));
  if (best.actions.length) {
    // "Keep 1 5, then bank": both, as advised; a throw after a keep is the player's own.
    const doIt = async () => {
      const state = await act(best.actions[0]);
      if (state && best.then === "bank") await act({ bank: true });
    };
    box.append(button(t("hint.do"), doIt, "", "hint-do"));
  }
  return box;
}

// -- history and statistics ---------------------------------------------------------------------

function visibleView() {
  const v = location.hash.slice(1);
  return VIEWS.includes(v) ? v : "board";
}

let sideTimer = 0;
function refreshSide() {
  const view = visibleView();
  if (view !== "history" && view !== "stats") return;
  clearTimeout(sideTimer);
  sideTimer = setTimeout(() => (view === "history" ? showHistory() : showStats()), 150);
}

async function showHistory() {
  const box = $("history-body");
  const data = await get("/api/history");
  if (!data) {
    box.replaceChildren(h("p", { class: "muted" }, t("history.none")));
    return;
  }
  const game = current && current.game;
  // A throw misread or typed wrong, seen turns later, is fixed where it is: the later steps
  // are taken again (the table refuses, saying which, when one no longer fits).
  // The forbidden numbers of Na zakázaná čísla are a throw of two dice, typed again the same way.
  const fix = (e) => {
    const key = Array.isArray(e.action.roll) ? "roll" : "forbidden";
    return h("button", {
      type: "button", class: "fix", dataset: { step: e.index + 1 },
      "aria-label": t("history.fix_label", { n: e.index + 1 }),
      onclick: () => typeRoll(e.action[key].length,
        (dice) => send(`/api/history/${e.index}`, { [key]: dice }, "PUT").then(showHistory),
        e.action[key]),
    }, t("history.fix"));
  };
  // A figure written into the wrong category, or the wrong dice set aside: chosen from what
  // else that step could have been.
  const choose = (e) => h("button", {
    type: "button", class: "fix", dataset: { step: e.index + 1 },
    "aria-label": t("history.fix_label", { n: e.index + 1 }),
    onclick: () => chooseInstead(e, game),
  }, t("history.fix"));
  const retyped = (a) => Array.isArray(a.roll) || Array.isArray(a.forbidden);
  const fixable = (a) => (retyped(a) ? fix : CHOSEN.some((k) => k in a) ? choose : null);
  // A step the camera read: its photo settles "what was thrown there?" (the last throw's is
  // at hand; earlier ones when the table keeps photos).
  const keeps = Boolean(current && current.table && current.table.photos !== null
    && current.table.photos !== undefined);
  const last = Math.max(0, ...data.entries.map((e) => e.reading || 0));
  const photoOf = (e) => (e.reading && (keeps || e.reading === last) ? h("button", {
    type: "button", class: "photo", dataset: { reading: e.reading },
    "aria-label": t("history.photo_label", { n: e.index + 1 }),
    onclick: () => showPhoto(e.reading, e.action && Array.isArray(e.action.roll) ? e.index : null),
  }, t("history.photo")) : null);
  const items = data.entries.map((e) => h("li", { value: e.index + 1 },
    e.player ? h("strong", {}, `${e.player}: `) : null,
    e.action ? describeAction(e.action, game) : e.text,
    e.action && fixable(e.action) ? fixable(e.action)(e) : null, photoOf(e)));
  box.replaceChildren(
    h("div", { class: "row" },
      h("button", { type: "button", id: "history-undo", disabled: !data.can_undo,
        onclick: () => send("/api/undo") }, `↶ ${t("btn.undo")}`),
      h("button", { type: "button", id: "history-redo", disabled: !data.can_redo,
        onclick: () => send("/api/redo") }, `↷ ${t("btn.redo")}`)),
    items.length ? h("ol", { class: "history", id: "history-list" }, ...items.reverse())
      : h("p", { class: "muted" }, t("history.empty")));
  await showEarlier();
}

// The steps fixed by choosing (GET /api/history/{index}/choices): a figure or a stop, a set-aside.
const CHOSEN = ["score", "stop", "keep"];

async function chooseInstead(entry, game) {
  const offered = await get(`/api/history/${entry.index}/choices`);
  if (!offered) return;
  if (!offered.choices.length) {
    toast(t("history.no_choices", { n: entry.index + 1 }), "error");
    return;
  }
  const dialog = $("choice-dialog");
  $("choice-title").textContent = t("history.fix_label", { n: entry.index + 1 });
  $("choice-was").textContent = t("history.choose_was", { action: describeAction(offered.action, game) });
  const words = (c) => [describeAction(c.action, game, "do"),
    c.points === null ? null : t("history.points", { n: c.points })];
  $("choice-list").replaceChildren(...offered.choices.map((c, i) => h("button", {
    value: String(i), "aria-label": words(c).filter((w) => w !== null).join(", ") },
  h("span", {}, words(c)[0]), c.points === null ? null : h("span", { class: "muted" }, words(c)[1]))));
  // Trading places concerns figures; a set-aside has only the later steps taken again.
  $("choice-hint").hidden = !("score" in offered.action || "stop" in offered.action);
  dialog.returnValue = "";
  dialog.addEventListener("close", async () => {
    const picked = offered.choices[Number(dialog.returnValue)];
    if (dialog.returnValue === "" || !picked) return; // cancelled
    await send(`/api/history/${entry.index}`, picked.action, "PUT");
    showHistory();
  }, { once: true });
  dialog.showModal();
}

// The games before this one: a game that ended just before a restart (the next one starts then),
// the last evening's. Newest first, with the scores it stopped at and its transcript.
async function showEarlier() {
  const box = $("earlier-body");
  const games = await get("/api/games");
  if (!games || !games.length) {
    box.replaceChildren();
    return;
  }
  const when = new Intl.DateTimeFormat(language(), { dateStyle: "medium", timeStyle: "short" });
  box.replaceChildren(h("h3", {}, t("earlier.title")), h("ul", { class: "earlier", id: "earlier-list" },
    ...games.map((g) => h("li", { dataset: { id: g.id } },
      h("div", { class: "row earlier-head" },
        h("strong", {}, gameName(g.game)),
        h("span", { class: "muted" }, when.format(new Date(g.started))),
        g.ended ? null : h("span", { class: "tag" }, t("earlier.left"))),
      h("p", { class: "earlier-scores" }, ...g.players.map((p, i) => h("span", {},
        i ? " · " : "", g.winners.includes(p.name) ? `🏆 ${p.name}` : p.name, ` ${p.score}`))),
      wordEnding(g.ending) ? h("p", { class: "earlier-ending muted" }, wordEnding(g.ending)) : null,
      h("a", { href: `/api/games/${g.id}/transcript`, download: `pipcam-game-${g.id}.jsonl` },
        t("earlier.transcript"))))));
}

async function showStats() {
  const box = $("stats-body");
  const data = await get("/api/stats");
  if (!data) {
    box.replaceChildren(h("p", { class: "muted" }, t("stats.none")));
    return;
  }
  const parts = [h("h3", {}, t("stats.scores"))];
  const series = data.series || { players: [], points: [] };
  if (series.points && series.points.length > 1) {
    parts.push(lineChart(series.players, series.points, t("stats.scores")),
      h("ul", { class: "legend" }, ...series.players.map((n, i) => h("li", {},
        h("span", { class: "swatch", style: `background:${COLOURS[i % COLOURS.length]}` }), n))));
  } else {
    parts.push(h("p", { class: "muted" }, t("stats.no_scores")));
  }
  parts.push(h("h3", {}, t("stats.dice")), faceBars(data.faces || {}, t("stats.faces")));
  const p = Number(data.p_value);
  const verdict = t(`verdict.${String(data.verdict).replace(/ /g, "_")}`);
  parts.push(h("p", { class: "verdict", id: "verdict" }, t("stats.summary", {
    n: data.dice_read, chi: Number(data.chi_square || 0).toFixed(2),
    p: Number.isFinite(p) ? p.toFixed(3) : "–" })), h("p", { class: `verdict-words ${data.verdict}` }, verdict));
  box.replaceChildren(...parts);
}

// -- a new game -----------------------------------------------------------------------------------

let setupPlayers = [];

async function showNewGame() {
  if (!catalog) catalog = await get("/api/catalog");
  const box = $("new-body");
  if (!catalog) {
    box.replaceChildren(h("p", { class: "muted" }, t("new.no_catalog")));
    return;
  }
  if (!setupPlayers.length) {
    setupPlayers = current && current.players && current.players.length
      ? current.players.map((p) => p.name) : [t("new.player_n", { n: 1 }), t("new.player_n", { n: 2 })];
  }
  const gameSelect = h("select", { id: "new-game", name: "game" },
    ...catalog.map((g) => h("option", { value: g.id, lang: "" }, g.name)));
  if (current && current.game) gameSelect.value = current.game;
  const optionsBox = h("div", { id: "new-options" });
  const playersBox = h("ol", { id: "new-players", class: "seat-list" });
  const form = h("form", { id: "new-form", class: "setup", onsubmit: (e) => { e.preventDefault(); startGame(); } },
    h("label", { class: "field" }, h("span", {}, t("new.game")), gameSelect),
    h("fieldset", {}, h("legend", {}, t("new.players")), playersBox,
      h("button", { type: "button", id: "add-player", onclick: () => { setupPlayers.push(""); drawPlayers(); } },
        `+ ${t("new.add_player")}`)),
    h("fieldset", {}, h("legend", {}, t("new.options")), optionsBox),
    h("button", { class: "primary wide", id: "start-game" }, t("new.start")));
  box.replaceChildren(form);

  function entry() { return catalog.find((g) => g.id === gameSelect.value) || catalog[0]; }

  function drawPlayers() {
    const g = entry();
    // A game for two or more (Generał, Kymppitonni, 1000, the triangles) gets its seats.
    while (setupPlayers.length < (g.min_players || 1)) {
      setupPlayers.push(t("new.player_n", { n: setupPlayers.length + 1 }));
    }
    playersBox.replaceChildren(...setupPlayers.map((name, i) => h("li", {},
      h("input", { value: name, "aria-label": t("new.player_n", { n: i + 1 }), maxlength: 24, required: true,
        class: "player-name", oninput: (e) => { setupPlayers[i] = e.target.value; } }),
      h("button", { type: "button", "aria-label": t("new.up"), disabled: i === 0,
        onclick: () => { [setupPlayers[i - 1], setupPlayers[i]] = [setupPlayers[i], setupPlayers[i - 1]]; drawPlayers(); } }, "↑"),
      h("button", { type: "button", "aria-label": t("new.down"), disabled: i === setupPlayers.length - 1,
        onclick: () => { [setupPlayers[i + 1], setupPlayers[i]] = [setupPlayers[i], setupPlayers[i + 1]]; drawPlayers(); } }, "↓"),
      h("button", { type: "button", "aria-label": t("new.remove"), disabled: setupPlayers.length <= (g.min_players || 1),
        onclick: () => { setupPlayers.splice(i, 1); drawPlayers(); } }, "✕"))));
    $("add-player").disabled = setupPlayers.length >= (g.max_players || 12);
  }

  function drawOptions() {
    const g = entry();
    const presets = Object.keys(g.presets || {});
    const fields = [];
    if (presets.length) {
      const sel = h("select", { id: "preset", onchange: () => applyPreset(sel.value) },
        h("option", { value: "" }, t("new.no_preset")), ...presets.map((p) => h("option", { value: p }, p)));
      fields.push(h("label", { class: "field" }, h("span", {}, t("new.preset")), sel));
    }
    for (const o of g.options || []) fields.push(optionField(g.id, o));
    optionsBox.replaceChildren(...(fields.length ? fields : [h("p", { class: "muted" }, t("new.no_options"))]));
  }

  function applyPreset(name) {
    const values = name ? { ...(entry().presets[name] || {}) } : {};
    for (const o of entry().options || []) setOption(o, o.name in values ? values[o.name] : o.default);
  }

  gameSelect.addEventListener("change", () => { drawPlayers(); drawOptions(); });
  drawPlayers();
  drawOptions();
}

function optionField(game, o) {
  const id = `opt-${o.name}`;
  const label = optionName(game, o);
  const help = optionHelp(game, o); // the page's words; the engine's doc is English
  let input;
  if (o.kind === "bool") {
    input = h("input", { type: "checkbox", id, checked: Boolean(o.default) });
    return h("label", { class: "field check", title: help }, input, h("span", {}, label), h("small", {}, help));
  }
  if (o.kind === "choice" && o.choices) {
    input = h("select", { id }, ...o.choices.map((c) => h("option", { value: JSON.stringify(c) }, choiceWord(game, o, c))));
    input.value = JSON.stringify(o.default);
  } else if (o.kind === "int" || o.kind === "int_or_off") {
    input = h("input", { type: "text", inputmode: "numeric", id, value: o.default ?? "",
      placeholder: o.kind === "int_or_off" ? t("new.off") : "" });
  } else {
    input = h("input", { type: "text", id, value: o.default ?? "", placeholder: o.default === null ? t("new.off") : "" });
  }
  return h("label", { class: "field", title: help }, h("span", {}, label), input, h("small", {}, help));
}

function setOption(o, value) {
  const el = $(`opt-${o.name}`);
  if (!el) return;
  if (o.kind === "bool") el.checked = Boolean(value);
  else if (o.kind === "choice" && o.choices) el.value = JSON.stringify(value);
  else el.value = value ?? "";
}

function readOption(o) {
  const el = $(`opt-${o.name}`);
  if (o.kind === "bool") return el.checked;
  if (o.kind === "choice" && o.choices) return JSON.parse(el.value);
  const text = el.value.trim();
  if (o.kind === "int" || o.kind === "int_or_off") {
    if (text === "" || text.toLowerCase() === "off") return null;
    return /^-?\d+$/.test(text) ? Number(text) : text; // the server says why a non-number is wrong
  }
  return text === "" ? null : text;
}

async function startGame() {
  const game = $("new-game").value;
  const g = catalog.find((x) => x.id === game);
  const preset = $("preset") ? $("preset").value : "";
  const base = preset ? { ...(g.presets[preset] || {}) } : {};
  const options = preset ? { preset } : {};
  for (const o of g.options || []) {
    const value = readOption(o);
    const expected = o.name in base ? base[o.name] : o.default;
    if (JSON.stringify(value) !== JSON.stringify(expected)) options[o.name] = value;
  }
  const players = setupPlayers.map((n) => n.trim()).filter(Boolean);
  // A game under way is given up by a new one: asked first, as the table's button asks for a
  // second hold.
  if (current && current.game && !current.finished && current.actions > 0
      && !window.confirm(t("new.abandon", { game: gameName(current.game) }))) return;
  const state = await post("/api/games", { game, players, options });
  if (state) {
    accept(state, { force: true });
    toast(t("new.started", { game: gameName(game) }), "ok");
    location.hash = "#board";
  }
}

// -- the shell ------------------------------------------------------------------------------------

function showView() {
  const view = visibleView();
  for (const v of VIEWS) {
    $(`view-${v}`).hidden = v !== view;
    const tab = $(`tab-${v}`);
    if (v === view) tab.setAttribute("aria-current", "page");
    else tab.removeAttribute("aria-current");
  }
  if (view === "history") showHistory();
  if (view === "stats") showStats();
  if (view === "new") showNewGame();
}

async function main() {
  const select = $("lang");
  select.replaceChildren(...Object.entries(LANGUAGES).map(([code, name]) => h("option", { value: code, lang: code }, name)));
  await setLanguage(preferred());
  select.value = language();
  select.addEventListener("change", async () => {
    await setLanguage(select.value, { remember: true });
    setConn($("conn").dataset.state || "connecting");
    renderBoard();
    showView();
  });
  setConn("connecting");
  bindRollDialog();
  window.addEventListener("hashchange", showView);
  get("/api/catalog").then((c) => { if (c) { catalog = c; renderBoard(); } });
  showView();
  await refresh();
  connect();
}

main();
