// The chat API as the page uses it: the bearer token (kept in this browser), requests that carry it, the
// text of a refusal, and server-sent events read from a fetch() response (POST /chat/stream is a POST, which
// EventSource cannot send). docs/http-api.md describes every route.

const TOKEN_KEY = "tgca.chat.token";

export function storedToken() {
  return localStorage.getItem(TOKEN_KEY) || "";
}

export function storeToken(token) {
  if (token) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
}

// `tg-confidence up` prints the chat's link with open mode's token in the fragment, which browsers never
// send to a server: keep it as the page's token and take it out of the address bar.
export function takeTokenFromLink() {
  const linked = new URLSearchParams(location.hash.slice(1)).get("token");
  if (!linked) return;
  storeToken(linked);
  history.replaceState(null, "", location.pathname + location.search);
}

// A request with the token; a 401 also tells the page (the "tgca:unauthorized" event) to ask for one.
export async function api(path, options = {}) {
  const headers = { ...(options.headers || {}) };
  const token = storedToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(path, { ...options, headers });
  if (response.status === 401) window.dispatchEvent(new CustomEvent("tgca:unauthorized"));
  return response;
}

export async function postJson(path, body) {
  return api(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
}

export async function detailOf(response) {
  try {
    const body = await response.json();
    const detail = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail ?? body);
    return `${response.status}: ${detail}`;
  } catch {
    return `${response.status} ${response.statusText}`;
  }
}

// Server-sent events from a fetch() response: onEvent(id or null, data) per event. Returns when the
// server ends the stream; throws when the connection drops.
export async function readEvents(response, onEvent) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "", id = null, data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const received = buffer + value;
    const cut = received.endsWith("\r") ? received.length - 1 : received.length;  // "\r\n" may be split in two
    const lines = received.slice(0, cut).split(/\r\n|\r|\n/);
    buffer = lines.pop() + received.slice(cut);
    for (const line of lines) {
      if (line === "") {
        if (data.length) onEvent(id, data.join("\n"));
        id = null;
        data = [];
        continue;
      }
      if (line.startsWith(":")) continue;  // a comment (the server's keep-alive ping)
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let text = colon < 0 ? "" : line.slice(colon + 1);
      if (text.startsWith(" ")) text = text.slice(1);
      if (field === "id") id = text;
      else if (field === "data") data.push(text);
    }
  }
}
