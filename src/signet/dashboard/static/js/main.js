// The app's entry: checks the session, then routes `location.pathname` to a page module.
// Links under /app/ navigate without reloading (history API); every page draws into <main>
// and may return a cleanup function, called before the next page draws.
import { logout, startSession } from "./api.js";
import { h, toast } from "./dom.js";
import { memoriesPage } from "./pages/memories.js";
import { memoryPage } from "./pages/memory.js";
import { reviewPage } from "./pages/review.js";
import { graphPage, entityPage } from "./pages/graph.js";
import { mapPage } from "./pages/map.js";
import { sessionPage, sessionsPage } from "./pages/sessions.js";
import { pipelinePage } from "./pages/pipeline.js";
import { welcomePage } from "./pages/welcome.js";

const ROUTES = [
  [/^\/app\/memories\/([^/]+)$/, memoryPage],
  [/^\/app\/memories\/?$/, memoriesPage],
  [/^\/app\/review\/?$/, reviewPage],
  [/^\/app\/graph\/([^/]+)$/, entityPage],
  [/^\/app\/graph\/?$/, graphPage],
  [/^\/app\/map\/?$/, mapPage],
  [/^\/app\/sessions\/([^/]+)$/, sessionPage],
  [/^\/app\/sessions\/?$/, sessionsPage],
  [/^\/app\/pipeline\/?$/, pipelinePage],
  [/^\/app\/welcome\/?$/, welcomePage],
];

const main = document.getElementById("main");
let cleanup = null;
let session = null;

export function navigate(url, { replace = false } = {}) {
  history[replace ? "replaceState" : "pushState"](null, "", url);
  render();
}

function render() {
  if (typeof cleanup === "function") cleanup();
  cleanup = null;
  const path = location.pathname;
  if (!session && !path.startsWith("/app/welcome")) return navigate("/app/welcome", { replace: true });
  const found = ROUTES.map(([re, page]) => [path.match(re), page]).find(([m]) => m);
  for (const link of document.querySelectorAll("#nav a")) {
    link.classList.toggle("active", path.startsWith(link.getAttribute("href")));
  }
  if (!found) {
    main.replaceChildren(h("p", { class: "state error" }, `No page at ${path}.`));
    return;
  }
  const [match, page] = found;
  const query = new URLSearchParams(location.search);
  main.replaceChildren();
  cleanup = page(main, { params: match.slice(1).map(decodeURIComponent), query, session, navigate });
  main.focus({ preventScroll: true });
}

document.addEventListener("click", (event) => {
  const link = event.target.closest("a[href^='/app/']");
  if (!link || event.defaultPrevented || event.button !== 0 || link.target) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(link.getAttribute("href"));
});
window.addEventListener("popstate", render);
window.addEventListener("signet:unauthorized", () => {
  if (!session) return;
  session = null;
  toast("Your session ended; log in again.");
  showSession();
  navigate("/app/welcome", { replace: true });
});

function showSession() {
  const who = document.getElementById("who");
  const button = document.getElementById("logout");
  who.textContent = session ? `${session.name} (${session.role})` : "";
  button.hidden = !session;
}

document.getElementById("logout").addEventListener("click", async () => {
  try {
    await logout();
  } catch (err) {
    toast(`Logout failed: ${err.message}`);
    return;
  }
  session = null;
  showSession();
  navigate("/app/welcome?logout=1", { replace: true });
});

async function boot() {
  try {
    session = await startSession();
  } catch (err) {
    session = null;
  }
  showSession();
  const path = location.pathname;
  if (path === "/" || path === "/app/" || path === "/app") navigate("/app/memories", { replace: true });
  else if (session && path.startsWith("/app/welcome")) navigate("/app/memories", { replace: true });
  else render();
}

boot();
