// insightd's console: a hash router over the pages, the login form and
// the navigation. The API key lives in this tab's session storage only.

import { apiKey, setApiKey, clearApiKey, api, showError, ApiError } from "./api.js";
import { h } from "./dom.js";
import { disposeCharts } from "./charts.js";
import { projectsPage, insightsPage, insightPage, dashboardsPage, dashboardPage } from "./pages.js";
import { builderPage } from "./builder.js";

const routes = [
  [/^\/$/, projectsPage, []],
  [/^\/p\/(\d+)\/insights$/, insightsPage, ["pid"]],
  [/^\/p\/(\d+)\/insights\/(\d+)$/, insightPage, ["pid", "id"]],
  [/^\/p\/(\d+)\/dashboards$/, dashboardsPage, ["pid"]],
  [/^\/p\/(\d+)\/dashboards\/(\d+)$/, dashboardPage, ["pid", "id"]],
  [/^\/p\/(\d+)\/new$/, builderPage, ["pid"]],
];

let current = null; // the shown page's AbortController

function loginPage(main) {
  const input = h("input", { type: "password", name: "key", autocomplete: "off", required: true, placeholder: "phx_…" });
  // method post: should the script fail, the key is not put in a URL.
  main.append(h("form", { class: "card login", id: "login", method: "post", onsubmit: async (e) => {
    e.preventDefault();
    setApiKey(input.value.trim());
    try {
      await api("/api/projects/", undefined, { label: "your projects" });
      showError(null);
      route();
    } catch (err) {
      clearApiKey();
      showError(err);
    }
  } }, h("h1", {}, "Log in"),
  h("p", {}, "Paste a personal API key (", h("code", {}, "insightd admin create-key"), " prints one). It stays in this browser tab only."),
  h("label", {}, "Personal API key", input), h("p"), h("button", { type: "submit", class: "primary" }, "Log in")));
  input.focus();
}

function navFor(pid, path) {
  const nav = document.getElementById("nav");
  const link = (href, text) => h("a", { href, "aria-current": `#${path}` === href.split("?")[0] ? "page" : null }, text);
  if (!apiKey()) { nav.replaceChildren(); return; }
  nav.replaceChildren(link("#/", "Projects"), ...(pid ? [link(`#/p/${pid}/insights`, "Insights"),
    link(`#/p/${pid}/dashboards`, "Dashboards"), link(`#/p/${pid}/new`, "New analysis")] : []));
}

async function route() {
  if (current) current.abort();
  disposeCharts();
  showError(null);
  const main = document.getElementById("main");
  main.replaceChildren();
  const logout = document.getElementById("logout");
  if (!apiKey()) {
    logout.hidden = true;
    navFor(null, "");
    loginPage(main);
    return;
  }
  logout.hidden = false;
  const [path, qs] = (location.hash.slice(1) || "/").split("?");
  for (const [re, page, names] of routes) {
    const m = path.match(re);
    if (!m) continue;
    const params = { query: new URLSearchParams(qs || "") };
    names.forEach((n, i) => { params[n] = m[i + 1]; });
    navFor(params.pid, path);
    current = new AbortController();
    const signal = current.signal;
    try {
      await page(main, params, signal);
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ApiError && err.status === 401) clearApiKey();
      showError(err);
    }
    return;
  }
  main.append(h("h1", {}, "Not found"), h("p", {}, h("a", { href: "#/" }, "Back to the projects")));
}

document.getElementById("logout").addEventListener("click", () => { clearApiKey(); location.hash = "#/"; route(); });
window.addEventListener("hashchange", route);
route();
