// The pages: projects, saved insights, one insight, dashboards, one
// dashboard. Each takes the main element, the route's parameters and an
// AbortSignal that ends when the page is left.

import { api, showError } from "./api.js";
import { h, when } from "./dom.js";
import { render, kindOf, kindNames } from "./charts.js";
import { openPeople } from "./people.js";

const people = (t) => openPeople(t).catch(showError);

export async function projectsPage(main, _params, signal) {
  main.append(h("h1", {}, "Projects"));
  const data = await api("/api/projects/", undefined, { signal, label: "projects" });
  const list = h("ul", { class: "cards", id: "projects" });
  for (const p of data.results) {
    list.append(h("li", { class: "card project" },
      h("h2", {}, h("a", { href: `#/p/${p.id}/insights` }, p.name)),
      h("p", { class: "muted" }, `Project ${p.id}${p.is_demo ? " · demo" : ""}${p.timezone ? ` · ${p.timezone}` : ""}`),
      h("p", {}, h("a", { href: `#/p/${p.id}/insights` }, "Insights"), " · ",
        h("a", { href: `#/p/${p.id}/dashboards` }, "Dashboards"), " · ", h("a", { href: `#/p/${p.id}/new` }, "New analysis"))));
  }
  if (!data.results.length) list.append(h("li", { class: "muted" }, "This key sees no project."));
  main.append(list);
}

export async function insightsPage(main, { pid, query }, signal) {
  const search = query.get("search") || "";
  const input = h("input", { type: "search", name: "search", value: search, "aria-label": "Search insights" });
  main.append(h("h1", {}, "Saved insights"),
    h("form", { class: "inline", role: "search", onsubmit: (e) => {
      e.preventDefault();
      location.hash = `#/p/${pid}/insights${input.value ? `?search=${encodeURIComponent(input.value)}` : ""}`;
    } }, h("label", {}, "Name contains", input), h("button", { type: "submit", class: "primary" }, "Search")));
  const q = new URLSearchParams({ saved: "true", limit: "100" });
  if (search) q.set("search", search);
  const data = await api(`/api/projects/${pid}/insights/?${q}`, undefined, { signal, label: "insights" });
  const rows = data.results.map((i) => h("tr", { class: "insight" },
    h("td", {}, h("a", { href: `#/p/${pid}/insights/${i.id}` }, i.name || i.derived_name || `Insight ${i.short_id}`)),
    h("td", {}, kindNames[kindOf(i.filters)] || ""), h("td", {}, i.description || ""), h("td", {}, when(i.last_modified_at))));
  main.append(h("p", { class: "muted" }, `${data.count} ${data.count === 1 ? "insight" : "insights"}`),
    h("table", { id: "insights" }, h("thead", {}, h("tr", {}, h("th", {}, "Name"), h("th", {}, "Kind"), h("th", {}, "Description"), h("th", {}, "Modified"))),
      h("tbody", {}, rows)));
}

// filtersOf gives an insight's legacy filters (query-node insights carry
// their kind in query.source.kind).
function filtersOf(i) {
  if (i.filters && i.filters.insight) return i.filters;
  const kind = i.query && (i.query.source || i.query).kind;
  const names = { TrendsQuery: "TRENDS", FunnelsQuery: "FUNNELS", RetentionQuery: "RETENTION", PathsQuery: "PATHS",
    LifecycleQuery: "LIFECYCLE", StickinessQuery: "STICKINESS" };
  return { ...(i.filters || {}), insight: names[kind] || "TRENDS" };
}

export async function insightPage(main, { pid, id }, signal) {
  const title = h("h1", {}, "Insight");
  const meta = h("div", { class: "meta" });
  const chartEl = h("div", { class: "card", id: "insight-chart" });
  main.append(h("p", {}, h("a", { href: `#/p/${pid}/insights` }, "← Saved insights")), title, meta, chartEl);
  const i = await api(`/api/projects/${pid}/insights/${id}/?refresh=true`, undefined, { signal, label: "the insight" });
  const filters = filtersOf(i);
  title.textContent = i.name || i.derived_name || `Insight ${i.short_id}`;
  meta.append(h("span", {}, kindNames[kindOf(filters, i.result)]), h("span", {}, `Computed ${when(i.last_refresh)}${i.is_cached ? " (cached)" : ""}`));
  if (i.description) meta.append(h("span", {}, i.description));
  render(chartEl, { filters, result: i.result, projectId: pid }, people);
}

export async function dashboardsPage(main, { pid }, signal) {
  main.append(h("h1", {}, "Dashboards"));
  const data = await api(`/api/projects/${pid}/dashboards/?limit=100`, undefined, { signal, label: "dashboards" });
  const list = h("ul", { class: "cards", id: "dashboards" });
  for (const d of data.results) {
    list.append(h("li", { class: "card dashboard" }, h("h2", {}, h("a", { href: `#/p/${pid}/dashboards/${d.id}` }, d.name)),
      h("p", { class: "muted" }, d.description || "", d.pinned ? " · pinned" : "")));
  }
  if (!data.results.length) list.append(h("li", { class: "muted" }, "No dashboards yet."));
  main.append(list);
}

export async function dashboardPage(main, { pid, id }, signal) {
  const title = h("h1", {}, "Dashboard");
  const tiles = h("div", { class: "tiles", id: "tiles" });
  main.append(h("p", {}, h("a", { href: `#/p/${pid}/dashboards` }, "← Dashboards")), title, tiles);
  const d = await api(`/api/projects/${pid}/dashboards/${id}/`, undefined, { signal, label: "the dashboard" });
  title.textContent = d.name;
  if (d.description) title.after(h("p", { class: "muted" }, d.description));
  if (!d.tiles.length) tiles.append(h("p", { class: "muted" }, "This dashboard has no tiles."));
  for (const t of d.tiles) {
    if (t.insight) {
      const body = h("div");
      tiles.append(h("section", { class: "card tile", "aria-label": t.insight.name },
        h("h2", {}, h("a", { href: `#/p/${pid}/insights/${t.insight.id}` }, t.insight.name || t.insight.derived_name)), body));
      render(body, { filters: filtersOf(t.insight), result: t.insight.result, projectId: pid }, people);
    } else if (t.text) {
      tiles.append(h("section", { class: "card tile" }, h("p", {}, t.text.body)));
    }
  }
}
