// The routes of PROTOCOL.md. Reading is open; a change that gets 401 asks for the table PIN
// (POST /api/pin keeps it in a cookie) and is sent again; 429, 409 and 422 are shown as they come.
import { $, toast } from "./dom.js";
import { t } from "./i18n.js";
import { wordRefusal } from "./words.js";

/** The words of an error body: FastAPI's detail string, or pydantic's list of problems. */
export function detailText(body, status) {
  const detail = body && body.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail.map((d) => {
      const where = (d.loc || []).filter((p) => p !== "body").join(".");
      return where ? `${where}: ${d.msg}` : d.msg;
    }).join("; ");
  }
  return `HTTP ${status}`;
}

/** An error body in the page's language when it carries a refusal code, else its detail. */
export function refusalText(body, status) {
  const detail = detailText(body, status);
  return body && typeof body.code === "string" ? wordRefusal(body.code, body.params, detail) : detail;
}

export async function get(path) {
  try {
    const r = await fetch(path, { cache: "no-store" });
    if (!r.ok) return null;
    return await r.json();
  } catch {
    return null;
  }
}

/** GET a route that may refuse: ``{ok, status, data}``, or null when the table cannot be reached. */
export async function ask(path) {
  try {
    const r = await fetch(path, { cache: "no-store" });
    const data = await r.json().catch(() => ({}));
    return { ok: r.ok, status: r.status, data };
  } catch {
    return null;
  }
}

async function send(path, body, method = "POST") {
  const r = await fetch(path, {
    method,
    headers: { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const data = await r.json().catch(() => ({}));
  return { status: r.status, ok: r.ok, data };
}

/** POST (or PUT) a change; the response body on success, else null after telling the player
why. */
export async function post(path, body, method = "POST") {
  for (let attempt = 0; attempt < 3; attempt++) {
    let r;
    try {
      r = await send(path, body, method);
    } catch {
      toast(t("error.network"));
      return null;
    }
    if (r.ok) return r.data;
    const why = refusalText(r.data, r.status);
    if (r.status === 401) {
      if (!(await enterPin())) return null;
      continue;
    }
    if (r.status === 429) toast(t("error.wait", { detail: why }), "wait");
    else if (r.status === 409) toast(t("error.illegal", { detail: why }));
    // A worded refusal says itself what was wrong; only a bare one is prefixed.
    else if (r.status === 422) toast(r.data && r.data.code ? why : t("error.malformed", { detail: why }));
    else toast(why);
    return null;
  }
  return null;
}

/** An image a route serves behind the PIN, as an object URL (asking for the PIN on 401), or null
after telling the player why not. */
export async function image(path, onHeaders = null) {
  for (let attempt = 0; attempt < 3; attempt++) {
    let r;
    try {
      r = await fetch(path, { cache: "no-store", credentials: "same-origin" });
    } catch {
      toast(t("error.network"));
      return null;
    }
    if (r.ok) {
      if (onHeaders) onHeaders(r.headers); // what the picture is of (its frame's size)
      return URL.createObjectURL(await r.blob());
    }
    const why = detailText(await r.json().catch(() => ({})), r.status);
    if (r.status === 401) {
      if (!(await enterPin())) return null;
      continue;
    }
    toast(r.status === 429 ? t("error.wait", { detail: why }) : why, r.status === 429 ? "wait" : undefined);
    return null;
  }
  return null;
}

function askPin(message) {
  const dialog = $("pin-dialog");
  $("pin-error").textContent = message;
  $("pin-input").value = "";
  return new Promise((resolve) => {
    dialog.addEventListener(
      "close",
      () => resolve(dialog.returnValue === "ok" ? $("pin-input").value.trim() : null),
      { once: true },
    );
    dialog.returnValue = "";
    dialog.showModal();
    $("pin-input").focus();
  });
}

/** Ask for the PIN until the table takes it (true) or the player gives up or must wait (false). */
async function enterPin() {
  let message = "";
  for (;;) {
    const pin = await askPin(message);
    if (!pin) return false;
    let r;
    try {
      r = await send("/api/pin", { pin });
    } catch {
      toast(t("error.network"));
      return false;
    }
    if (r.ok) return true;
    if (r.status === 429) {
      toast(t("error.wait", { detail: detailText(r.data, r.status) }), "wait");
      return false;
    }
    message = r.status === 401 ? t("pin.wrong") : detailText(r.data, r.status);
  }
}
