// Small DOM helpers: h builds an element from a tag, attributes and
// children (strings become text, never HTML).

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

const numberFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });
export const fmt = (n) => (n === null || n === undefined || Number.isNaN(n) ? "–" : numberFormat.format(n));
export const pct = (x) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : "–");

// duration writes seconds as the largest fitting units (1h 5m, 3d 2h).
export function duration(s) {
  if (s === null || s === undefined) return "–";
  s = Math.round(s);
  const units = [["d", 86400], ["h", 3600], ["m", 60], ["s", 1]];
  const parts = [];
  for (const [u, n] of units) {
    if (s >= n || (u === "s" && parts.length === 0)) {
      parts.push(`${Math.floor(s / n)}${u}`);
      s %= n;
    }
    if (parts.length === 2) break;
  }
  return parts.join(" ");
}

export const when = (iso) => (iso ? new Date(iso).toLocaleString() : "–");
