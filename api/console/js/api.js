// The console's one way to the server: the public API with the personal
// API key kept in this tab's session storage. Every request shows in the
// progress line while it runs; a failure becomes an ApiError carrying the
// API's own words (detail, code, attr).

const KEY = "insightd.key";
let pending = 0;

export function apiKey() { return sessionStorage.getItem(KEY); }
export function setApiKey(k) { sessionStorage.setItem(KEY, k); }
export function clearApiKey() { sessionStorage.removeItem(KEY); }

export class ApiError extends Error {
  constructor(status, body) {
    const detail = (body && body.detail) || `The server answered ${status}.`;
    super(detail);
    this.status = status;
    this.code = body && body.code;
    this.attr = body && body.attr;
  }
  // text is what the page shows: the API's detail, its code and field.
  get text() {
    const extra = [this.code, this.attr && `field: ${this.attr}`].filter(Boolean).join(", ");
    return extra ? `${this.message} (${extra})` : this.message;
  }
}

function progress(delta, label) {
  pending += delta;
  const el = document.getElementById("progress");
  el.hidden = pending === 0;
  if (label) el.textContent = label;
  if (pending === 0) el.textContent = "Loading…";
}

// api fetches a path under the server (an /api/... route, or a people URL
// the API gave) and answers its JSON. body, when given, is sent as JSON
// with POST (or opts.method).
export async function api(path, body, opts = {}) {
  const headers = { Authorization: `Bearer ${apiKey()}`, Accept: "application/json" };
  const init = { method: opts.method || (body === undefined ? "GET" : "POST"), headers, signal: opts.signal };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  progress(1, opts.label ? `Loading ${opts.label}…` : undefined);
  try {
    let res;
    try {
      res = await fetch(path, init);
    } catch (e) {
      if (e.name === "AbortError") throw e;
      throw new ApiError(0, { detail: `Could not reach the server: ${e.message}`, code: "network_error" });
    }
    const text = await res.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch { data = { detail: text.slice(0, 300) }; }
    if (!res.ok) throw new ApiError(res.status, data);
    return data;
  } finally {
    progress(-1);
  }
}

// showError puts an error in the page's alert line (null clears it).
export function showError(err) {
  const el = document.getElementById("error");
  if (!err || err.name === "AbortError") { el.hidden = true; el.textContent = ""; return; }
  el.textContent = err instanceof ApiError ? err.text : String(err.message || err);
  el.hidden = false;
}
