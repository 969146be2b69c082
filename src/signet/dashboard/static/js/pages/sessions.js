// Sessions: the imported harness sessions (search, paged), one session's transcript, the
// thread heads (summaries, arcs, epochs per thread), and MEMORY.md, the head the next session
// starts from (with "synthesize now").
import { api } from "../api.js";
import { chip, clip, empty, failure, h, load, loading, pager, toast, when } from "../dom.js";

const PAGE = 20;

export function sessionsPage(main, { query, navigate }) {
  const offset = Number(query.get("offset") || 0);
  const q = query.get("q") || "";
  const list = h("div", { id: "sessions" });
  const threads = h("div", {});
  const head = h("div", {});
  const form = h("form", { class: "filters", role: "search" },
    h("label", {}, "Search transcripts", h("input", { type: "search", name: "q", value: q })),
    h("button", { type: "submit", class: "primary" }, "Search"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const value = new FormData(form).get("q");
    navigate(`/app/sessions${value ? `?q=${encodeURIComponent(value)}` : ""}`);
  });
  main.append(h("h1", {}, "Sessions"), form, h("div", { class: "grid2" },
    h("section", {}, h("h2", {}, q ? `Sessions matching “${q}”` : "Recent sessions"), list),
    h("section", {}, h("h2", {}, "Thread heads"), threads, h("h2", {}, "MEMORY.md"), head)));

  load(list, () => (q ? api("/api/sessions/search", { query: { q, limit: 50 } })
    : api("/api/sessions", { query: { limit: PAGE, offset } })), (reply) => [
    reply.items.length ? h("ul", { class: "rows" }, reply.items.map(sessionRow))
      : empty(q ? "No transcript matches." : "No sessions yet: the harness hooks import them as agents work."),
    q ? null : pager({ offset, limit: PAGE, total: reply.total, count: reply.items.length,
      go: (next) => navigate(`/app/sessions?offset=${next}`) }),
  ]);
  load(threads, () => api("/api/threads"), (reply) => reply.items.length
    ? h("ul", { class: "rows" }, reply.items.map((t) => h("li", {},
      h("strong", {}, t.thread), h("div", { class: "meta" }, t.project ? chip(t.project) : null,
        h("span", {}, `${t.summaries} summaries · ${t.arcs} arcs · ${t.epochs} epochs`), h("span", {}, `last ${when(t.last)}`)))))
    : empty("No thread has a summary yet (summaries need an LLM)."));
  const showHead = () => load(head, async () => {
    try {
      return await api("/api/identity/MEMORY.md");
    } catch (err) {
      if (err.status === 404) return null;
      throw err;
    }
  }, (file) => [
    file && file.content ? h("pre", { class: "card content" }, file.content) : empty("MEMORY.md has not been written yet."),
    h("div", { class: "actions" }, h("button", { type: "button", onclick: synthesize }, "Synthesize now")),
  ]);
  async function synthesize() {
    head.replaceChildren(loading("Synthesizing…"));
    try {
      const reply = await api("/api/memory/synthesize", { method: "POST" });
      toast(`MEMORY.md written: ${reply.items} items, ${reply.tokens} tokens.`);
    } catch (err) {
      toast(err.message);
    }
    showHead();
  }
  showHead();
}

function sessionRow(s) {
  return h("li", {},
    h("a", { class: "title", href: `/app/sessions/${encodeURIComponent(s.session_id)}${s.project ? `?project=${encodeURIComponent(s.project)}` : ""}` },
      s.session_id),
    h("div", { class: "meta" }, chip(s.harness || "session"), s.project ? chip(s.project) : null,
      h("span", {}, `${s.message_count ?? "?"} messages`), h("span", {}, when(s.started_at)),
      s.summary_status ? chip(`summary ${s.summary_status}`) : null),
    s.snippet ? h("p", { class: "muted" }, clip(s.snippet, 300)) : null);
}

export function sessionPage(main, { params, query }) {
  const [id] = params;
  const body = h("div", {});
  main.append(h("p", {}, h("a", { href: "/app/sessions" }, "← Sessions")), body);
  load(body, () => api(`/api/sessions/${encodeURIComponent(id)}`, { query: { project: query.get("project") } }), (s) => [
    h("h1", {}, "Session ", h("span", { class: "muted small" }, s.session_id)),
    h("div", { class: "meta" }, chip(s.harness), s.project ? chip(s.project) : null,
      h("span", {}, `${when(s.started_at)} – ${when(s.ended_at)}`), h("span", {}, `${s.message_count} messages`)),
    (s.messages || []).length ? h("ul", { class: "rows" }, s.messages.map((m) => h("li", {},
      h("div", { class: "meta" }, chip(m.role), m.ts ? h("span", {}, when(m.ts)) : null),
      h("div", { class: "content" }, m.text))))
      : empty("This session has no messages."),
  ]);
}
