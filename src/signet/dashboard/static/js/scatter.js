// A canvas scatter plot for up to a few hundred thousand points: each frame writes the points
// straight into one ImageData buffer (no per-point canvas calls), so 100k points draw in a few
// milliseconds; a uniform grid over the data answers "which point is under the cursor" by
// looking only at nearby cells. Pan with a drag, zoom with the wheel (or + / - keys).

const GRID = 128;
const EXTENT = 210; // projections are scaled to [-210, 210]

export class Scatter {
  // points: {x: Float32Array, y: Float32Array, color: Uint32Array (0xAABBGGRR per point)}
  constructor(canvas, points) {
    this.canvas = canvas;
    this.points = points;
    this.count = points.x.length;
    this.view = { zoom: 1, cx: 0, cy: 0 };
    this.highlight = -1;
    this.lastRenderMs = 0;
    this.index = buildGrid(points);
  }

  resize() {
    const ratio = window.devicePixelRatio || 1;
    const rect = this.canvas.getBoundingClientRect();
    this.canvas.width = Math.max(1, Math.round(rect.width * ratio));
    this.canvas.height = Math.max(1, Math.round(rect.height * ratio));
    this.ratio = ratio;
  }

  // device pixels per data unit
  scale() {
    return (Math.min(this.canvas.width, this.canvas.height) / (2 * EXTENT * 1.05)) * this.view.zoom;
  }

  toScreen(x, y) {
    const s = this.scale();
    return [(x - this.view.cx) * s + this.canvas.width / 2, (this.view.cy - y) * s + this.canvas.height / 2];
  }

  toData(px, py) {
    const s = this.scale();
    return [(px - this.canvas.width / 2) / s + this.view.cx, this.view.cy - (py - this.canvas.height / 2) / s];
  }

  render() {
    const started = performance.now();
    const { width, height } = this.canvas;
    const ctx = this.canvas.getContext("2d");
    const image = ctx.createImageData(width, height);
    const pixels = new Uint32Array(image.data.buffer);
    const { x, y, color } = this.points;
    const s = this.scale();
    const ox = width / 2 - this.view.cx * s, oy = height / 2 + this.view.cy * s;
    const dot = this.count > 20000 ? 1 : 2; // pixels on each side of the centre pixel
    for (let i = 0; i < this.count; i++) {
      const px = (x[i] * s + ox) | 0, py = (oy - y[i] * s) | 0;
      if (px < dot || py < dot || px >= width - dot || py >= height - dot) continue;
      const c = color[i];
      for (let dy = -dot + 1; dy < dot; dy++) {
        const row = (py + dy) * width;
        for (let dx = -dot + 1; dx < dot; dx++) pixels[row + px + dx] = c;
      }
    }
    ctx.putImageData(image, 0, 0);
    if (this.highlight >= 0) {
      const [hx, hy] = this.toScreen(x[this.highlight], y[this.highlight]);
      ctx.strokeStyle = "#e0245e";
      ctx.lineWidth = 2 * this.ratio;
      ctx.beginPath();
      ctx.arc(hx, hy, 6 * this.ratio, 0, 2 * Math.PI);
      ctx.stroke();
    }
    this.lastRenderMs = performance.now() - started;
    return this.lastRenderMs;
  }

  // The point nearest to device pixel (px, py) within `radius` device pixels, or -1.
  nearest(px, py, radius) {
    const [dx, dy] = this.toData(px, py);
    const r = radius / this.scale();
    const { cells, starts, order } = this.index;
    const c0 = cell(dx - r), c1 = cell(dx + r), r0 = cell(dy - r), r1 = cell(dy + r);
    let best = -1, bestD = r * r;
    for (let row = r0; row <= r1; row++) {
      for (let col = c0; col <= c1; col++) {
        const k = row * GRID + col;
        for (let j = starts[k]; j < starts[k] + cells[k]; j++) {
          const i = order[j];
          const ex = this.points.x[i] - dx, ey = this.points.y[i] - dy;
          const d = ex * ex + ey * ey;
          if (d <= bestD) { bestD = d; best = i; }
        }
      }
    }
    return best;
  }

  zoomAt(px, py, factor) {
    const [bx, by] = this.toData(px, py);
    this.view.zoom = Math.min(400, Math.max(0.5, this.view.zoom * factor));
    const [ax, ay] = this.toData(px, py);
    this.view.cx += bx - ax;
    this.view.cy += by - ay;
  }

  panBy(dxPixels, dyPixels) {
    const s = this.scale();
    this.view.cx -= dxPixels / s;
    this.view.cy += dyPixels / s;
  }
}

function cell(v) {
  return Math.min(GRID - 1, Math.max(0, Math.floor(((v + EXTENT) / (2 * EXTENT)) * GRID)));
}

// Counting sort of the points into grid cells: cells[k] points from order[starts[k]].
function buildGrid({ x, y }) {
  const n = x.length;
  const cells = new Uint32Array(GRID * GRID);
  const of = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    of[i] = cell(y[i]) * GRID + cell(x[i]);
    cells[of[i]]++;
  }
  const starts = new Uint32Array(GRID * GRID);
  for (let k = 1; k < starts.length; k++) starts[k] = starts[k - 1] + cells[k - 1];
  const fill = starts.slice();
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[fill[of[i]]++] = i;
  return { cells, starts, order };
}

// Colours for categories, most frequent first; the rest share grey.
export const PALETTE = ["#3558d6", "#e0245e", "#1b9e77", "#d95f02", "#7570b3", "#e6ab02",
  "#66a61e", "#a6761d", "#1f78b4", "#b15928", "#6a3d9a", "#17becf"];
export const OTHER = "#9aa0a6";

export function colorOf(hex) {
  const v = parseInt(hex.slice(1), 16);
  return (0xff << 24 | (v & 0xff) << 16 | (v & 0xff00) | (v >> 16) & 0xff) >>> 0;
}

// {color: Uint32Array, legend: [[label, hex, count]]} for a column of category labels.
export function colorize(labels) {
  const counts = new Map();
  for (const label of labels) counts.set(label ?? "none", (counts.get(label ?? "none") || 0) + 1);
  const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1]);
  const hexes = new Map(ranked.map(([label], i) => [label, PALETTE[i] || OTHER]));
  const packed = new Map([...hexes].map(([label, hex]) => [label, colorOf(hex)]));
  const color = new Uint32Array(labels.length);
  labels.forEach((label, i) => { color[i] = packed.get(label ?? "none"); });
  const legend = ranked.slice(0, PALETTE.length).map(([label, count]) => [label, hexes.get(label), count]);
  if (ranked.length > PALETTE.length) {
    legend.push(["other", OTHER, ranked.slice(PALETTE.length).reduce((sum, [, n]) => sum + n, 0)]);
  }
  return { color, legend };
}
