// The console talks only to Fathom's public HTTP API: with the user's API key (Bearer), or with the
// session cookie of a password sign-in plus that session's CSRF token (X-CSRF-Token) on every request.
import { message as english } from "./i18n";

const KEY_STORAGE = "fathom.apiKey";
// Set while this browser holds a password session: the session cookie is HttpOnly, so without this hint
// the console could only find out by asking, and tokenLogin answers 401 (a console error) when there is none.
const SESSION_HINT = "fathom.session";
let csrfToken = "";

/** The signed-in session's CSRF token (from sign-in or tokenLogin); "" when signed out. */
export function setCsrf(token: string | null | undefined): void {
  csrfToken = token ?? "";
  if (csrfToken) localStorage.setItem(SESSION_HINT, "1");
  else localStorage.removeItem(SESSION_HINT);
}

/** Whether this browser signed in with a password and has not signed out since. */
export function maybeSignedIn(): boolean {
  return localStorage.getItem(SESSION_HINT) === "1";
}

function authHeaders(): Record<string, string> {
  const key = getKey();
  if (key) return { Authorization: `Bearer ${key}` };
  return csrfToken ? { "X-CSRF-Token": csrfToken } : {};
}

export function getKey(): string {
  return localStorage.getItem(KEY_STORAGE) ?? "";
}
export function setKey(key: string): void {
  if (key) localStorage.setItem(KEY_STORAGE, key);
  else localStorage.removeItem(KEY_STORAGE);
}

export class ApiError extends Error {
  /** `data` of the error envelope (e.g. the workflow checks' `{problems}`). */
  constructor(public status: number, public statusText: string, message: string, public data?: any) {
    super(english(message, statusText));
  }
}

/** Where people reach this server: FATHOM_PUBLIC_URL when the server announces one (a meta tag of the
 * console's page), else this console's address. Share links, widget snippets and invitation links use it. */
export const publicOrigin = (): string =>
  document.querySelector<HTMLMetaElement>("meta[name=fathom-public-url]")?.content || location.origin;

type Method = "GET" | "POST" | "PUT" | "DELETE";

// Requests of `api` not answered yet: signing out waits for them, so that none of them reaches the server
// after the session has ended (it would be answered 401, a console error, on a page that is going away).
const inFlight = new Set<Promise<unknown>>();

/** Wait until no `api` request is in flight (new ones included), or `timeoutMs` has passed. */
export async function requestsSettled(timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (inFlight.size > 0 && Date.now() < deadline) {
    const wait = new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now())));
    await Promise.race([Promise.allSettled([...inFlight]), wait]);
  }
}

/** Call an enveloped route ({code, statusText, message, data}) and return `data`; `anonymous` sends
 * neither the key nor the CSRF token (a share page's visitor). */
export async function api<T = any>(method: Method, path: string, body?: unknown, query?: Record<string, unknown>, anonymous = false): Promise<T> {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
  const headers: Record<string, string> = anonymous ? {} : authHeaders();
  let payload: BodyInit | undefined;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    payload = JSON.stringify(body);
  }
  const request = fetch(url, { method, headers, body: payload });
  inFlight.add(request);
  let res: Response;
  try {
    res = await request;
  } finally {
    inFlight.delete(request);
  }
  let json: any = null;
  try {
    json = await res.json();
  } catch {
    throw new ApiError(res.status, "badResponse", `${res.status} ${res.statusText}`);
  }
  if (!res.ok || (json && typeof json.code === "number" && json.code !== 200)) {
    throw new ApiError(res.status, json?.statusText ?? "", json?.message || json?.error?.message || `${res.status} ${res.statusText}`, json?.data ?? undefined);
  }
  return (json && "data" in json ? json.data : json) as T;
}

export type SseEvent = { event: string; data: any };

/** POST and read a text/event-stream answer, calling `onEvent` per event; abort with `signal`. */
export async function streamSse(path: string, body: unknown, onEvent: (e: SseEvent) => void, signal?: AbortSignal, anonymous = false): Promise<void> {
  const res = await fetch(path, {
    method: "POST",
    headers: { ...(anonymous ? {} : authHeaders()), "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify(body),
    signal,
  });
  const type = res.headers.get("content-type") ?? "";
  if (!res.ok || !type.includes("text/event-stream")) {
    let message = `${res.status} ${res.statusText}`;
    let statusText = "";
    try {
      // a refused stream is one `event: error` frame whose data is the envelope
      const raw = await res.text();
      const frame = type.includes("text/event-stream") ? raw.split("\n").find((l) => l.startsWith("data:"))?.slice(5) : undefined;
      const json = JSON.parse(frame ?? raw);
      message = json.message || json.error?.message || JSON.stringify(json);
      statusText = typeof json.statusText === "string" ? json.statusText : "";
    } catch { /* keep the status line */ }
    throw new ApiError(res.status, statusText, message);
  }
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
    let cut: number;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = "message";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (!data.length) continue;
      const text = data.join("\n");
      if (text === "[DONE]") { onEvent({ event: "done", data: null }); continue; }
      let parsed: any = text;
      try { parsed = JSON.parse(text); } catch { /* plain text */ }
      onEvent({ event, data: parsed });
    }
  }
}

export function fmtTime(iso?: string | null): string {
  if (!iso) return "";
  const d = new Date(iso);
  return isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** POST and save the answer as a file (the CSV export): the browser's download of a Blob. */
export async function download(path: string, body: unknown, filename: string): Promise<void> {
  const res = await fetch(path, { method: "POST", headers: { ...authHeaders(), "Content-Type": "application/json" }, body: JSON.stringify(body) });
  if (!res.ok) {
    let json: any = null;
    try { json = await res.json(); } catch { /* not JSON */ }
    throw new ApiError(res.status, json?.statusText ?? "", json?.message || `${res.status} ${res.statusText}`);
  }
  const url = URL.createObjectURL(await res.blob());
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
