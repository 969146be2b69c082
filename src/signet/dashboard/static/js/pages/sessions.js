// Sessions (when the daemon has the session layer): sessions with their summaries and thread
// heads, and the MEMORY.md the next session starts from.
import { api } from "../api.js";
import { clip, empty, failure, h, load, when } from "../dom.js";

export function sessionsPage(main) {
  const list = h("div", {});
  const preview = h("div", {});
  main.append(h("h1", {}, "Sessions"), h("div", { class: "grid2" },
    h("section", {}, h("h2", {}, "Recent sessions"), list),
    h("section", {}, h("h2", {}, "MEMORY.md"), preview)));
  load(list, async () => {
    try {
      return await api("/api/sessions", { query: { limit: 50 } });
    } catch (err) {
      if (err.status === 404 && err.code === "not_found" && /route|path|not found/i.test(err.message)) return null;
      throw err;
    }
  }, (reply) => {
    if (reply === null) return empty("This daemon has no session layer yet.");
    const items = reply.items || reply.sessions || [];
    return items.length ? h("ul", { class: "rows" }, items.map((s) => h("li", {},
      h("strong", {}, s.title || s.id), h("div", { class: "meta" }, h("span", {}, when(s.started_at || s.created_at)),
        s.agent_id ? h("span", {}, s.agent_id) : null, s.harness ? h("span", {}, s.harness) : null),
      s.summary ? h("p", {}, clip(s.summary, 400)) : null,
      s.thread_head || s.thread ? h("p", { class: "muted" }, `thread: ${clip(s.thread_head || s.thread, 200)}`) : null)))
      : empty("No sessions recorded yet.");
  });
  load(preview, () => api("/api/identity/MEMORY.md"), (f) => f.content
    ? h("pre", { class: "card content" }, f.content) : empty("MEMORY.md is empty."));
}
