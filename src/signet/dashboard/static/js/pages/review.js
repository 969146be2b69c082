// The review queue: proposals the pipeline parked (a contradiction, a gated update), the
// current text beside the proposed one with a diff, approve or reject each.
import { api } from "../api.js";
import { chip, empty, failure, h, loading, toast, when } from "../dom.js";
import { diffView } from "../diff.js";

export function reviewPage(main, { query, navigate }) {
  const status = query.get("status") || "pending";
  const list = h("div", {}, loading());
  main.append(h("h1", {}, "Review queue"),
    h("div", { class: "actions" }, ["pending", "approved", "rejected", "all"].map((s) =>
      h("a", { href: `/app/review?status=${s}`, class: s === status ? "chip good" : "chip" }, s))),
    list);

  async function refresh() {
    list.replaceChildren(loading());
    try {
      const reply = await api("/api/memory/review-queue", { query: { status, limit: 200 } });
      list.replaceChildren(reply.items.length ? h("ul", { class: "rows" }, reply.items.map(item))
        : empty(status === "pending" ? "Nothing waits for review." : `No ${status} items.`));
    } catch (err) {
      list.replaceChildren(failure(err, refresh));
    }
  }

  function item(r) {
    const resolve = (verb) => async () => {
      try {
        await api(`/api/memory/review-queue/${encodeURIComponent(r.id)}/${verb}`, { method: "POST" });
        toast(verb === "approve" ? "Approved and applied." : "Rejected.");
        refresh();
      } catch (err) {
        toast(err.message);
      }
    };
    return h("li", { class: "review-item", dataset: { id: r.id } },
      h("div", { class: "meta" }, chip(r.action), chip(r.status, r.status === "pending" ? "" : "good"),
        h("span", {}, when(r.created_at)),
        h("a", { href: `/app/memories/${encodeURIComponent(r.memory_id)}` }, "open memory")),
      h("p", {}, r.reason),
      h("div", { class: "sides" },
        h("div", { class: "side" }, h("div", { class: "muted small" }, "Current"), h("div", { class: "content" }, r.old_content)),
        h("div", { class: "side" }, h("div", { class: "muted small" }, "Proposed"),
          r.new_content !== null ? diffView(r.old_content, r.new_content) : h("em", {}, "delete the memory"))),
      r.status === "pending" ? h("div", { class: "actions" },
        h("button", { type: "button", class: "primary", onclick: resolve("approve") }, "Approve"),
        h("button", { type: "button", onclick: resolve("reject") }, "Reject")) : null);
  }

  refresh();
}
