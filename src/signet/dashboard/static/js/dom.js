// Small DOM helpers shared by the pages: element building, the loading / empty / error
// states every page shows, a pager, dates, and toasts.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else if (key === "style") el.style.cssText = value; // CSSOM: allowed by the page's CSP
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key in el && typeof value !== "string") el[key] = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

export const loading = (text = "Loading…") => h("p", { class: "state loading" }, text);
export const empty = (text) => h("p", { class: "state empty" }, text);

export function failure(err, retry) {
  return h("div", { class: "state error", role: "alert" },
    h("strong", {}, err.status ? `Error ${err.status}: ` : "Error: "), err.message || String(err),
    retry ? h("div", {}, h("button", { type: "button", onclick: retry }, "Retry")) : null);
}

// Draw `loader()`'s result with `draw`, showing loading, then the result or the error.
export async function load(target, loader, draw) {
  target.replaceChildren(loading());
  try {
    const data = await loader();
    const drawn = [].concat(draw(data)).flat(Infinity);
    target.replaceChildren(...drawn.filter((x) => x !== null && x !== undefined && x !== false));
  } catch (err) {
    target.replaceChildren(failure(err, () => load(target, loader, draw)));
  }
}

export function pager({ offset, limit, total, count, go }) {
  const last = total !== undefined ? Math.min(offset + limit, total) : offset + count;
  const hasNext = total !== undefined ? offset + limit < total : count === limit;
  return h("div", { class: "pager" },
    h("button", { type: "button", disabled: offset === 0, onclick: () => go(Math.max(0, offset - limit)) }, "← Previous"),
    h("span", { class: "muted" }, count === 0 ? "none" : `${offset + 1}–${last}${total !== undefined ? ` of ${total}` : ""}`),
    h("button", { type: "button", disabled: !hasNext, onclick: () => go(offset + limit) }, "Next →"));
}

export function when(ts) {
  if (!ts) return "–";
  const date = new Date(ts);
  return Number.isNaN(date.getTime()) ? ts : date.toISOString().slice(0, 16).replace("T", " ");
}

export function clip(text, n = 240) {
  return text && text.length > n ? `${text.slice(0, n)}…` : text || "";
}

export function toast(message) {
  const box = document.getElementById("toast");
  const note = h("div", {}, message);
  box.append(note);
  setTimeout(() => note.remove(), 4000);
}

export const chip = (text, cls = "") => h("span", { class: `chip ${cls}` }, text);
