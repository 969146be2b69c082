// The knowledge graph: entity search (paged), communities, counts; one entity with its
// aspects and attributes, dependencies, memories, a neighbourhood view you can walk by
// clicking, and pin / suppress.
import { api } from "../api.js";
import { chip, clip, empty, failure, h, load, loading, pager, toast } from "../dom.js";

const PAGE = 30;
const SVG = "http://www.w3.org/2000/svg";

export function graphPage(main, { query, navigate }) {
  const offset = Number(query.get("offset") || 0);
  const q = query.get("q") || "";
  const form = h("form", { class: "filters", role: "search" },
    h("label", {}, "Entity", h("input", { type: "search", name: "q", value: q, placeholder: "name or alias" })),
    h("button", { type: "submit", class: "primary" }, "Search"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const value = new FormData(form).get("q");
    navigate(`/app/graph${value ? `?q=${encodeURIComponent(value)}` : ""}`);
  });
  const entities = h("div", {});
  const stats = h("div", {});
  const communities = h("div", {});
  main.append(h("h1", {}, "Knowledge graph"), stats, form, h("div", { class: "grid2" },
    h("section", {}, h("h2", {}, "Entities"), entities),
    h("section", {}, h("h2", {}, "Communities"), communities)));
  load(stats, () => api("/api/knowledge/stats"), (s) => h("p", { class: "muted" },
    `${s.entities} entities · ${s.aspects} aspects · ${s.attributes} attributes · ${s.dependencies} dependencies · `
    + `${s.communities} communities · ${s.pinned} pinned · ${s.suppressed} suppressed`));
  load(entities, () => api("/api/knowledge/entities", { query: { q, limit: PAGE, offset } }), (page) => [
    page.items.length ? h("ul", { class: "rows" }, page.items.map((e) => h("li", {},
      h("a", { class: "title", href: `/app/graph/${encodeURIComponent(e.id)}` }, e.name),
      h("div", { class: "meta" }, chip(e.entity_type || "entity"), h("span", {}, `${e.mentions} mentions`),
        e.pinned === "pin" || e.pinned === 1 || e.pinned === true ? chip("pinned", "good") : null,
        e.pinned === "suppress" ? chip("suppressed", "bad") : null))))
      : empty(q ? `No entity matches “${q}”.` : "The graph is empty: extraction adds entities as memories arrive."),
    pager({ offset, limit: PAGE, total: page.total, count: page.items.length,
      go: (next) => navigate(`/app/graph?${new URLSearchParams({ q, offset: next })}`) }),
  ]);
  const drawCommunities = (list) => [
    h("div", { class: "actions" }, h("button", { type: "button", onclick: detect }, "Detect communities now")),
    list.length ? h("ul", { class: "rows" }, list.map((c) => h("li", {},
      h("strong", {}, c.label || c.id), h("div", { class: "meta" }, h("span", {}, `${c.size} entities`),
        c.quality ? chip(c.quality) : null,
        h("a", { href: `/app/memories?${new URLSearchParams({ q: c.label || "", community: c.id })}` }, "memories")))))
      : empty("No communities yet."),
  ];
  async function detect() {
    communities.replaceChildren(loading("Detecting…"));
    try {
      const reply = await api("/api/knowledge/communities/detect", { method: "POST" });
      communities.replaceChildren(...drawCommunities(reply.communities));
    } catch (err) {
      communities.replaceChildren(failure(err, detect));
    }
  }
  load(communities, () => api("/api/knowledge/communities"), (r) => drawCommunities(r.communities));
}

export function entityPage(main, { params, navigate }) {
  const [id] = params;
  const path = `/api/knowledge/entities/${encodeURIComponent(id)}`;
  const body = h("div", {});
  main.append(h("p", {}, h("a", { href: "/app/graph" }, "← Graph")), body);
  const refresh = () => load(body, () => api(path), (e) => draw(e));

  const pin = (suppress) => async () => {
    try {
      await api(`${path}/pin`, { method: "POST", body: { suppress } });
      toast(suppress ? "Suppressed: never focal." : "Pinned: always focal.");
      refresh();
    } catch (err) { toast(err.message); }
  };
  const clear = async () => {
    try {
      await api(`${path}/pin`, { method: "DELETE" });
      toast("Cleared.");
      refresh();
    } catch (err) { toast(err.message); }
  };

  function draw(e) {
    return [
      h("h1", {}, e.name, " ", h("span", { class: "muted small" }, e.entity_type || "")),
      h("div", { class: "meta" }, h("span", {}, `${e.mentions} mentions`),
        e.aliases?.length ? h("span", {}, `aliases: ${e.aliases.map((a) => a.alias || a).join(", ")}`) : null,
        e.pinned ? chip(String(e.pinned), "good") : null, e.community_id ? chip(`community ${e.community_id.slice(0, 8)}`) : null),
      e.description ? h("p", {}, e.description) : null,
      h("div", { class: "actions" },
        h("button", { type: "button", id: "pin-entity", onclick: pin(false) }, "Pin"),
        h("button", { type: "button", onclick: pin(true) }, "Suppress"),
        h("button", { type: "button", onclick: clear, disabled: !e.pinned }, "Clear pin")),
      h("h2", {}, "Neighbourhood"),
      neighbourhood(e),
      h("div", { class: "grid2" },
        h("section", {}, h("h2", {}, "Aspects and attributes"),
          e.aspects.length ? e.aspects.map((a) => h("div", { class: "card" }, h("strong", {}, a.name),
            h("ul", {}, a.attributes.map((t) => h("li", {}, `${t.key ? `${t.key}: ` : ""}${t.value}`,
              t.kind !== "attribute" ? ` (${t.kind})` : "",
              t.source_memory_id ? [" ", h("a", { href: `/app/memories/${t.source_memory_id}` }, "source")] : null)))))
            : empty("No aspects.")),
        h("section", {}, h("h2", {}, "Dependencies"),
          e.dependencies.length ? h("ul", { class: "rows" }, e.dependencies.map((d) => h("li", {},
            d.direction === "out" ? "→ " : "← ", h("a", { href: `/app/graph/${d.entity_id}` }, d.entity_name),
            h("span", { class: "muted" }, ` ${d.type} · strength ${d.strength}`))))
            : empty("No dependencies."))),
      h("h2", {}, "Memories"),
      e.memories.length ? h("ul", { class: "rows" }, e.memories.map((m) => h("li", {},
        h("a", { class: "title", href: `/app/memories/${m.id}` }, clip(m.content)), h("div", { class: "meta" }, chip(m.type)))))
        : empty("No memories mention it."),
    ];
  }

  // Two hops around the entity: its neighbours on an inner ring, theirs on an outer ring
  // near the neighbour they hang from (fetched after the page draws, at most 8 neighbours).
  function neighbourhood(e) {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("class", "hood");
    svg.setAttribute("viewBox", "-420 -200 840 400");
    svg.setAttribute("role", "group");
    svg.setAttribute("aria-label", `${e.name} and the entities around it, two hops deep`);
    const node = (tag, attrs) => {
      const el = document.createElementNS(SVG, tag);
      for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
      return el;
    };
    const edges = node("g", {}), nodes = node("g", {});
    svg.append(edges, nodes);
    const placed = new Map([[e.id, [0, 0]]]);
    const place = (id, name, label, x, y, r) => {
      placed.set(id, [x, y]);
      const link = node("a", { href: `/app/graph/${id}`, tabindex: "0" });
      link.append(node("circle", { cx: x, cy: y, r }));
      const text = node("text", { x: x + r + 3, y: y + 4 });
      text.textContent = label ? `${name} (${label})` : name;
      link.append(text);
      link.addEventListener("click", (event) => { event.preventDefault(); navigate(`/app/graph/${id}`); });
      nodes.append(link);
    };
    const edge = (a, b) => {
      const [x1, y1] = placed.get(a), [x2, y2] = placed.get(b);
      edges.append(node("line", { x1, y1, x2, y2 }));
    };
    const first = [...new Map(e.dependencies.map((d) => [d.entity_id, d])).values()].slice(0, 16);
    first.forEach((d, i) => {
      const angle = (2 * Math.PI * i) / first.length - Math.PI / 2;
      place(d.entity_id, d.entity_name, `${d.direction === "out" ? "" : "← "}${d.type}`,
        Math.cos(angle) * 170, Math.sin(angle) * 95, 8);
      edge(e.id, d.entity_id);
    });
    nodes.append(node("circle", { cx: 0, cy: 0, r: 13, class: "focus" }));
    const label = node("text", { x: 17, y: 5 });
    label.textContent = e.name;
    nodes.append(label);
    first.slice(0, 8).forEach(async (d, i) => {
      let far;
      try {
        far = await api(`/api/knowledge/entities/${encodeURIComponent(d.entity_id)}`);
      } catch (err) {
        return; // the inner ring stands on its own
      }
      const base = (2 * Math.PI * i) / first.length - Math.PI / 2;
      const next = far.dependencies.filter((x) => !placed.has(x.entity_id)).slice(0, 4);
      next.forEach((x, j) => {
        if (placed.has(x.entity_id)) return edge(d.entity_id, x.entity_id);
        const angle = base + (j - (next.length - 1) / 2) * 0.22;
        place(x.entity_id, x.entity_name, "", Math.cos(angle) * 340, Math.sin(angle) * 175, 5);
        edge(d.entity_id, x.entity_id);
      });
    });
    return first.length ? svg : empty("No neighbours yet.");
  }

  refresh();
}
