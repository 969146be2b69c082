// One memory: its content and fields, its history with a word diff between versions, and
// the actions: edit (sent with the version it was read at, so a change made meanwhile is a
// clear conflict, never a silent overwrite), pin/unpin, forget and recover.
// Keys: e edit, p pin, Escape back to the list.
import { api } from "../api.js";
import { chip, empty, failure, h, loading, toast, when } from "../dom.js";
import { diffView } from "../diff.js";

export function memoryPage(main, { params, navigate }) {
  const [id] = params;
  const state = { memory: null, editing: false };
  const body = h("div", {}, loading());
  main.append(h("p", {}, h("a", { href: "/app/memories" }, "← Memories")), body);
  const path = `/api/memory/${encodeURIComponent(id)}`;

  async function refresh() {
    body.replaceChildren(loading());
    try {
      const [memory, history] = await Promise.all([api(`${path}?include_deleted=true`), api(`${path}/history?include_deleted=true`)]);
      state.memory = memory;
      state.editing = false;
      draw(history.history);
    } catch (err) {
      body.replaceChildren(failure(err, refresh));
    }
  }

  function draw(history) {
    const m = state.memory;
    body.replaceChildren(h("div", {},
      h("h1", {}, "Memory ", h("span", { class: "muted small" }, m.id)),
      m.is_deleted ? h("p", { class: "banner" }, `Forgotten ${when(m.deleted_at)}; it can be recovered within the retention window.`) : null,
      h("div", { class: "card", id: "memory-view" }, h("div", { class: "content", id: "memory-content" }, m.content)),
      h("div", { class: "actions" }, actionButtons(m)),
      h("div", { id: "editor" }),
      h("div", { class: "card" }, fields(m)),
      h("h2", {}, "History"),
      history.length ? h("ol", { class: "rows", reversed: true }, [...history].reverse().map(event))
        : empty("No history.")));
  }

  function actionButtons(m) {
    if (m.is_deleted) return [h("button", { type: "button", id: "recover", onclick: recover }, "Recover")];
    return [
      h("button", { type: "button", id: "edit", onclick: edit }, "Edit"),
      h("button", { type: "button", id: "pin", onclick: togglePin }, m.pinned ? "Unpin" : "Pin"),
      h("button", { type: "button", id: "forget", class: "danger", onclick: forget }, "Forget"),
    ];
  }

  function edit() {
    const m = state.memory;
    const text = h("textarea", { name: "content", "aria-label": "Content" }, m.content);
    const type = h("input", { name: "type", value: m.type, size: 12 });
    const tags = h("input", { name: "tags", value: (m.tags || []).join(","), size: 24 });
    const reason = h("input", { name: "reason", placeholder: "why (optional)", size: 24 });
    const message = h("div", { role: "alert" });
    const form = h("form", { class: "card" },
      text, h("div", { class: "actions" },
        h("label", {}, "Type ", type), h("label", {}, "Tags ", tags), reason,
        h("button", { type: "submit", class: "primary" }, "Save"),
        h("button", { type: "button", onclick: refresh }, "Cancel")),
      h("p", { class: "muted small" }, `Editing version ${m.version}.`), message);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const changes = { content: text.value, type: type.value.trim(),
        tags: tags.value.split(",").map((t) => t.trim()).filter(Boolean), version: m.version };
      if (reason.value.trim()) changes.reason = reason.value.trim();
      try {
        await api(path, { method: "PATCH", body: changes });
        toast("Saved.");
        refresh();
      } catch (err) {
        message.replaceChildren(conflictOrError(err));
      }
    });
    state.editing = true;
    document.getElementById("editor").replaceChildren(form);
    text.focus();
  }

  function conflictOrError(err) {
    if (err.status !== 409) return failure(err);
    return h("div", { class: "banner conflict" },
      h("strong", {}, "Version conflict: "), err.message,
      " Someone changed this memory after you opened it. ",
      h("button", { type: "button", onclick: refresh }, "Reload the current version"));
  }

  async function act(run, done) {
    try {
      await run();
      toast(done);
      refresh();
    } catch (err) {
      toast(`${err.message}`);
    }
  }

  const togglePin = () => act(() => api(path, { method: "PATCH",
    body: { pinned: !state.memory.pinned, version: state.memory.version } }),
  state.memory.pinned ? "Unpinned." : "Pinned.");

  function forget() {
    const m = state.memory;
    if (!window.confirm(m.pinned ? "This memory is pinned. Forget it anyway?" : "Forget this memory?")) return;
    act(() => api(`${path}${m.pinned ? "?force=true" : ""}`, { method: "DELETE" }), "Forgotten.");
  }

  const recover = () => act(() => api(`${path}/recover`, { method: "POST", body: {} }), "Recovered.");

  const keys = (event) => {
    if (event.target.closest("input, textarea, select") || !state.memory) return;
    if (event.key === "e" && !state.memory.is_deleted && !state.editing) { event.preventDefault(); edit(); }
    else if (event.key === "p" && !state.memory.is_deleted) togglePin();
    else if (event.key === "Escape") navigate("/app/memories");
  };
  document.addEventListener("keydown", keys);
  refresh();
  return () => document.removeEventListener("keydown", keys);
}

function fields(m) {
  const rows = [
    ["type", m.type], ["tags", (m.tags || []).join(", ") || "–"], ["project", m.project || "–"],
    ["who", m.who || "–"], ["agent", m.agent_id], ["importance", m.importance], ["confidence", m.confidence],
    ["version", m.version], ["pinned", m.pinned ? "yes" : "no"], ["created", when(m.created_at)],
    ["updated", when(m.updated_at)], ["source", m.source_type ? `${m.source_type} ${m.source_id || ""}` : "–"],
    ["extraction", m.extraction_status], ["embedding", m.embedding_model || "none"],
  ];
  return h("dl", { class: "fields" }, rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, String(v))]));
}

function event(e) {
  const changed = e.old_content !== null && e.new_content !== null && e.old_content !== e.new_content;
  return h("li", { class: "history-event" },
    h("div", { class: "meta" }, chip(e.event), h("span", {}, when(e.created_at)),
      h("span", {}, `by ${e.changed_by}`), e.reason ? h("span", {}, `— ${e.reason}`) : null),
    changed ? diffView(e.old_content, e.new_content)
      : e.new_content ? h("div", { class: "content muted" }, e.new_content) : null);
}
