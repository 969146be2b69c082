// The one way pages reach the daemon: same-origin fetch with the session cookie, the CSRF
// token on every state-changing call, and errors as ApiError {status, code, message} carrying
// the daemon's own message (which names the problem).

let csrf = null;

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function queryString(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    if (value !== undefined && value !== null && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

export async function api(path, { method = "GET", body, query } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET") {
    if (csrf) headers["X-Signet-CSRF"] = csrf;
    headers["X-Signet-Actor"] = "dashboard"; // history's changed_by: a person, through this app
  }
  let reply;
  try {
    reply = await fetch(path + queryString(query), {
      method, headers, credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError(0, "network", "the daemon does not answer (is it running?)");
  }
  const data = await reply.json().catch(() => null);
  if (!reply.ok) {
    if (reply.status === 401) window.dispatchEvent(new CustomEvent("signet:unauthorized"));
    throw new ApiError(reply.status, data?.code || `http_${reply.status}`,
      data?.error || reply.statusText || `HTTP ${reply.status}`);
  }
  if (data && typeof data === "object") Object.defineProperty(data, "_status", { value: reply.status });
  return data;
}

export async function startSession() {
  const session = await api("/api/dashboard/session");
  csrf = session.csrf;
  return session;
}

export async function logout() {
  await api("/api/dashboard/logout", { method: "POST" });
  csrf = null;
}
