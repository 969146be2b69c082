// A word diff (longest common subsequence over whitespace-separated tokens) for showing what
// changed between two versions of a memory: <del> for removed words, <ins> for added ones.
import { h } from "./dom.js";

const MAX_CELLS = 4_000_000; // beyond this an LCS table is too slow; show both whole instead

export function diffWords(before, after) {
  const a = (before || "").split(/(\s+)/);
  const b = (after || "").split(/(\s+)/);
  if (a.length * b.length > MAX_CELLS) return [["del", before || ""], ["ins", after || ""]];
  const rows = a.length + 1, cols = b.length + 1;
  const table = new Uint32Array(rows * cols);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i * cols + j] = a[i] === b[j] ? table[(i + 1) * cols + j + 1] + 1
        : Math.max(table[(i + 1) * cols + j], table[i * cols + j + 1]);
    }
  }
  const out = [];
  const push = (kind, text) => {
    const prev = out[out.length - 1];
    if (prev && prev[0] === kind) prev[1] += text; else out.push([kind, text]);
  };
  let i = 0, j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) { push("same", a[i]); i++; j++; }
    else if (table[(i + 1) * cols + j] >= table[i * cols + j + 1]) push("del", a[i++]);
    else push("ins", b[j++]);
  }
  while (i < a.length) push("del", a[i++]);
  while (j < b.length) push("ins", b[j++]);
  return out;
}

export function diffView(before, after) {
  const parts = diffWords(before, after).map(([kind, text]) =>
    kind === "same" ? text : h(kind, {}, text));
  return h("div", { class: "diff content" }, parts);
}
