// The chat page: asking (and following a run again when its stream drops before `done`), the example
// questions for the loaded graph, the action history, and the access token.

import { api, detailOf, readEvents, storeToken, storedToken, takeTokenFromLink } from "./api.js";
import { announce, el } from "./dom.js";
import { ActionHistory } from "./history.js";
import { Turn } from "./turn.js";

const RECONNECT_ATTEMPTS = 10;
const TITLE = document.title;
const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let conversationId = null;
let busy = false;
const waiting = new Set();  // turns that wait for a decision: the tab's title says so
const actionHistory = new ActionHistory($("history"));

async function follow(turn, response) {
  try {
    await readEvents(response, (id, data) => turn.receive(id, data));
  } catch (err) {
    console.warn("stream dropped", err);
  }
}

async function ask(question) {
  setBusy(true);
  $("examples").hidden = true;
  const turn = new Turn(question, { onWaiting: (on) => { on ? waiting.add(turn) : waiting.delete(turn); showWaiting(); } });
  try {
    const response = await api("/chat/stream", {
      method: "POST", headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify({ query: question, conversation_id: conversationId }) });
    if (!response.ok) return turn.fail(await detailOf(response));
    await follow(turn, response);
    for (let attempt = 1; !turn.done; attempt++) {
      if (!turn.workflowId || attempt > RECONNECT_ATTEMPTS) return turn.fail("the stream was lost");
      turn.setStatus(`connection lost: reconnecting (attempt ${attempt})…`, "reconnecting");
      await sleep(Math.min(500 * attempt, 5000));
      const before = turn.lastId;
      try {
        const again = await api(`/runs/${encodeURIComponent(turn.workflowId)}/events?after=${turn.lastId}`,
                                { headers: { Accept: "text/event-stream" } });
        if (!again.ok) {
          // 429: too many streams open for now; try again like a dropped connection
          if (again.status >= 400 && again.status < 500 && again.status !== 429) return turn.fail(await detailOf(again));
          continue;
        }
        turn.setStatus(turn.pendingStep ? "waiting for your decision" : "running", turn.pendingStep ? "waiting" : "running");
        await follow(turn, again);
        if (turn.lastId > before) attempt = 0;  // it got further: start counting again
      } catch (err) {
        console.warn("reconnect failed", err);
      }
    }
  } catch (err) {
    turn.fail(`could not ask: ${err}`);
  } finally {
    waiting.delete(turn);
    showWaiting();
    setBusy(false);
  }
}

function started(turnEvent) {
  conversationId = turnEvent.id;
  $("conversation-id").textContent = turnEvent.id;
}

function setBusy(value) {
  busy = value;
  $("send").disabled = value;
  $("new-conversation").disabled = value;
}

function showWaiting() {
  document.title = waiting.size ? `Decision needed · ${TITLE}` : TITLE;
}

// ---- example questions for the loaded graph ----

async function loadExamples() {
  let response;
  try {
    response = await api("/examples");
  } catch {
    return;
  }
  if (!response.ok) return;  // no graph of its own (404), no token yet (401), the graph down (503)
  const { graph, examples } = await response.json();
  const list = $("example-list");
  if (list.dataset.shown === JSON.stringify(examples)) return;  // the same again: keep the reader's focus
  list.dataset.shown = JSON.stringify(examples);
  $("examples-graph").textContent = `Written from the live schema of the graph '${graph}'.`;
  $("example-list").replaceChildren(...examples.map((example) => el("li", {},
    el("button", { type: "button", dataset: { kind: example.kind },
                   onclick: () => { $("question").value = example.question; $("question").focus(); } },
      el("span", { class: "kind", text: example.kind.replace("-", " ") }), example.question))));
  $("examples").hidden = examples.length === 0 || $("turns").children.length > 0;
}

// ---- the access token ----

function tokenNeeded() {
  const access = $("access");
  access.classList.add("needed");
  $("token-hint").textContent = "This service needs your access token: paste it here, then press Enter.";
  if (!access.open) {
    access.open = true;
    if (document.activeElement === document.body) $("token").focus();
  }
}

function tokenChanged() {
  const token = $("token").value.trim();
  if (token === storedToken() && !$("access").classList.contains("needed")) return;  // Enter, then leaving the box
  storeToken(token);
  $("access").classList.remove("needed");
  $("token-hint").textContent = storedToken() ? "Saved in this browser." : "No token: open mode's link carries one.";
  loadExamples();
  actionHistory.refresh();
}

// ---- wiring ----

$("ask").addEventListener("submit", (event) => {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question || busy) return;
  $("question").value = "";
  ask(question);
});

$("question").addEventListener("keydown", (event) => {  // Enter sends; Shift+Enter starts a new line
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    $("ask").requestSubmit();
  }
});

$("new-conversation").addEventListener("click", () => {
  conversationId = null;
  $("conversation-id").textContent = "new";
  $("turns").replaceChildren();
  $("examples").hidden = $("example-list").children.length === 0;
  announce("A new conversation.");
  $("question").focus();
});

$("token").addEventListener("change", tokenChanged);
$("token").addEventListener("keydown", (event) => { if (event.key === "Enter") { event.preventDefault(); tokenChanged(); } });
window.addEventListener("tgca:unauthorized", tokenNeeded);
window.addEventListener("tgca:actions-changed", () => actionHistory.refresh());
window.addEventListener("tgca:conversation", (event) => started(event.detail));

takeTokenFromLink();
$("token").value = storedToken();
loadExamples();
actionHistory.refresh();
