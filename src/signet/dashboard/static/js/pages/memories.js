// Memories: search with the real recall (mode, filters, each result's evidence per channel),
// or, with no query, the list of memories with filters, paged. The form lives in the URL, so
// a search is a link and Back works. Keys: / focuses the search, j/k move, Enter opens.
import { api } from "../api.js";
import { chip, clip, empty, failure, h, loading, pager, when } from "../dom.js";

const PAGE = 25;
const FILTERS = ["type", "tags", "project", "agent", "who", "pinned", "since", "until"];
const MODES = ["full", "hybrid", "keyword", "vector"];

export function memoriesPage(main, { query, navigate }) {
  const results = h("div", { id: "results" });
  const form = searchForm(query, navigate);
  main.append(h("h1", {}, "Memories"), form, results,
    h("p", { class: "muted small" }, h("kbd", {}, "/"), " search · ", h("kbd", {}, "j"), " ",
      h("kbd", {}, "k"), " move · ", h("kbd", {}, "Enter"), " open"));
  const q = (query.get("q") || "").trim();
  (q ? showSearch : showList)(results, query, navigate);
  const keys = (event) => listKeys(event, form, results, navigate);
  document.addEventListener("keydown", keys);
  return () => document.removeEventListener("keydown", keys);
}

function searchForm(query, navigate) {
  const field = (name, label, attrs = {}) => h("label", {}, label,
    h("input", { name, value: query.get(name) || "", ...attrs }));
  const select = (name, label, options) => h("label", {}, label,
    h("select", { name }, options.map(([value, text]) =>
      h("option", { value, selected: (query.get(name) || "") === value }, text))));
  const form = h("form", { class: "filters", role: "search" },
    h("label", {}, "Search", h("input", { type: "search", name: "q", value: query.get("q") || "",
      placeholder: "What do you want to find?", "aria-label": "Search memories", autocomplete: "off" })),
    select("mode", "Mode", MODES.map((m) => [m === "full" ? "" : m, m])),
    field("type", "Type", { size: 10, placeholder: "fact" }),
    field("tags", "Tags", { size: 10, placeholder: "a,b" }),
    field("project", "Project", { size: 10 }),
    field("agent", "Agent", { size: 10 }),
    field("who", "Who", { size: 10 }),
    select("pinned", "Pinned", [["", "any"], ["true", "pinned"], ["false", "not pinned"]]),
    field("since", "Since", { type: "date" }),
    field("until", "Until", { type: "date" }),
    h("label", {}, "Deleted", h("input", { type: "checkbox", name: "deleted", value: "1",
      checked: query.get("deleted") === "1" })),
    h("button", { type: "submit", class: "primary" }, "Search"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new URLSearchParams();
    for (const [key, value] of new FormData(form)) if (value !== "") data.set(key, value);
    navigate(`/app/memories${data.toString() ? `?${data}` : ""}`);
  });
  return form;
}

function filtersOf(query) {
  const out = {};
  for (const name of FILTERS) if (query.get(name)) out[name] = query.get(name);
  // The URL holds text; recall's JSON body takes pinned as a boolean (a string is refused).
  if (out.pinned) out.pinned = out.pinned === "true";
  return out;
}

async function showList(target, query, navigate) {
  const offset = Number(query.get("offset") || 0);
  target.replaceChildren(loading());
  try {
    const page = await api("/api/memories", { query: {
      ...filtersOf(query), limit: PAGE, offset, include_deleted: query.get("deleted") === "1" || undefined } });
    const go = (next) => { query.set("offset", next); navigate(`/app/memories?${query}`); };
    target.replaceChildren(
      page.items.length ? h("ul", { class: "rows" }, page.items.map((m) => row(m)))
        : empty(offset ? "No more memories." : "No memories match. Agents add them as they work; try fewer filters."),
      pager({ offset, limit: PAGE, total: page.total, count: page.items.length, go }));
  } catch (err) {
    target.replaceChildren(failure(err, () => showList(target, query, navigate)));
  }
}

async function showSearch(target, query, navigate) {
  target.replaceChildren(loading("Recalling…"));
  const filters = filtersOf(query);
  try {
    const reply = await api("/api/memory/recall", { method: "POST", body: {
      query: query.get("q"), limit: 50, mode: query.get("mode") || undefined,
      filters: Object.keys(filters).length ? filters : undefined } });
    const timings = Object.entries(reply.meta.timings || {}).map(([k, v]) => `${k} ${Number(v).toFixed(1)} ms`).join(" · ");
    target.replaceChildren(
      h("p", { class: "muted small" }, `${reply.results.length} results · method ${reply.method}`,
        reply.meta.degraded?.length ? ` · degraded: ${reply.meta.degraded.join(", ")}` : "", timings ? ` · ${timings}` : ""),
      reply.results.length ? h("ul", { class: "rows" }, reply.results.map((m) => row(m, m)))
        : empty("Nothing recalled for that query."));
  } catch (err) {
    target.replaceChildren(failure(err, () => showSearch(target, query, navigate)));
  }
}

function row(memory, hit) {
  return h("li", { dataset: { id: memory.id } },
    h("a", { class: "title", href: `/app/memories/${encodeURIComponent(memory.id)}` }, clip(memory.content)),
    h("div", { class: "meta" },
      chip(memory.type),
      memory.pinned ? chip("pinned", "good") : null,
      memory.is_deleted ? chip("forgotten", "bad") : null,
      memory.project ? chip(`project ${memory.project}`) : null,
      (memory.tags || []).map((t) => chip(`#${t}`)),
      h("span", {}, when(memory.created_at)),
      hit ? evidence(hit) : null));
}

function evidence(hit) {
  const channels = Object.entries(hit.evidence || {}).filter(([, v]) => v !== null && v !== undefined);
  return h("span", { class: "evidence" },
    h("strong", {}, `score ${hit.score.toFixed(3)}`), " ",
    channels.map(([k, v]) => chip(`${k} ${Number.isInteger(v) ? v : Number(v).toFixed(2)}`)),
    (hit.adjustments || []).map((a) => chip(a, "bad")));
}

function listKeys(event, form, results, navigate) {
  if (event.target.closest("input, textarea, select")) {
    if (event.key === "Escape") event.target.blur();
    return;
  }
  const items = [...results.querySelectorAll("ul.rows li")];
  let index = items.findIndex((li) => li.classList.contains("selected"));
  if (event.key === "/") {
    event.preventDefault();
    form.querySelector("input[name=q]").focus();
  } else if ((event.key === "j" || event.key === "k") && items.length) {
    index = event.key === "j" ? Math.min(items.length - 1, index + 1) : Math.max(0, index - 1);
    items.forEach((li, i) => li.classList.toggle("selected", i === index));
    items[index].scrollIntoView({ block: "nearest" });
  } else if (event.key === "Enter" && index >= 0) {
    navigate(`/app/memories/${encodeURIComponent(items[index].dataset.id)}`);
  }
}
