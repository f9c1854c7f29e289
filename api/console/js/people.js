// The people behind a number, in a dialog: the persons URL the API gave
// for a point, step or cell, paged with its next link.

import { api, ApiError } from "./api.js";
import { h, when } from "./dom.js";

// personsOf reads either answer shape: actor lists ({results: [{people}]})
// and plain person lists ({results: [person]}).
function personsOf(data) {
  const r = (data && data.results) || [];
  if (r.length && Array.isArray(r[0].people)) return { people: r.flatMap((x) => x.people), count: r[0].count };
  return { people: r, count: data && data.count };
}

export async function openPeople(target) {
  const dialog = document.getElementById("people");
  const body = document.getElementById("people-body");
  document.getElementById("people-title").textContent = `People · ${target.title}`;
  const status = h("p", { class: "muted", role: "status" }, "Loading people…");
  const tbody = h("tbody");
  const table = h("table", { class: "people" },
    h("thead", {}, h("tr", {}, h("th", {}, "Person"), h("th", {}, "Distinct ids"), h("th", {}, "First seen"), h("th", {}, "Identified"))), tbody);
  const more = h("p");
  body.replaceChildren(status, table, more);
  if (!dialog.open) dialog.showModal();
  let shown = 0;
  const load = async (req) => {
    status.textContent = "Loading people…";
    more.replaceChildren();
    try {
      const data = req.url ? await api(req.url, undefined, { label: "people" }) : await api(req.path, req.body, { label: "people" });
      const { people, count } = personsOf(data);
      shown += people.length;
      for (const p of people) {
        tbody.append(h("tr", { class: "person" },
          h("td", {}, p.name || p.id), h("td", {}, (p.distinct_ids || []).slice(0, 3).join(", ")),
          h("td", {}, when(p.created_at)), h("td", {}, p.is_identified ? "yes" : "no")));
      }
      status.textContent = shown ? `${shown}${count ? ` of ${count}` : ""} ${shown === 1 ? "person" : "persons"}` : "Nobody here.";
      if (data.next) more.append(h("button", { type: "button", onclick: () => load({ url: data.next }) }, "Load more"));
    } catch (e) {
      status.textContent = e instanceof ApiError ? e.text : String(e.message || e);
      status.setAttribute("role", "alert");
      status.className = "error";
    }
  };
  await load(target);
}
