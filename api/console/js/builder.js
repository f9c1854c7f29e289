// The ad-hoc trend and funnel builder: events and properties come from the
// project's own data (a HogQL count of its event names, the property keys
// of its recent events, the values of a key), the answer from the same
// analysis routes clients call.

import { api, showError } from "./api.js";
import { h } from "./dom.js";
import { render, disposeCharts } from "./charts.js";
import { openPeople } from "./people.js";

const options = (values, selected) => values.map((v) => {
  const [value, label] = Array.isArray(v) ? v : [v, v];
  return h("option", { value, selected: value === selected }, label);
});

async function eventNames(pid, signal) {
  const q = { kind: "HogQLQuery", query: "SELECT event, count() AS n FROM events GROUP BY event ORDER BY n DESC LIMIT 200" };
  const data = await api(`/api/projects/${pid}/query/`, { query: q }, { signal, label: "event names" });
  return data.results.map((r) => r[0]);
}

// propertyKeys lists the properties seen on an event's latest 100
// occurrences (or any event's).
async function propertyKeys(pid, event, signal) {
  const q = new URLSearchParams({ limit: "100" });
  if (event) q.set("event", event);
  const data = await api(`/api/projects/${pid}/events/?${q}`, undefined, { signal, label: "properties" });
  const keys = new Set();
  for (const e of data.results) Object.keys(e.properties || {}).forEach((k) => keys.add(k));
  return [...keys].filter((k) => !k.startsWith("$set")).sort();
}

export async function builderPage(main, { pid, query }, signal) {
  const mode = query.get("kind") === "funnel" ? "funnel" : "trend";
  main.append(h("h1", {}, "New analysis"),
    h("p", {}, mode === "trend" ? h("strong", {}, "Trend") : h("a", { href: `#/p/${pid}/new?kind=trend` }, "Trend"), " · ",
      mode === "funnel" ? h("strong", {}, "Funnel") : h("a", { href: `#/p/${pid}/new?kind=funnel` }, "Funnel")));
  const [events, keys] = await Promise.all([eventNames(pid, signal), propertyKeys(pid, "", signal)]);
  if (!events.length) {
    main.append(h("p", { class: "muted" }, "This project has no events yet: capture some first."));
    return;
  }
  const out = h("div", { class: "card", id: "builder-result" }, h("p", { class: "muted" }, "Pick events and press Show."));
  const rows = h("div", { id: "series" });
  const addRow = (event) => {
    const n = rows.children.length + 1;
    const sel = h("select", { name: "event", "aria-label": `${mode === "trend" ? "Series" : "Step"} ${n} event` }, options(events, event));
    const math = mode === "trend" ? h("select", { name: "math", "aria-label": `Series ${n} aggregation` },
      options([["total", "Total count"], ["dau", "Unique persons"], ["weekly_active", "Weekly active"], ["monthly_active", "Monthly active"]], "total")) : null;
    rows.append(h("div", { class: "builder-row" }, h("label", {}, `${mode === "trend" ? "Series" : "Step"} ${n}`, sel), math ? h("label", {}, "Counted as", math) : null));
  };
  addRow(events[0]);
  if (mode === "funnel") addRow(events[Math.min(1, events.length - 1)]);

  const range = h("select", { name: "date_from" }, options([["-7d", "Last 7 days"], ["-14d", "Last 14 days"], ["-30d", "Last 30 days"], ["-90d", "Last 90 days"]], "-14d"));
  const interval = h("select", { name: "interval" }, options([["day", "Day"], ["week", "Week"], ["month", "Month"]], "day"));
  const display = h("select", { name: "display" }, options([["ActionsLineGraph", "Lines"], ["ActionsBar", "Bars"], ["BoldNumber", "Number"]], "ActionsLineGraph"));
  const breakdown = h("select", { name: "breakdown" }, options([["", "No breakdown"], ...keys], ""));
  const compare = h("input", { type: "checkbox", name: "compare" });
  const filterKey = h("select", { name: "filter_key" }, options([["", "No filter"], ...keys], ""));
  const filterValue = h("select", { name: "filter_value", disabled: true }, options([["", "any value"]], ""));
  const windowDays = h("input", { type: "number", name: "window", min: "1", max: "90", value: "14" });
  filterKey.addEventListener("change", async () => {
    filterValue.replaceChildren(...options([["", "any value"]], ""));
    filterValue.disabled = !filterKey.value;
    if (!filterKey.value) return;
    try {
      const vals = await api(`/api/projects/${pid}/events/values/?key=${encodeURIComponent(filterKey.value)}`, undefined, { signal, label: "values" });
      filterValue.append(...options(vals.map((v) => v.name), ""));
    } catch (e) { showError(e); }
  });

  const run = async (e) => {
    e.preventDefault();
    showError(null);
    disposeCharts();
    const chosen = [...rows.children].map((r, order) => {
      const ev = { id: r.querySelector("[name=event]").value, type: "events", order };
      const m = r.querySelector("[name=math]");
      if (m) ev.math = m.value;
      return ev;
    });
    const filters = { insight: mode === "trend" ? "TRENDS" : "FUNNELS", events: chosen, date_from: range.value };
    if (filterKey.value && filterValue.value) {
      filters.properties = [{ key: filterKey.value, value: filterValue.value, operator: "exact", type: "event" }];
    }
    if (mode === "trend") {
      Object.assign(filters, { interval: interval.value, display: display.value });
      if (breakdown.value) Object.assign(filters, { breakdown: breakdown.value, breakdown_type: "event" });
      if (compare.checked) filters.compare = true;
    } else {
      Object.assign(filters, { funnel_window_interval: Number(windowDays.value), funnel_window_interval_unit: "day" });
    }
    out.replaceChildren(h("p", { class: "muted" }, "Computing…"));
    try {
      const data = await api(`/api/projects/${pid}/insights/${mode}/`, filters, { signal, label: `the ${mode}` });
      render(out, { filters, result: data.result, projectId: pid }, (t) => openPeople(t).catch(showError));
    } catch (err) {
      out.replaceChildren(h("p", { class: "muted" }, "No result."));
      showError(err);
    }
  };
  main.append(h("form", { id: "builder", class: "card", onsubmit: run }, rows,
    h("p", {}, h("button", { type: "button", onclick: () => addRow(events[0]) }, mode === "trend" ? "Add series" : "Add step")),
    h("div", { class: "builder-row" },
      h("label", {}, "Date range", range),
      mode === "trend" ? [h("label", {}, "Interval", interval), h("label", {}, "Display", display), h("label", {}, "Breakdown by", breakdown),
        h("label", { style: "flex-direction:row;align-items:center;gap:.4rem" }, compare, "Compare to previous period")]
        : h("label", {}, "Conversion window (days)", windowDays),
      h("label", {}, "Only events where", filterKey), h("label", {}, "equals", filterValue),
      h("button", { type: "submit", class: "primary" }, "Show"))), h("p"), out);
}
