// Pipeline and health: queue depth by job type and state, the workers, dead letters (paged,
// requeue one or all), latency per route, the error ring, embedding coverage and disk use.
import { api } from "../api.js";
import { chip, clip, empty, failure, h, load, loading, pager, toast, when } from "../dom.js";

const PAGE = 20;

export function pipelinePage(main, { query, navigate }) {
  const offset = Number(query.get("offset") || 0);
  const parts = {
    queue: h("div", {}), workers: h("div", {}), dead: h("div", { id: "dead-letters" }),
    latency: h("div", {}), errors: h("div", {}), coverage: h("div", {}), disk: h("div", {}),
  };
  main.append(h("h1", {}, "Pipeline and health"),
    h("div", { class: "grid2" },
      h("section", {}, h("h2", {}, "Queue"), parts.queue),
      h("section", {}, h("h2", {}, "Workers"), parts.workers)),
    h("h2", {}, "Dead letters"), parts.dead,
    h("div", { class: "grid2" },
      h("section", {}, h("h2", {}, "Embedding coverage"), parts.coverage),
      h("section", {}, h("h2", {}, "Storage and health checks"), parts.disk)),
    h("h2", {}, "Latency"), parts.latency,
    h("h2", {}, "Recent errors"), parts.errors);

  load(parts.queue, () => api("/api/pipeline/status"), (s) => {
    parts.workers.replaceChildren(...workers(s));
    return queue(s.queue);
  });
  const showDead = () => load(parts.dead, () => api("/api/pipeline/jobs", { query: { status: "dead", limit: PAGE, offset } }),
    (page) => dead(page, showDead, navigate, offset));
  showDead();
  load(parts.coverage, () => api("/api/embeddings/status"), coverage);
  load(parts.disk, () => Promise.all([api("/api/status"), api("/api/repair/report")]), disk);
  load(parts.latency, () => api("/api/telemetry/latency"), latency);
  load(parts.errors, () => api("/api/telemetry/errors"), (r) => r.errors.length
    ? table(["when", "operation", "status", "code", "request"], r.errors.slice(-50).reverse().map((e) =>
      [when(e.at || e.ts || e.created_at), e.operation, e.status, e.code, e.request_id || "–"]))
    : empty("No errors recorded since the daemon started."));
}

function table(heads, rows, numeric = []) {
  return h("table", {}, h("thead", {}, h("tr", {}, heads.map((t, i) => h("th", { class: numeric.includes(i) ? "num" : "" }, t)))),
    h("tbody", {}, rows.map((r) => h("tr", {}, r.map((v, i) => h("td", { class: numeric.includes(i) ? "num" : "" }, v ?? "–"))))));
}

function queue(depths) {
  const types = Object.keys(depths).sort();
  if (!types.length) return empty("The queue is empty: no job has ever been enqueued.");
  const states = [...new Set(types.flatMap((t) => Object.keys(depths[t])))].sort();
  return table(["job type", ...states], types.map((t) => [t, ...states.map((s) => depths[t][s] ?? 0)]),
    states.map((_, i) => i + 1));
}

function workers(status) {
  const w = status.workers || {};
  const head = h("p", {}, chip(status.enabled ? "pipeline on" : "pipeline off", status.enabled ? "good" : "bad"), " ",
    chip(w.running ? (w.paused ? "paused" : "running") : "not running", w.running && !w.paused ? "good" : "bad"), " ",
    status.shadow_mode ? chip("shadow mode") : null, status.mutations_frozen ? chip("mutations frozen", "bad") : null,
    status.llm ? chip(`llm ${status.llm.provider || ""} ${status.llm.model || ""}`) : chip("no LLM"));
  const names = Object.keys(w.workers || {});
  return [head, names.length ? table(["worker", "ticks", "failures", "last error"], names.map((n) => {
    const v = w.workers[n];
    return [n, v.ticks ?? "–", v.failures ?? "–", clip(v.last_error || "–", 120)];
  }), [1, 2]) : empty("No worker has run in this daemon yet.")];
}

function dead(page, again, navigate, offset) {
  const requeue = (ids) => async () => {
    try {
      const reply = await api("/api/repair/requeue-dead", { method: "POST", body: ids ? { job_ids: ids } : {} });
      toast(`Requeued ${reply.requeued} job${reply.requeued === 1 ? "" : "s"}.`);
      again();
    } catch (err) { toast(err.message); }
  };
  if (!page.items.length) return empty(offset ? "No more dead letters." : "No dead letters: every failed job was retried or completed.");
  return [
    h("div", { class: "actions" }, h("button", { type: "button", id: "requeue-all", onclick: requeue(null) }, "Requeue every dead job")),
    table(["job", "type", "memory", "attempts", "failed", "error", ""], page.items.map((j) => [
      h("code", {}, j.id.slice(0, 12)), j.job_type,
      j.memory_id ? h("a", { href: `/app/memories/${j.memory_id}` }, j.memory_id.slice(0, 8)) : "–",
      `${j.attempts}/${j.max_attempts}`, when(j.failed_at || j.updated_at), clip(j.error || "", 140),
      h("button", { type: "button", class: "requeue", onclick: requeue([j.id]) }, "Requeue"),
    ])),
    pager({ offset, limit: PAGE, count: page.items.length, go: (next) => navigate(`/app/pipeline?offset=${next}`) }),
  ];
}

function coverage(s) {
  const a = s.audit || {};
  const share = a.memories ? Math.round((100 * a.embedded) / a.memories) : 100;
  return [h("p", {}, `${s.provider || "no provider"} ${s.model || ""} (${s.dimensions || "–"} dimensions)`),
    h("div", { class: "bar", style: `width:${share}%` }),
    h("p", { class: "muted" }, `${a.embedded ?? 0} of ${a.memories ?? 0} memories embedded (${share}%) · ${a.missing ?? 0} missing · ${a.stale ?? 0} stale vectors`)];
}

function disk([status, report]) {
  const storage = report.checks?.storage || {};
  const rows = [["workspace", status.workspace], ["database", status.database], ["memories", status.memories],
    ["database size", bytes(storage.db_bytes ?? 0)],
    ["WAL size", `${bytes(storage.wal_bytes ?? 0)} (checkpoint above ${bytes(storage.wal_limit_bytes ?? 0)})`]];
  const checks = Object.entries(report.checks || {});
  return [h("dl", { class: "fields" }, rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, String(v ?? "–"))])),
    h("p", { class: "meta", id: "health-checks" }, checks.map(([name, c]) => chip(`${name} ${c.ok ? "ok" : "needs repair"}`, c.ok ? "good" : "bad")))];
}

function bytes(n) {
  const units = ["B", "KB", "MB", "GB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

function latency(r) {
  const ops = Object.entries(r.operations || {}).sort((a, b) => b[1].p95_ms - a[1].p95_ms);
  if (!ops.length) return empty("No requests timed yet.");
  const top = Math.max(...ops.map(([, v]) => v.p99_ms || v.p95_ms || 1));
  return table(["operation", "count", "p50 ms", "p95 ms", "p99 ms", "p95"], ops.map(([name, v]) => [
    name, v.count, v.p50_ms, v.p95_ms, v.p99_ms,
    h("div", { class: "bar", style: `width:${Math.max(1, (100 * v.p95_ms) / top)}%` }),
  ]), [1, 2, 3, 4]);
}
