// Game words shared by the views: category and figure names, actions as short sentences.
import { has, t as tr, tOr } from "./i18n.js";

export const GENERAL_CATEGORIES = ["ones", "twos", "threes", "fours", "fives", "sixes",
  "three_of_a_kind", "four_of_a_kind", "full_house", "small_straight", "large_straight",
  "general", "chance"];
export const DRAPKY_FIGURES = ["ones", "twos", "threes", "fours", "fives", "sixes",
  "two_plus_three", "three_pairs", "two_triples", "pyramid", "poker", "hiroshima", "general",
  "straight"];

/** Game names in their own language, for when the catalog cannot be had. */
export const NATIVE_NAMES = {
  general: "Generał", kymppitonni: "Kymppitonni", thousand: "Тысяча", triangles: "Driehoeken",
  "jednicky-a-petky": "Jedničky a pětky", "sest-kostek": "Šest kostek", drapky: "Drápky",
  sekvence: "Sekvence", "zakazana-cisla": "Na zakázaná čísla",
};

/** A category (Generał) or figure (Drápky) in the page's language. */
export function categoryName(game, id) {
  return game === "drapky" ? tOr(`fig.${id}`, id) : tOr(`cat.${id}`, id);
}

const dice = (list) => list.join(" ");

/** One action object of PROTOCOL.md as a short phrase: what was done ("act"), or to do ("do"). */
export function describeAction(action, game, mood = "act") {
  const t = (key, vars) => tr(key.replace(/^act\./, `${mood}.`), vars);
  const [key, value] = Object.entries(action)[0] || ["?", null];
  switch (key) {
    case "roll": return t("act.roll", { dice: dice(value) });
    case "keep": return value.length ? t("act.keep", { dice: dice(value) }) : t("act.keep_none");
    case "bank": return t("act.bank");
    case "stop": return t("act.stop");
    case "pass": return t("act.pass");
    case "score": {
      const name = categoryName(game, value);
      return action.column ? t("act.score_column", { name, column: action.column + 1 })
        : t("act.score", { name });
    }
    case "forbidden": return t("act.forbidden", { a: value[0], b: value[1] });
    case "draw": return t("act.draw", { stone: value });
    case "place": return t("act.place", { stone: value.stone, cell: value.cell,
      rotation: value.rotation });
    default: return `${key} ${JSON.stringify(value)}`;
  }
}

/** The engine's last event (state.event: a throw, a set-aside, a bust, a bank, with the game's
 * notes: a bolt, the barrel, a break) as a sentence in the page's language; null for an event it
 * does not name, whose English last_event is shown. */
export function describeEvent(event) {
  if (!event || typeof event !== "object") return null;
  const said = eventWords(event);
  // A game's own additions (a bolt, the barrel, a break), each in words; one the page cannot
  // word leaves the whole event to the engine's English.
  const notes = (event.notes || []).map((note) => {
    const key = `ev.note.${note.kind}`;
    return has(key) ? tr(key, note) : null;
  });
  if (said === null || notes.includes(null)) return null;
  return [said, ...notes].join("; ");
}

function eventWords(event) {
  const { player } = event;
  const faces = dice(event.dice || []);
  switch (event.kind) {
    case "roll": return tr("ev.roll", { player, dice: faces });
    case "keep": {
      const rest = event.left ? tr("ev.left", { n: event.left }) : tr("ev.hot", { n: event.again });
      return tr("ev.keep", { player, dice: faces, points: event.points, total: event.total, rest });
    }
    case "bust": return event.lost ? tr("ev.bust_lost", { player, dice: faces, lost: event.lost })
      : tr("ev.bust", { player, dice: faces });
    case "bank": return tr("ev.bank", { player, points: event.points });
    case "pass": return tr(event.barrel ? "ev.pass_barrel" : "ev.pass", { player,
      points: event.points, before: event.before, after: event.after, barrel: event.barrel });
    case "pass_over": return tr("ev.pass_over", { player, points: event.points, after: event.after,
      target: event.target });
    case "pass_wins": return tr("ev.pass_wins", { player, points: event.points, after: event.after });
    case "five_of_a_kind": return tr("ev.five_of_a_kind", { player, face: (event.dice || [])[0] });
    case "four_twos": return event.lost ? tr("ev.four_twos_lost", { player, lost: event.lost })
      : tr("ev.four_twos", { player });
    case "four_twos_banked": return tr("ev.four_twos_banked", { player, points: event.points });
    default: return null;
  }
}

/** A refusal or problem the server sent as data (code and params) in the page's language; the
 * server's English detail for a code the page has no words for. Dice lists are spaced out, other
 * lists (stones) are listed with commas; a param that is itself a refusal ({detail, code, params}:
 * why the dice read were refused) is worded the same way, and one that is an action (what was
 * refused) with describeAction. Some params are worded by their name (see NAMED). */
export function wordRefusal(code, params, detail) {
  const key = `refusal.${code}`;
  if (!code || !has(key)) return detail;
  params = params || {};
  const vars = {};
  for (const [name, value] of Object.entries(params)) {
    if (name in NAMED) vars[name] = NAMED[name](value, params);
    else if (Array.isArray(value)) {
      vars[name] = value.every((v) => typeof v === "number") ? dice(value) : value.join(", ");
    } else if (value && typeof value === "object") {
      vars[name] = "code" in value ? wordRefusal(value.code, value.params, value.detail ?? "")
        : describeAction(value, params.game, "do");
    } else vars[name] = value;
  }
  // A Drápky figure's refusal says what the figure needs: the page has it in words per figure.
  if (typeof params.figure === "string") vars.needs = tOr(`need.${params.figure}`, params.figure);
  return tr(key, vars);
}

/** Params worded by their name: the boxes of a Generał sheet, a Drápky figure, the side of a
 * triangle's cell (the engine's "top", "bottom", "left", "right" as a whole phrase, "left side",
 * so each language makes its words agree), the actions allowed now, the field of a request
 * the server could not take, and a new game's options (named as the form names them) and what
 * one takes. */
const NAMED = {
  box: (id) => categoryName("general", id),
  boxes: (ids) => ids.map((id) => categoryName("general", id)).join(", "),
  figure: (id) => categoryName("drapky", id),
  side: (id) => tOr(`tri.side_${id}`, id),
  allowed: (actions, params) => allowedWords(actions, params.roll, params.game),
  choices: (outs, params) => [...outs.map(dice), ...(params.more ? ["…"] : [])].join(" / "),
  field: (path) => fieldWords(path),
  option: (name, params) => optionName(params.game, { name }),
  options: (names, params) => names.map((name) => optionName(params.game, { name })).join(", "),
  takes: (kinds, params) => orList(kinds.map((k) => ("choice" in k
    ? choiceWord(params.game, { name: params.option }, k.choice) : tr(`takes.${k.kind}`)))),
};

/** Alternatives as a list ending in the page's "or": "forced, free or off". */
function orList(words) {
  return words.length < 2 ? words.join("") : `${words.slice(0, -1).join(", ")}${tr("takes.or")}${words.at(-1)}`;
}

/** A field of a request as the server names it (die, seen, players.0) in the page's words: an
 * item of a list says which one ("name of player 1"); a field the page has no words for is
 * named as sent. */
function fieldWords(path) {
  const [name, index, ...rest] = String(path).split(".");
  if (/^\d+$/.test(index || "") && !rest.length && has(`field.${name}_item`)) {
    return tr(`field.${name}_item`, { i: Number(index) + 1 });
  }
  return index === undefined ? tOr(`field.${name}`, name) : String(path);
}

const MOST = 12;

/** The actions allowed now, as the engine's allowed_text gives them: the throw first, then each
 * kind of action, a long list of one kind cut short. */
function allowedWords(actions, roll, game) {
  const words = roll ? [tr("do.roll_n", { n: roll })] : [];
  const byKind = new Map();
  for (const action of actions || []) {
    const kind = Object.keys(action)[0];
    if (!byKind.has(kind)) byKind.set(kind, []);
    byKind.get(kind).push(describeAction(action, game, "do"));
  }
  for (const said of byKind.values()) {
    if (said.length > MOST) {
      words.push(tr("allowed.more", { shown: said.slice(0, MOST / 2).join(", "), n: said.length }));
    } else words.push(...said);
  }
  return words.join(", ");
}

/** What a game's option does (its help on the new-game form) in the page's language; the
 * engine's English doc for an option the page has no words for. */
export function optionHelp(game, option) {
  return tOr(`opt.${game}.${option.name}`, option.doc);
}

/** An option's name on the new-game form in the page's language; the engine's name, spaced out,
 * for one the page has no words for. */
export function optionName(game, option) {
  return tOr(`opt_name.${game}.${option.name}`, option.name.replace(/_/g, " "));
}

/** One choice of an option (general_joker "forced") in the page's language; a number, or a
 * choice the page has no words for, as the engine writes it. The value sent stays the engine's. */
export function choiceWord(game, option, value) {
  return typeof value === "string" ? tOr(`opt_choice.${game}.${option.name}.${value}`, value)
    : String(value);
}

/** Why a game ended (state.ending, or an earlier game's) in the page's language; null when it
 * is simply that the last round was played, or for a game that has not ended. The engine's
 * English for a code the page has no words for. */
export function wordEnding(ending) {
  if (!ending || ending.code === "last_round") return null;
  const key = `end.${ending.code}`;
  return has(key) ? tr(key, ending.params || {}) : ending.reason;
}

export const sameMultiset = (a, b) =>
  a.length === b.length && [...a].sort().join() === [...b].sort().join();
