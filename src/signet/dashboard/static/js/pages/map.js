// The embeddings map: every memory as a point of the 2D projection, coloured by type, project
// or community; hover shows the memory, click opens it. The projection comes from
// /api/embeddings/projection (UMAP with the `viz` extra, else PCA), which answers 202 while
// it computes; the page polls until it is ready.
import { api } from "../api.js";
import { clip, empty, failure, h, loading } from "../dom.js";
import { colorize, Scatter } from "../scatter.js";

const SOURCE = "/api/embeddings/projection";
const COLOR_BY = { type: "types", project: "projects", community: "communities" };

export function mapPage(main, { query, navigate }) {
  const by = COLOR_BY[query.get("color")] ? query.get("color") : "type";
  const status = h("div", {}, loading("Loading the projection…"));
  const legend = h("div", { class: "legend" });
  const canvas = h("canvas", { id: "map", tabindex: "0", "aria-label": "Embeddings map: hover a point to read it, click to open it" });
  const tip = h("div", { class: "tip", hidden: true });
  const wrap = h("div", { class: "mapwrap", hidden: true }, canvas, tip);
  const picker = h("select", { name: "color", "aria-label": "Colour by", onchange: (e) => navigate(`/app/map?color=${e.target.value}`) },
    Object.keys(COLOR_BY).map((k) => h("option", { value: k, selected: k === by }, k)));
  main.append(h("h1", {}, "Embeddings map"), h("div", { class: "actions" }, h("label", {}, "Colour by ", picker)), status, legend, wrap);

  let timer = null, closed = false, plot = null;
  const memories = new Map();

  async function start() {
    try {
      const reply = await api(SOURCE, { query: { dimensions: 2 } });
      if (closed) return;
      if (reply._status === 202) {
        status.replaceChildren(loading(`Computing the projection of ${reply.count ?? "the"} memories; this page updates by itself.`));
        timer = setTimeout(start, Math.min(5000, Math.max(500, reply.retry_after_ms || 1000)));
        return;
      }
      const data = normalise(reply);
      if (!data.ids.length) {
        status.replaceChildren(empty("No memory has an embedding yet, so there is nothing to map."));
        return;
      }
      draw(data);
    } catch (err) {
      status.replaceChildren(failure(err, start));
    }
  }

  function draw(data) {
    const { color, legend: keys } = colorize(data[COLOR_BY[by]]);
    wrap.hidden = false;
    plot = new Scatter(canvas, { x: Float32Array.from(data.x), y: Float32Array.from(data.y), color });
    plot.resize();
    const ms = plot.render();
    canvas.signetPlot = plot; // for the browser tests and `signet bench dashboard`
    canvas.dataset.points = String(plot.count);
    canvas.dataset.renderMs = ms.toFixed(1);
    status.replaceChildren(h("p", { class: "muted small", id: "map-status" },
      `${plot.count.toLocaleString()} memories · ${data.method || "projection"} · drawn in ${ms.toFixed(1)} ms · drag to pan, wheel to zoom`));
    legend.replaceChildren(...keys.map(([label, hex, n]) => h("span", {}, h("i", { style: `background:${hex}` }), `${label} (${n})`)));
    interact(data);
  }

  function interact(data) {
    let drag = null, frame = 0, hovered = -1;
    const at = (event) => {
      const rect = canvas.getBoundingClientRect();
      return [(event.clientX - rect.left) * plot.ratio, (event.clientY - rect.top) * plot.ratio];
    };
    const redraw = () => { cancelAnimationFrame(frame); frame = requestAnimationFrame(() => plot.render()); };
    canvas.addEventListener("wheel", (event) => {
      event.preventDefault();
      plot.zoomAt(...at(event), event.deltaY < 0 ? 1.25 : 0.8);
      redraw();
    }, { passive: false });
    canvas.addEventListener("mousedown", (event) => { drag = { x: event.clientX, y: event.clientY, moved: false }; });
    window.addEventListener("mouseup", () => { setTimeout(() => { drag = null; }, 0); });
    canvas.addEventListener("mousemove", (event) => {
      if (drag && event.buttons) {
        const dx = event.clientX - drag.x, dy = event.clientY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 2) drag.moved = true;
        plot.panBy(dx * plot.ratio, dy * plot.ratio);
        drag.x = event.clientX; drag.y = event.clientY;
        redraw();
        return;
      }
      const found = plot.nearest(...at(event), 8 * plot.ratio);
      if (found !== hovered) {
        hovered = found;
        plot.highlight = found;
        redraw();
        showTip(found, event, data);
      }
    });
    canvas.addEventListener("mouseleave", () => { tip.hidden = true; });
    canvas.addEventListener("click", () => {
      if (hovered >= 0 && !(drag && drag.moved)) navigate(`/app/memories/${encodeURIComponent(data.ids[hovered])}`);
    });
    canvas.addEventListener("keydown", (event) => {
      const centre = [canvas.width / 2, canvas.height / 2];
      if (event.key === "+" || event.key === "=") plot.zoomAt(...centre, 1.25);
      else if (event.key === "-") plot.zoomAt(...centre, 0.8);
      else if (event.key === "0") plot.view = { zoom: 1, cx: 0, cy: 0 };
      else return;
      redraw();
    });
    window.addEventListener("resize", onResize);
  }

  function onResize() {
    if (!plot) return;
    plot.resize();
    plot.render();
  }

  async function showTip(index, event, data) {
    if (index < 0) { tip.hidden = true; return; }
    const rect = canvas.parentElement.getBoundingClientRect();
    tip.style.left = `${Math.min(event.clientX - rect.left + 14, rect.width - 240)}px`;
    tip.style.top = `${event.clientY - rect.top + 14}px`;
    tip.hidden = false;
    const id = data.ids[index];
    const head = `${data.types?.[index] || ""}${data.projects?.[index] ? ` · ${data.projects[index]}` : ""}`;
    if (data.contents?.[index]) memories.set(id, data.contents[index]);
    tip.replaceChildren(h("div", { class: "muted small" }, head), h("div", {}, memories.get(id) ?? "…"));
    if (!memories.has(id)) {
      try {
        const memory = await api(`/api/memory/${encodeURIComponent(id)}`);
        memories.set(id, clip(memory.content, 200));
      } catch (err) {
        memories.set(id, `(${err.message})`);
      }
      if (plot.highlight === index) tip.lastChild.textContent = memories.get(id);
    }
  }

  start();
  return () => { closed = true; clearTimeout(timer); window.removeEventListener("resize", onResize); };
}

// Columnar {ids, x, y, types, projects, communities, contents} from the projection's nodes.
export function normalise(reply) {
  const points = reply.nodes || [];
  const pick = (p, ...names) => names.map((n) => p[n]).find((v) => v !== undefined) ?? null;
  return {
    method: reply.method, ids: points.map((p) => pick(p, "id", "memory_id")),
    x: points.map((p) => Number(pick(p, "x") ?? p.coords?.[0])), y: points.map((p) => Number(pick(p, "y") ?? p.coords?.[1])),
    types: points.map((p) => pick(p, "type", "memory_type")), projects: points.map((p) => pick(p, "project")),
    communities: points.map((p) => { const c = pick(p, "community", "community_id"); return c && c.slice(0, 8); }),
    contents: points.map((p) => pick(p, "content")),
  };
}
