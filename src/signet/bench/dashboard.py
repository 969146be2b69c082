"""`signet bench dashboard`: the dashboard's weight and speed in headless Chromium (Debian's, driven
by playwright): first load cold and warm, the map renderer at 10k and 100k generated points, and
with `--map-memories N` the map page on real memories.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx

from signet.bench.load import Daemon
from signet.errors import SignetError

__all__ = ["CHROMIUM_ARGS", "format_dashboard", "run_dashboard"]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
VIEWPORT = {"width": 1280, "height": 860}
TYPES = ("fact", "preference", "decision", "episodic")

RENDER_SCRIPT = """async (n) => {
  const { Scatter, colorize } = await import('/app/static/js/scatter.js');
  const canvas = document.createElement('canvas');
  canvas.style.cssText = 'width:1200px;height:700px;display:block';
  document.body.append(canvas);
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const gauss = () => Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand());
  const x = new Float32Array(n), y = new Float32Array(n), labels = new Array(n);
  const centres = [[-120, -80], [100, 120], [140, -110], [-90, 130]];
  for (let i = 0; i < n; i++) {
    const c = centres[i % 4];
    x[i] = Math.max(-210, Math.min(210, c[0] + gauss() * 35));
    y[i] = Math.max(-210, Math.min(210, c[1] + gauss() * 35));
    labels[i] = ['fact', 'preference', 'decision', 'event'][i % 4];
  }
  const { color } = colorize(labels);
  let t = performance.now();
  const plot = new Scatter(canvas, { x, y, color });
  plot.resize();
  const build = performance.now() - t;
  const frames = [];
  for (let i = 0; i < 11; i++) frames.push(plot.render());
  frames.shift();  // the first frame allocates the canvas buffer
  frames.sort((a, b) => a - b);
  t = performance.now();
  for (let i = 0; i < 1000; i++) plot.nearest((i * 37) % canvas.width, (i * 53) % canvas.height, 8);
  const hover = (performance.now() - t);  // 1,000 lookups: ms total = µs each
  canvas.remove();
  return { points: n, build_ms: build, frame_ms_p50: frames[5], frame_ms_max: frames[9], hover_us: hover };
}"""

TRANSFER_SCRIPT = """() => {
  const entries = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')];
  return { bytes: entries.reduce((sum, e) => sum + (e.transferSize || 0), 0),
           decoded: entries.reduce((sum, e) => sum + (e.decodedBodySize || 0), 0),
           requests: entries.length };
}"""


def run_dashboard(
    memories: int = 200, points: Sequence[int] = (10_000, 100_000), runs: int = 5,
    *, map_memories: int = 0, chromium: str = CHROMIUM,
    progress: Callable[[str], None] = lambda _m: None,
) -> dict[str, Any]:
    sync_playwright = _playwright()
    if not Path(chromium).exists():
        raise SignetError(f"{chromium} is missing: install Debian's chromium (apt-get install"
                          " chromium), or pass --chromium PATH")
    with tempfile.TemporaryDirectory(prefix="signet-bench-dashboard-") as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        provider = "local" if map_memories else "none"
        (workspace / "agent.yaml").write_text(f"embedding:\n  provider: {provider}\n")
        if map_memories:
            _seed_map(workspace, map_memories, progress)
        daemon = Daemon(workspace)
        try:
            headers = daemon.wait_ready()
            progress(f"dashboard: {memories} memories into a fresh daemon")
            _fill(daemon.url, headers, memories)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
                try:
                    progress(f"dashboard: first load, {runs} cold and warm runs")
                    load = _first_loads(browser, daemon, workspace, runs)
                    render = []
                    for n in points:
                        progress(f"dashboard: map renderer at {n:,} points")
                        render.append(_render(browser, daemon, n))
                    if map_memories:
                        progress(f"dashboard: the map page on {map_memories:,} memories")
                        end_to_end = _map_page(browser, daemon, workspace)
                finally:
                    browser.close()
        finally:
            daemon.stop()
    result = {"memories": memories, "runs": runs, "first_load": load, "map": render,
              "load_average": list(os.getloadavg())}
    if map_memories:
        result["map_page"] = {"memories": map_memories, **end_to_end}
    return result


def _seed_map(workspace: Path, n: int, progress: Callable[[str], None]) -> None:
    """n memories embedded by the bundled model, written before the daemon opens the store."""
    from signet.app import SignetApp
    from signet.bench.perf import synthetic_corpus
    from signet.config import Config

    config = Config.load(workspace, {})
    config = dataclasses.replace(
        config, pipeline=dataclasses.replace(config.pipeline, enabled=False),
        embedding=dataclasses.replace(config.embedding, write_path="inline"),  # the map needs vectors
    )
    corpus = synthetic_corpus(n)
    with SignetApp.open(config) as app:
        for start in range(0, n, 1000):
            app.remember_many([{"content": t, "type": TYPES[i % len(TYPES)]}
                               for i, t in enumerate(corpus[start : start + 1000], start)])
            if (start // 1000) % 10 == 0:
                progress(f"dashboard: remembered {min(start + 1000, n):,}/{n:,} for the map")


def _map_page(browser: Any, daemon: Daemon, workspace: Path) -> dict[str, Any]:
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(login_link(daemon, workspace))
        page.wait_for_selector("ul.rows li, .state.empty")
        timings = []
        for _ in range(2):  # computing, then cached
            started = time.perf_counter()
            page.click("nav a[data-page=map]")
            page.wait_for_selector("canvas#map[data-points]", timeout=600_000)
            timings.append((time.perf_counter() - started) * 1000)
            drawn = page.evaluate("() => document.querySelector('canvas#map').dataset")
            size = page.evaluate("""() => performance.getEntriesByType('resource')
                .filter(e => e.name.includes('/api/embeddings/projection'))
                .reduce((m, e) => Math.max(m, e.decodedBodySize), 0)""")
            page.click("nav a[data-page=memories]")
            page.wait_for_selector("ul.rows li, .state.empty")
    finally:
        context.close()
    return {"points": int(drawn["points"]), "first_ms": round(timings[0], 1),
            "cached_ms": round(timings[1], 1), "frame_ms": float(drawn["renderMs"]),
            "projection_bytes": size}


def _playwright() -> Any:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        raise SignetError("the dashboard benchmark needs the playwright package (pip install"
                          " 'signet-memory[test]') and Debian's chromium") from exc
    return sync_playwright


def _fill(url: str, headers: dict[str, str], n: int) -> None:
    with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
        for i in range(n):
            client.post("/api/memory/remember", json={
                "content": f"benchmark memory {i}: the team decided item {i % 17} in week {i % 52}",
                "tags": [f"t{i % 5}"], "project": f"p{i % 3}",
            }).raise_for_status()


def login_link(daemon: Daemon, workspace: Path) -> str:
    env = {**os.environ, "SIGNET_WORKSPACE": str(workspace), "SIGNET_PORT": str(daemon.port),
           "SIGNET_BIND": "127.0.0.1"}
    done = subprocess.run([sys.executable, "-m", "signet", "dashboard", "--print"], env=env,
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise SignetError(f"signet dashboard --print failed: {done.stderr.strip()}")
    return done.stdout.strip()


def _first_loads(browser: Any, daemon: Daemon, workspace: Path, runs: int) -> dict[str, Any]:
    cold: list[dict[str, float]] = []
    warm: list[dict[str, float]] = []
    for _ in range(runs):
        link = login_link(daemon, workspace)
        context = browser.new_context(viewport=VIEWPORT)  # a fresh profile: an empty cache
        try:
            page = context.new_page()
            cold.append(_timed_load(page, functools.partial(page.goto, link)))
            warm.append(_timed_load(page, page.reload))
        finally:
            context.close()
    return {"cold": _summary(cold), "warm": _summary(warm)}


def _timed_load(page: Any, navigate: Callable[[], Any]) -> dict[str, float]:
    started = time.perf_counter()
    navigate()
    page.wait_for_selector("ul.rows li, .state.empty")
    ms = (time.perf_counter() - started) * 1000
    sizes = page.evaluate(TRANSFER_SCRIPT)
    return {"ms": ms, "bytes": sizes["bytes"], "decoded_bytes": sizes["decoded"],
            "requests": sizes["requests"]}


def _summary(samples: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(statistics.median(s[key] for s in samples), 1) for key in samples[0]}


def _render(browser: Any, daemon: Daemon, n: int) -> dict[str, Any]:
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(f"{daemon.url}/app/welcome")  # the shell; the renderer needs no data
        page.wait_for_selector("#main h1")
        result = page.evaluate(RENDER_SCRIPT, n)
    finally:
        context.close()
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in result.items()}


def format_dashboard(data: dict[str, Any]) -> str:
    lines = [f"first load ({data['memories']} memories, median of {data['runs']}):"]
    for kind in ("cold", "warm"):
        d = data["first_load"][kind]
        lines.append(f"  {kind}: {d['bytes'] / 1024:.1f} KiB over the wire"
                     f" ({d['decoded_bytes'] / 1024:.1f} KiB decoded, {d['requests']:.0f}"
                     f" requests), {d['ms']:.0f} ms to the memories list")
    lines.append("map renderer:")
    for r in data["map"]:
        lines.append(f"  {r['points']:>7,} points: frame p50 {r['frame_ms_p50']} ms (max"
                     f" {r['frame_ms_max']}), grid build {r['build_ms']} ms, hover lookup"
                     f" {r['hover_us']} µs")
    if "map_page" in data:
        m = data["map_page"]
        lines.append(f"map page on {m['memories']:,} memories: {m['points']:,} points drawn"
                     f" {m['first_ms']:.0f} ms after the click (projection computed),"
                     f" {m['cached_ms']:.0f} ms cached; frame {m['frame_ms']} ms;"
                     f" projection answer {m['projection_bytes'] / 2**20:.1f} MiB")
    lines.append("load average: " + " ".join(f"{v:.2f}" for v in data["load_average"]))
    return "\n".join(lines)
