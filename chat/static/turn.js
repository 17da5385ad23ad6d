// One question and everything its run streams: the plan as a graph of its steps, the thoughts, an action's
// plan and the decision it waits for, a batch's progress, and the answer with its confidence and why.
// The elements of the latest turn carry ids (#answer, #status, ...); every turn's carry data-testid.

import { detailOf, postJson } from "./api.js";
import { ConfidenceBar, announce, count, el, fixed, reasonList, table } from "./dom.js";
import { PlanGraph } from "./plan-graph.js";

const CONFIDENCE_LINE = /^\s*Confidence:\s*([0-9]*\.?[0-9]+)\s*(?:[-–—:]\s*(.*))?$/;
const DRY_RUN = /^Dry run: (\d+) of (\d+) would succeed(?:, (\d+) would fail \(([\s\S]*)\))?\.$/;
const PAST_DECISION = new Set(["action_progress", "action_complete", "content_start", "done"]);
const OP_TEXT = { eq: "=", ne: "!=", lt: "<", le: "<=", gt: ">", ge: ">=", in: "in" };
const SHOWN_TARGETS = 50;
const CHOICE_LABELS = { accept: "Approve", retry: "Retry", skip: "Skip", abort: "Abort" };
const CHOICE_HINTS = {
  accept: "Approve lets the run go on with this", retry: "Retry runs the step again",
  skip: "Skip leaves it out", abort: "Abort ends the run",
};
// An approval request's arguments (workflows/action_flow.py), as an approver reads them.
const ARGUMENT_LABELS = {
  action_name: "Action", entity_type: "Entity type", targets: "Targets", would_succeed: "Would succeed (dry run)",
  would_fail: "Would fail (dry run)", parameters: "Values written", related: "Chosen through", filters: "Where",
  left_out: "Left out of the selection", query: "Query",
};

const parametersText = (params) => Object.entries(params || {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ");
const filtersText = (filters) => (filters || [])
  .map((f) => `${f.property} ${OP_TEXT[f.op] || f.op} ${JSON.stringify(f.value)}`).join(" and ");
const duration = (seconds) => (seconds >= 120 ? `${Math.round(seconds / 60)} min` : `${Math.round(seconds)} s`);

let turns = 0;

export class Turn {
  constructor(question, { onWaiting } = {}) {
    this.el = document.getElementById("turn-template").content.firstElementChild.cloneNode(true);
    this.key = `t${++turns}`;
    for (const old of document.querySelectorAll("#turns [data-testid]")) {
      if (old.id === old.dataset.testid) old.removeAttribute("id");  // the latest turn's parts only
    }
    this.answerBar = new ConfidenceBar("Answer confidence", "confidence");
    this.el.querySelector(".answer-confidence").replaceWith(this.answerBar.root);
    for (const part of this.el.querySelectorAll("[data-testid]")) part.id = part.dataset.testid;
    const heading = this.el.querySelector("h3.asked");
    heading.id = `${this.key}-asked`;  // stays when the next turn takes the ids
    this.el.setAttribute("aria-labelledby", heading.id);
    this.part("asked").textContent = question;
    this.plan = new PlanGraph(this.part("plan-box"), this.key);
    this.onWaiting = onWaiting || (() => {});
    document.getElementById("turns").append(this.el);
    this.workflowId = "";
    this.lastId = 0;
    this.done = false;
    this.answerText = "";
    this.outcomes = new Map();  // entity id -> "" (succeeded) or the reason it failed
    this.pendingStep = "";  // the step whose decision buttons are shown
    this.actionPlan = null;
    this.dryRun = null;  // {failures: Map(entity -> reason), wouldFail, listedAll}
    this.scored = false;
  }

  part(name) { return this.el.querySelector(`[data-testid="${name}"]`); }
  show(name, visible = true) { this.part(name).hidden = !visible; }

  setStatus(text, state = "running") {
    const badge = this.part("status");
    badge.textContent = text;
    badge.dataset.state = state;
    this.el.classList.toggle("waiting", state === "waiting");
  }

  get status() { return this.part("status").dataset.state; }

  fail(message) {
    this.part("error").textContent = message;
    this.show("error");
    this.setStatus("failed", "failed");
    this.part("answer").setAttribute("aria-busy", "false");
    this.closeDecision("The run ended before a decision was made.");
    announce(`The run failed: ${message}`);
  }

  receive(id, data) {
    let event;
    try { event = JSON.parse(data); } catch { console.warn("not JSON", data); return; }
    if (id !== null && /^\d+$/.test(id)) this.lastId = Number(id);
    const following = window.innerHeight + window.scrollY >= document.body.scrollHeight - 80;
    this.handle(event, id === null);
    if (following && !this.el.contains(document.activeElement)) {
      document.getElementById("ask").scrollIntoView({ block: "end" });  // keep up with the run, unless scrolled away
    }
  }

  handle(e, replayed) {
    // A fast run may go past the decision before the API reports override_resolved.
    if (PAST_DECISION.has(e.type)) this.overrideResolved("");
    switch (e.type) {
      case "conversation_id": return this.started(e);
      case "thinking": case "observation": return this.thought(e.type, e.content || "");
      case "run_state": return this.plan.update(e.plan, e.steps);
      case "action_plan": return this.actionPlanned(e.plan || {});
      case "override_request": return this.overrideRequested(e);
      case "override_resolved": return this.overrideResolved(e.step_id);
      case "action_progress": return this.progress(e);
      case "action_error": this.outcomes.set(e.entity_id, e.error || "failed"); return this.renderOutcomes();
      case "action_complete": return this.complete(e.results || {});
      case "content_start": this.show("answer-box"); this.part("thoughts").open = false; return;
      case "content": return this.answer(e.content || "", replayed);
      case "error": return this.fail(e.content || "error");
      case "confidence": return this.confidence(e);
      case "done": return this.finished();
      default: console.info("unknown event", e);
    }
  }

  started(e) {
    this.workflowId = e.workflow_id;
    window.dispatchEvent(new CustomEvent("tgca:conversation", { detail: e }));
    this.part("workflow-id").textContent = e.workflow_id;
    this.setStatus("running");
    const link = this.part("temporal-link");
    if (/^https?:\/\//.test(e.temporal_ui || "")) {
      link.href = e.temporal_ui;
      link.hidden = false;
    }
    announce("The run started.");
  }

  finished() {
    this.done = true;
    this.part("answer").setAttribute("aria-busy", "false");
    if (this.part("error").hidden) {
      this.setStatus("done", "done");
      const score = this.answerBar.value.textContent;
      announce(score !== "–" ? `Answered, with confidence ${score}.` : "The run is done.");
    }
  }

  thought(kind, content) {
    const item = el("li", { class: kind, text: content });
    this.part("thought-list").append(item);
    this.part("thought-count").textContent = String(this.part("thought-list").children.length);
    this.plan.note(kind, content);
    const dry = kind === "observation" && content.match(DRY_RUN);
    if (dry) this.dryRunSeen(dry);
  }

  // ---- an action: its plan, what it changes, its targets ----

  actionPlanned(plan) {
    this.actionPlan = plan;
    this.show("plan");
    const n = plan.target_count ?? (plan.targets || []).length;
    this.part("plan-summary").textContent =
      `${plan.action_name} on ${n} ${plan.entity_type} entit${n === 1 ? "y" : "ies"}`;
    const given = parametersText(plan.parameters), where = filtersText(plan.filters);
    const related = plan.related
      ? [plan.related.excluded ? "not of" : "of", plan.related.class, plan.related.name && `'${plan.related.name}'`,
         plan.related.filters && plan.related.filters.length && `with ${filtersText(plan.related.filters)}`]
        .filter(Boolean).join(" ")
      : "";
    const leftOut = (plan.left_out || []).join("; ");
    const chosen = [related, where && `where ${where}`].filter(Boolean).join(" ");
    const details = [given && `With ${given}.`, chosen && `Targets ${chosen}.`,
                     leftOut && `Left out of the selection: ${leftOut}.`].filter(Boolean).join(" ");
    this.part("plan-details").textContent = details;
    this.show("plan-details", Boolean(details));
    this.part("plan-description").textContent = plan.description || "";
    this.renderChanges(plan);
    this.renderCounts();
    this.renderTargets();
  }

  renderChanges(plan) {
    const changes = (plan.changes || []).map((c) => {
      if (c.debit) return el("li", { text: `debits ${c.account || "the account"} by each one's ${c.debit}` });
      const value = JSON.stringify(c.value ?? null);
      return el("li", {}, el("code", { text: c.property }), ` becomes ${value}`,
                c.parameter ? ` (the ${c.parameter} given)` : "");
    });
    this.part("plan-changes").replaceChildren(...changes);
    this.show("plan-changes-box", changes.length > 0);
    const undo = this.part("plan-undo");
    if (plan.irreversible === undefined) {
      undo.hidden = true;
    } else {
      undo.hidden = false;
      undo.className = plan.irreversible ? "irreversible" : "meta";
      undo.textContent = plan.irreversible ? "It cannot be undone."
        : `It can be undone afterwards (${plan.inverse}), from the action history.`;
    }
  }

  renderCounts() {
    const plan = this.actionPlan || {};
    const items = [];
    const n = plan.target_count ?? (plan.targets || []).length;
    items.push(el("li", { dataset: { count: "targets" } }, el("strong", { text: String(n) }), ` ${n === 1 ? "target" : "targets"}`));
    if (this.dryRun) {
      items.push(el("li", { dataset: { count: "would-succeed" } }, el("strong", { text: String(this.dryRun.wouldSucceed) }),
                    " would succeed"),
                 el("li", { dataset: { count: "would-fail" } }, el("strong", { text: String(this.dryRun.wouldFail) }),
                    " would fail"));
    }
    this.part("plan-counts").replaceChildren(...items);
  }

  // "Dry run: 18 of 20 would succeed, 2 would fail (PO-1: Insufficient funds; PO-2: Order already paid)."
  dryRunSeen([, succeed, total, fail, listed]) {
    const ids = new Set((this.actionPlan?.targets || []).map((t) => t.entity_id));
    const failures = new Map();
    let last = null;
    for (const part of (listed || "").split("; ")) {
      const colon = part.indexOf(": ");
      const id = colon > 0 ? part.slice(0, colon) : "";
      if (ids.has(id) || (!ids.size && id)) {
        last = id;
        failures.set(id, part.slice(colon + 2));
      } else if (last) {
        failures.set(last, `${failures.get(last)}; ${part}`);  // a reason that holds "; " itself
      }
    }
    this.dryRun = { wouldSucceed: Number(succeed), total: Number(total), wouldFail: Number(fail || 0), failures,
                    listedAll: failures.size === Number(fail || 0) };
    this.renderCounts();
    this.renderTargets();
  }

  renderTargets(all = false) {
    const plan = this.actionPlan;
    if (!plan) return;
    const targets = plan.targets || [];
    const shown = all ? targets : targets.slice(0, SHOWN_TARGETS);
    const dry = this.dryRun;
    const verdict = (id) => {
      if (!dry) return "";
      if (dry.failures.has(id)) return `would fail: ${dry.failures.get(id)}`;
      return dry.listedAll ? "would succeed" : "";
    };
    const nameOf = (t) => (t.entity_name && t.entity_name !== t.entity_id ? t.entity_name : "");
    const named = shown.some((t) => nameOf(t));  // ids that are their own names need no second column
    const columns = ["Entity", ...(named ? ["Name"] : []), ...(dry ? ["Dry run"] : [])];
    const rows = shown.map((t) => [t.entity_id, ...(named ? [nameOf(t)] : []), ...(dry ? [verdict(t.entity_id)] : [])]);
    const total = plan.target_count ?? targets.length;
    const caption = shown.length < total
      ? `Targets: showing ${shown.length} of ${total}` + (targets.length < total ? " (the rest are counted, and in the action history once run)" : "")
      : `Targets: all ${total}`;
    const frame = table(columns, rows, caption);
    const body = frame.querySelector("tbody");
    [...body.rows].forEach((row, i) => {
      row.dataset.entity = shown[i].entity_id;
      if (dry && dry.failures.has(shown[i].entity_id)) row.lastElementChild.classList.add("fails");
    });
    const more = shown.length < targets.length
      ? el("button", { type: "button", text: `Show all ${targets.length} listed targets`,
                       onclick: () => this.renderTargets(true) })
      : null;
    this.part("targets").replaceChildren(frame, ...(more ? [more] : []));
  }

  // ---- the decision a run waits for ----

  overrideRequested(e) {
    if (e.step_id === this.pendingStep) return;  // the same request again (after a reconnect)
    this.pendingStep = e.step_id;
    const card = this.part("override");
    card.hidden = false;
    card.classList.remove("decided");
    this.show("override-body");
    this.setStatus("waiting for your decision", "waiting");
    const args = e.arguments || {};
    const title = this.part("override-title");
    title.textContent = args.left_out
      ? `Left out of the selection: ${args.left_out}. The targets may be more than was asked for.`
      : "Your decision is needed";
    title.classList.toggle("left-out", Boolean(args.left_out));
    const score = typeof e.score === "number" ? fixed(e.score) : "?";
    const threshold = typeof e.threshold === "number" ? fixed(e.threshold) : "?";
    this.part("override-what").textContent = `${e.function} (step ${e.step_id}): confidence ${score}, `
      + `threshold ${threshold}. Deciding needs the role '${e.role}'`
      + (e.timeout_s ? `; the run waits up to ${duration(e.timeout_s)}.` : ".");
    const why = String(e.reasoning || "").replace(/^approval needed:\s*/, "");
    this.part("override-reasoning").replaceChildren(el("h5", { text: "Why it asks" }), reasonList(why));
    const facts = Object.entries(args).map(([key, value]) => el("div", { dataset: { argument: key } },
      el("dt", { text: ARGUMENT_LABELS[key] || key }),
      el("dd", {}, key === "query" ? el("pre", { class: "query", text: String(value) }) : String(value))));
    this.part("override-arguments").replaceChildren(...facts);
    this.show("override-arguments", facts.length > 0);
    this.part("override-error").hidden = true;
    this.part("override-status").textContent = "";
    const reason = this.part("override-reason");
    reason.disabled = false;
    const approve = e.role === "approve";
    const buttons = (e.choices || []).map((choice) => el("button", {
      type: "button", dataset: { choice, testid: `choice-${choice}` },
      text: choice === "accept" && !approve ? "Accept" : CHOICE_LABELS[choice] || choice,
      onclick: () => this.decide(e, choice) }));
    this.part("override-choices").replaceChildren(...buttons);
    this.part("override-hint").textContent = `${(e.choices || []).map((c) => CHOICE_HINTS[c]).filter(Boolean).join("; ")}.`;
    announce(`The run waits for your decision on ${e.function}. The decision card is in the latest turn.`);
    this.onWaiting(true);
    // Someone who just asked (focus in the question box, or nowhere) is taken to the card; anyone else is told.
    const active = document.activeElement;
    if (!active || active === document.body || active.id === "question" || active.id === "send") title.focus();
  }

  async decide(request, choice) {
    const buttons = this.part("override-choices").querySelectorAll("button");
    const error = this.part("override-error");
    buttons.forEach((b) => { b.disabled = true; });
    error.hidden = true;
    const body = { step_id: request.step_id, decision: choice };
    const reason = this.part("override-reason").value.trim();
    if (reason) body.reason = reason;
    this.part("override-status").textContent = "Sending…";
    try {
      const response = await postJson(`/runs/${encodeURIComponent(request.workflow_id)}/override`, body);
      if (response.ok) {
        const { outcome } = await response.json();
        this.part("override-status").textContent = `${CHOICE_LABELS[choice] || choice}: sent (${outcome})`;
        this.plan.decided(request.step_id, choice);
        return this.overrideResolved(request.step_id);
      }
      error.textContent = `Refused: ${await detailOf(response)}`;
    } catch (err) {
      error.textContent = `Not sent: ${err}`;
    }
    this.part("override-status").textContent = "";
    error.hidden = false;
    buttons.forEach((b) => { b.disabled = false; });
    buttons[0]?.focus();
  }

  overrideResolved(stepId) {  // "": whichever step is pending
    if (!this.pendingStep || (stepId && stepId !== this.pendingStep)) return;
    this.pendingStep = "";
    this.closeDecision(this.part("override-status").textContent || "decided");
    if (this.status === "waiting") this.setStatus("running");
  }

  closeDecision(status) {
    const card = this.part("override");
    if (card.hidden || card.classList.contains("decided")) return;
    const hadFocus = card.contains(document.activeElement);
    card.classList.add("decided");
    this.show("override-body", false);  // what was asked stays in the thoughts; the decision is one line now
    this.part("override-title").textContent = "Decided";
    this.part("override-title").classList.remove("left-out");
    this.part("override-choices").replaceChildren();
    this.part("override-hint").textContent = "";
    this.part("override-reason").disabled = true;
    if (!this.part("override-status").textContent) this.part("override-status").textContent = status;
    this.onWaiting(false);
    if (hadFocus) this.part("override-title").focus();  // not lost to the page's start with its button gone
  }

  // ---- a batch ----

  progress(e) {
    this.show("batch");
    this.plan.batchRunning();
    const bar = this.part("progress");
    bar.max = e.total;
    bar.value = e.completed;
    this.part("progress-text").textContent = `${e.completed}/${e.total}`;
    if (!this.outcomes.has(e.entity_id) || e.success) this.outcomes.set(e.entity_id, e.success ? "" : "failed");
    if (e.completed === 1) announce(`The batch started: ${count(e.total, "entity", "entities")}.`);
    this.renderOutcomes(" so far");
  }

  complete(results) {
    this.show("batch");
    const bar = this.part("progress");
    bar.max = results.total;
    bar.value = results.total;
    this.part("progress-text").textContent = `${results.total}/${results.total}`;
    this.outcomes = new Map([...(results.successes || []).map((s) => [s.entity_id, ""]),
                             ...(results.failures || []).map((f) => [f.entity_id, f.error || "failed"])]);
    this.renderOutcomes("", results.succeeded, results.failed);
    announce(`The batch ended: ${results.succeeded} succeeded, ${results.failed} failed.`);
    window.dispatchEvent(new CustomEvent("tgca:actions-changed"));
  }

  renderOutcomes(suffix = " so far", succeeded, failed) {
    this.show("batch");
    const failures = [...this.outcomes].filter(([, reason]) => reason);
    succeeded ??= this.outcomes.size - failures.length;
    failed ??= failures.length;
    this.part("results-summary").textContent = `${succeeded} succeeded, ${failed} failed${suffix}`;
    this.part("failures").replaceChildren(...failures.map(([entity, reason]) =>
      el("li", { dataset: { entity } }, el("strong", { text: entity }), `: ${reason}`)));
  }

  // ---- the answer ----

  answer(content, replayed) {
    // An event without an id is a finished run's whole answer, re-read from Temporal after a reconnect.
    this.answerText = replayed ? content : this.answerText + content;
    this.show("answer-box");
    const lines = this.answerText.split("\n");
    const at = lines.findLastIndex((line) => CONFIDENCE_LINE.test(line));
    if (at < 0) {
      this.part("answer").textContent = this.answerText;
      return;
    }
    const [, score, reasons] = lines[at].match(CONFIDENCE_LINE);
    this.part("answer").textContent = lines.filter((_, i) => i !== at).join("\n").trimEnd();
    this.score(Number(score), reasons || "");
  }

  score(value, reasons) {
    this.scored = true;
    this.answerBar.set(value);
    if (reasons) {
      this.part("confidence-reasons").replaceChildren(reasonList(reasons));
      this.show("why");
    }
  }

  confidence(e) {
    if (typeof e.score === "number" && !this.scored) this.score(e.score, "");
    this.plan.update(e.plan, e.steps);
  }
}
