// The page's languages: English, Polish, Finnish, Dutch, Czech and Russian, picked from the
// browser and remembered. Game names are never translated (the catalog gives them in their own
// language).
export const LANGUAGES = { en: "English", pl: "Polski", fi: "Suomi", nl: "Nederlands", cs: "Čeština",
  ru: "Русский" };
const KEY = "pipcam.lang";
let strings = {};
let fallback = {};
let current = "en";

async function load(lang) {
  const r = await fetch(`/static/i18n/${lang}.json`);
  return r.ok ? r.json() : {};
}

/** The language to start with: the remembered one, else the browser's first we have. */
export function preferred() {
  const saved = localStorage.getItem(KEY);
  if (saved && saved in LANGUAGES) return saved;
  for (const tag of navigator.languages || [navigator.language || "en"]) {
    const base = tag.toLowerCase().split("-")[0];
    if (base in LANGUAGES) return base;
  }
  return "en";
}

export async function setLanguage(lang, { remember = false } = {}) {
  if (!(lang in LANGUAGES)) lang = "en";
  if (!Object.keys(fallback).length) fallback = await load("en");
  strings = lang === "en" ? fallback : await load(lang);
  current = lang;
  if (remember) localStorage.setItem(KEY, lang);
  document.documentElement.lang = lang;
  for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of document.querySelectorAll("[data-i18n-label]")) {
    el.setAttribute("aria-label", t(el.dataset.i18nLabel));
  }
}

export const language = () => current;

const plurals = {};

/** key_one, key_few, key_many...: the form of key for the number n in lang (CLDR's categories,
 * Intl.PluralRules: Czech says 2 "kostky" but 5 "kostek", Russian 1 and 21 "кость", 2 "кости",
 * 5 "костей"); the plain key is the other form. */
function plural(lang, key, n) {
  plurals[lang] ??= new Intl.PluralRules(lang);
  return `${key}_${plurals[lang].select(n)}`;
}

/** The text for key, with {name} placeholders filled; in the plural form for a number n. */
export function t(key, vars = {}) {
  const n = typeof vars.n === "number" ? vars.n : null;
  const text = (n !== null ? strings[plural(current, key, n)] : undefined) ?? strings[key]
    ?? (n !== null ? fallback[plural("en", key, n)] : undefined) ?? fallback[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (m, name) => (name in vars ? String(vars[name]) : m));
}

/** Whether the page has words for key (in its language or in English). */
export const has = (key) => key in strings || key in fallback;

/** A translated name if the language has one, else the fallback (e.g. an unknown category id). */
export function tOr(key, other) {
  return strings[key] ?? fallback[key] ?? other;
}
