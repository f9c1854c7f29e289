// Draws an insight's result by its kind with Apache ECharts (window.echarts,
// vendored). Every number a person can click opens the people behind it
// through the URL the API gave for it (or the persons route for paths).

import { h, fmt, pct, duration } from "./dom.js";

// Okabe-Ito: distinguishable with the common colour-vision deficiencies.
// Its yellow is left out: too pale on white.
export const palette = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#7f7f7f"];
const lifecycleColours = { new: "#0072B2", returning: "#009E73", resurrecting: "#E69F00", dormant: "#D55E00" };

let live = [];
window.addEventListener("resize", () => live.forEach((c) => c.resize()));

// disposeCharts frees the charts of the page being left.
export function disposeCharts() {
  live.forEach((c) => c.dispose());
  live = [];
}

function chart(el, option, onClick) {
  const c = window.echarts.init(el, null, { renderer: "canvas" });
  c.setOption({ color: palette, aria: { enabled: true }, animation: false, textStyle: { fontFamily: "system-ui, sans-serif" }, ...option });
  if (onClick) c.on("click", onClick);
  live.push(c);
  return c;
}

const upper = (s) => String(s || "").toUpperCase();

// kindOf names the chart an insight's filters ask for.
export function kindOf(filters, result) {
  const f = filters || {};
  switch (upper(f.insight)) {
    case "FUNNELS":
      if (f.funnel_viz_type === "time_to_convert") return "timing";
      if (f.funnel_viz_type === "trends") return "lines";
      return "funnel";
    case "RETENTION": return "retention";
    case "PATHS": return "paths";
    case "LIFECYCLE": return "lifecycle";
    case "STICKINESS": return "stickiness";
  }
  if (result && !Array.isArray(result) && result.bins) return "timing";
  switch (f.display) {
    case "BoldNumber": return "number";
    case "ActionsBar": case "ActionsStackedBar": return "bars";
    case "ActionsBarValue": case "ActionsPie": case "ActionsTable": case "WorldMap": return "values";
  }
  return "lines";
}

export const kindNames = {
  lines: "Trend lines", bars: "Trend bars", values: "Totals", number: "Number", funnel: "Funnel",
  timing: "Time to convert", retention: "Retention", paths: "Paths", lifecycle: "Lifecycle", stickiness: "Stickiness",
};

// seriesName labels a trend series, the compared period marked.
function seriesName(s) {
  return s.compare_label === "previous" ? `${s.label} (previous)` : s.label;
}

// render draws result into el; people(target) opens the people behind a
// number, target being {title, url} or {title, path, body}.
export function render(el, { filters, result, projectId }, people) {
  el.replaceChildren();
  if (result === null || result === undefined || (Array.isArray(result) && result.length === 0)) {
    el.append(h("p", { class: "muted" }, "No data for this insight in its date range."));
    return;
  }
  const kind = kindOf(filters, result);
  el.dataset.kind = kind;
  const draw = { lines: trends, bars: trends, values: values, number: number, funnel: funnel, timing: timing,
    retention: retention, paths: paths, lifecycle: lifecycle, stickiness: stickiness }[kind];
  draw(el, result, people, { kind, filters, projectId });
}

function box(el) {
  const c = h("div", { class: "chart" });
  el.append(c);
  return c;
}

function pointPeople(series, people) {
  return (p) => {
    const s = series[p.seriesIndex];
    const u = s && s.persons_urls && s.persons_urls[p.dataIndex];
    if (u && u.url) people({ title: `${seriesName(s)} · ${s.labels[p.dataIndex]}`, url: u.url });
  };
}

const axisTooltip = { trigger: "axis", confine: true };
const grid = { left: 56, right: 24, top: 48, bottom: 40, containLabel: true };
const legend = { type: "scroll", top: 0 };

function trends(el, result, people, { kind }) {
  const bars = kind === "bars";
  // A compared period's series takes its current series' colour.
  const labels = [...new Set(result.map((s) => s.label))];
  const colour = (s) => palette[labels.indexOf(s.label) % palette.length];
  chart(box(el), {
    tooltip: axisTooltip, legend, grid,
    xAxis: { type: "category", data: result[0].labels },
    yAxis: { type: "value" },
    series: result.map((s) => ({
      name: seriesName(s), type: bars ? "bar" : "line", data: s.data, symbolSize: 7, cursor: "pointer",
      // The compared period: dashed lines, paler bars.
      lineStyle: s.compare_label === "previous" ? { type: "dashed" } : undefined,
      itemStyle: { color: colour(s), opacity: bars && s.compare_label === "previous" ? 0.45 : 1 },
    })),
  }, pointPeople(result, people));
}

function values(el, result, people) {
  const value = (s) => s.aggregated_value ?? s.count ?? 0;
  chart(box(el), {
    tooltip: { confine: true }, grid,
    xAxis: { type: "value" },
    yAxis: { type: "category", data: result.map(seriesName), inverse: true },
    series: [{ type: "bar", data: result.map((s, i) => ({ value: value(s), itemStyle: { color: palette[i % palette.length] } })), label: { show: true, position: "right" } }],
  }, (p) => {
    const s = result[p.dataIndex];
    const u = s.persons_urls && s.persons_urls[0];
    if (u) people({ title: seriesName(s), url: u.url });
  });
}

function number(el, result, people) {
  const value = (s) => s.aggregated_value ?? s.count ?? (s.data || []).reduce((a, b) => a + b, 0);
  const cur = result.find((s) => s.compare_label !== "previous") || result[0];
  const prev = result.find((s) => s.compare_label === "previous");
  const u = cur.persons_urls && cur.persons_urls[0];
  const big = u ? h("button", { type: "button", onclick: () => people({ title: cur.label, url: u.url }) }, fmt(value(cur))) : fmt(value(cur));
  el.append(h("div", { class: "bold-number", "data-value": value(cur) }, big),
    h("p", { class: "muted", style: "text-align:center" }, cur.label,
      prev ? ` · previous period ${fmt(value(prev))} (${pct(value(prev) ? (value(cur) - value(prev)) / value(prev) : NaN)} change)` : ""));
}

function funnel(el, result, people) {
  // Breakdowns answer one list of steps per value.
  const groups = Array.isArray(result[0]) ? result : [result];
  const steps = groups[0];
  const label = (g) => (g[0].breakdown_value !== undefined ? [].concat(g[0].breakdown_value).join(", ") : "All");
  chart(box(el), {
    tooltip: { ...axisTooltip, axisPointer: { type: "shadow" } }, legend, grid,
    xAxis: { type: "category", data: steps.map((s, i) => `${i + 1}. ${s.custom_name || s.name}`) },
    yAxis: { type: "value", name: "persons" },
    series: groups.map((g) => ({
      name: label(g), type: "bar", cursor: "pointer",
      data: g.map((s) => s.count),
      label: { show: true, position: "top", formatter: (p) => `${fmt(p.value)} · ${pct(g[0].count ? p.value / g[0].count : NaN)}` },
    })),
  }, (p) => {
    const s = groups[p.seriesIndex][p.dataIndex];
    if (s.converted_people_url) people({ title: `Reached step ${p.dataIndex + 1}: ${s.name}`, url: s.converted_people_url });
  });
  const rows = [];
  groups.forEach((g) => g.forEach((s, i) => {
    const prev = i ? g[i - 1].count : s.count;
    rows.push(h("tr", {},
      h("td", {}, groups.length > 1 ? `${label(g)} · ` : "", `${i + 1}. ${s.custom_name || s.name}`),
      h("td", { class: "num" }, s.converted_people_url
        ? h("button", { type: "button", class: "link", onclick: () => people({ title: `Reached step ${i + 1}: ${s.name}`, url: s.converted_people_url }) }, fmt(s.count))
        : fmt(s.count)),
      h("td", { class: "num" }, pct(g[0].count ? s.count / g[0].count : NaN)),
      h("td", { class: "num" }, i ? pct(prev ? s.count / prev : NaN) : "–"),
      h("td", { class: "num" }, i ? (s.dropped_people_url
        ? h("button", { type: "button", class: "link", onclick: () => people({ title: `Dropped off before step ${i + 1}: ${s.name}`, url: s.dropped_people_url }) }, fmt(prev - s.count))
        : fmt(prev - s.count)) : "–"),
      h("td", { class: "num" }, i ? duration(s.median_conversion_time) : "–")));
  }));
  el.append(h("table", { class: "funnel-steps" },
    h("thead", {}, h("tr", {}, h("th", {}, "Step"), h("th", { class: "num" }, "Persons"), h("th", { class: "num" }, "Conversion"),
      h("th", { class: "num" }, "From previous"), h("th", { class: "num" }, "Dropped off"), h("th", { class: "num" }, "Median time"))),
    h("tbody", {}, rows)));
}

function timing(el, result) {
  const bins = result.bins || [];
  el.append(h("p", { class: "muted" }, `Average time to convert: ${duration(result.average_conversion_time)}`));
  chart(box(el), {
    tooltip: { ...axisTooltip, axisPointer: { type: "shadow" } }, grid,
    xAxis: { type: "category", name: "time to convert (bin start)", nameLocation: "middle", nameGap: 28, data: bins.map(([s]) => duration(s)) },
    yAxis: { type: "value", name: "persons" },
    series: [{ type: "bar", name: "Persons", data: bins.map(([, n]) => n), barCategoryGap: "10%" }],
  });
}

function retention(el, result, people) {
  const width = Math.max(...result.map((r) => r.values.length));
  const head = h("tr", {}, h("th", {}, "Cohort"), h("th", { class: "num" }, "Persons"),
    Array.from({ length: width }, (_, i) => h("th", { class: "num" }, `${i}`)));
  const body = result.map((row) => {
    const size = row.values[0] ? row.values[0].count : 0;
    return h("tr", {},
      h("th", {}, row.label, h("div", { class: "muted" }, row.date ? new Date(row.date).toLocaleDateString() : "")),
      h("td", { class: "num" }, fmt(size)),
      row.values.map((v, i) => {
        const share = size ? v.count / size : 0;
        // A blue scale; text turns white where the cell is dark enough
        // to keep 4.5:1 contrast.
        const bg = `rgba(0, 90, 170, ${0.08 + 0.87 * share})`;
        const colour = share > 0.45 ? "#fff" : "#1b1f24";
        return h("td", {}, h("button", {
          type: "button", style: `background:${bg};color:${colour}`,
          "aria-label": `${row.label}, period ${i}: ${v.count} persons, ${pct(share)}`,
          onclick: () => people({ title: `${row.label} · period ${i}`, url: v.people_url }),
        }, pct(share)));
      }));
  });
  el.append(h("table", { class: "retention" }, h("thead", {}, head), h("tbody", {}, body)));
}

// pathName shows a path item without its step prefix (1_, 2_...).
const pathName = (k) => String(k).replace(/^\d+_/, "");

function paths(el, result, people, { filters, projectId }) {
  const names = new Set();
  result.forEach((l) => { names.add(l.source); names.add(l.target); });
  const c = box(el);
  c.style.height = "520px";
  chart(c, {
    tooltip: { trigger: "item", confine: true, formatter: (p) => p.dataType === "edge"
      ? `${pathName(p.data.source)} → ${pathName(p.data.target)}: ${fmt(p.data.value)}` : `${pathName(p.name)}: ${fmt(p.value)}` },
    series: [{
      type: "sankey", left: 8, right: 160, top: 8, bottom: 8, nodeGap: 10, draggable: false, cursor: "pointer",
      emphasis: { focus: "adjacency" }, lineStyle: { color: "gradient", opacity: 0.35 },
      label: { formatter: (p) => pathName(p.name).replace(/^https?:\/\/[^/]+/, "") || "/" },
      data: [...names].map((name) => ({ name })),
      links: result.map((l) => ({ source: l.source, target: l.target, value: l.value })),
    }],
  }, (p) => {
    if (p.dataType !== "edge") return;
    people({ title: `${pathName(p.data.source)} → ${pathName(p.data.target)}`, path: `/api/projects/${projectId}/persons/path/`,
      body: { ...filters, path_start_key: p.data.source, path_end_key: p.data.target } });
  });
}

function lifecycle(el, result, people) {
  chart(box(el), {
    tooltip: { ...axisTooltip, axisPointer: { type: "shadow" } }, legend, grid,
    xAxis: { type: "category", data: result[0].labels },
    yAxis: { type: "value" },
    series: result.map((s) => ({
      name: s.status || s.label, type: "bar", stack: "lifecycle", data: s.data, cursor: "pointer",
      itemStyle: { color: lifecycleColours[s.status] },
    })),
  }, pointPeople(result, people));
}

function stickiness(el, result, people) {
  chart(box(el), {
    tooltip: { ...axisTooltip, axisPointer: { type: "shadow" } }, legend, grid,
    xAxis: { type: "category", data: result[0].labels, name: "active" },
    yAxis: { type: "value", name: "persons" },
    series: result.map((s) => ({ name: seriesName(s), type: "bar", data: s.data, cursor: "pointer" })),
  }, pointPeople(result, people));
}
