// A run's plan as a graph: its steps in stages (a step stands right of, or on a narrow window below, the steps
// it depends on), with arrows from each dependency, and each step's details: its query, its confidence with
// the reasons, its retries and repairs, and its rows. The plan and the steps' states come with `run_state`
// and `confidence` events; a step's attempts are the run's thoughts that name it.

import { ConfidenceBar, count, el, fixed, reasonList, table } from "./dom.js";

const STATE_WORDS = {
  pending: "waiting", running: "running", retrying: "retrying", awaiting_override: "needs your decision",
  succeeded: "succeeded", accepted_by_override: "accepted by a person", low_confidence: "low confidence",
  failed: "failed", skipped: "skipped",
};
const VERDICT = /\nConfidence (\d\.\d\d) (meets|is below) the threshold (\d\.\d\d): ([\s\S]*)$/;
const MAX_LOG = 40;  // attempt lines kept per step
const SVG = "http://www.w3.org/2000/svg";

const escaped = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export class PlanGraph {
  constructor(section, key) {
    this.section = section;
    this.key = key;  // makes this turn's element ids unique
    this.graph = section.querySelector('[data-testid="plan-graph"]');
    this.list = section.querySelector('[data-testid="step-list"]');
    this.heading = section.querySelector('[data-testid="plan-title"]');
    this.svg = document.createElementNS(SVG, "svg");
    this.svg.setAttribute("class", "edges");
    this.svg.setAttribute("aria-hidden", "true");
    this.graph.append(this.svg);
    this.steps = new Map();  // step id -> what is known of it, and its elements
    this.shape = "";
    this.unread = [];  // thoughts that came before the plan: read once the steps are known
    this.open = new Set();  // steps with an attempt started and no verdict yet
    new ResizeObserver(() => this.drawEdges()).observe(this.graph);
  }

  // The plan (from `run_state` or `confidence`: [] on the action path) and the steps' states.
  update(plan, steps) {
    for (const planned of plan || []) {
      Object.assign(this.entry(planned.step_id), {
        function: planned.function, arguments: planned.arguments || {}, dependencies: planned.dependencies || [],
        threshold: planned.threshold, planned: true });
    }
    for (const status of steps || []) {
      const entry = this.entry(status.step_id);
      for (const field of ["function", "state", "score", "threshold", "reasoning", "retries"]) {
        if (status[field] !== undefined && status[field] !== null) entry[field] = status[field];
      }
      if (status.output) entry.output = status.output;
    }
    if (!this.steps.size) return;
    this.section.hidden = false;
    const planned = [...this.steps.values()].some((s) => s.planned);
    this.heading.textContent = planned ? `Plan: ${count(this.steps.size, "step")}` : "Steps";
    const shape = JSON.stringify([...this.steps.values()].map((s) => [s.id, s.dependencies]));
    if (shape !== this.shape) {
      this.shape = shape;
      this.layout();
    }
    for (const entry of this.steps.values()) this.render(entry);
    const unread = this.unread.splice(0);
    for (const [kind, text] of unread) this.note(kind, text);
    requestAnimationFrame(() => this.drawEdges());
  }

  // What this page decided for a step, shown at once: the run's own state of it comes with the next run_state.
  decided(id, choice) {
    const entry = this.steps.get(id);
    const state = { accept: "accepted_by_override", retry: "retrying", skip: "skipped", abort: "failed" }[choice];
    if (!entry || !state) return;
    entry.state = state;
    this.render(entry);
  }

  // A batch runs as one step of the run, while its worker is too busy to say so (the status query waits for
  // it): the first step not started yet is the one running it.
  batchRunning() {
    const steps = [...this.steps.values()];
    const next = steps.some((s) => s.state === "running") ? null : steps.find((s) => s.state === "pending");
    if (!next) return;
    next.state = "running";
    this.render(next);
  }

  entry(id) {
    if (!this.steps.has(id)) {
      this.steps.set(id, { id, function: "", arguments: {}, dependencies: [], state: "pending", score: null,
                           threshold: null, reasoning: "", retries: 0, output: null, live: null, ran: null,
                           log: [], planned: false });
    }
    return this.steps.get(id);
  }

  // A thought or observation of the run: an attempt's start, its verdict, a retry or a decision, when it is
  // one step's (its text names the step, or it is the verdict of the one attempt under way).
  note(kind, text) {
    if (!this.steps.size) {
      this.unread.push([kind, text]);
      if (this.unread.length > 200) this.unread.shift();
      return;
    }
    const verdict = text.match(VERDICT);
    if (verdict && kind === "observation") {
      if (this.open.size !== 1) return;  // parallel attempts: whose it is cannot be told
      const [id] = this.open;
      this.open.clear();
      const entry = this.steps.get(id);
      const output = text.slice(0, verdict.index);
      try {
        const data = JSON.parse(output);
        if (Array.isArray(data.columns) && Array.isArray(data.rows)) {
          entry.live = { columns: data.columns, rows: data.rows.slice(0, 20), row_count: data.row_count ?? data.rows.length,
                         truncated: Boolean(data.truncated) || data.rows.length > 20 };
        }
      } catch { /* a preview cut short, or text: the rows come with the run's end */ }
      this.log(entry, `Confidence ${verdict[1]} ${verdict[2]} the threshold ${verdict[3]}: ${verdict[4]}`);
      return this.render(entry);
    }
    for (const entry of this.steps.values()) {
      const named = new RegExp(`(^|\\W)[Ss]tep ${escaped(entry.id)}(\\W|$)`);
      if (!named.test(text)) continue;
      const start = text.match(new RegExp(`^Step ${escaped(entry.id)}(?: \\(retry (\\d+)\\))?: ([\\s\\S]*)$`));
      const call = start && entry.function && start[2].startsWith(`${entry.function}(`) ? start[2] : "";
      if (call) {
        this.open.add(entry.id);
        entry.ran = this.ranArguments(entry, call.slice(entry.function.length + 1, -1));
        this.log(entry, `${start[1] ? `Retry ${start[1]}` : "First attempt"}: ${call}`);
      } else {
        this.log(entry, start ? start[2] : text);
      }
      this.render(entry);
      return;
    }
  }

  // The one argument of a one-argument step as the attempt ran it ("query=MATCH ..."), to show a repair.
  ranArguments(entry, text) {
    const keys = Object.keys(entry.arguments);
    return keys.length === 1 && text.startsWith(`${keys[0]}=`) ? { [keys[0]]: text.slice(keys[0].length + 1) } : null;
  }

  log(entry, line) {
    entry.log.push(line);
    if (entry.log.length > MAX_LOG) entry.log.shift();
  }

  // Steps in stages: a step's stage is one past its deepest dependency's.
  layout() {
    const depth = new Map();
    const stageOf = (id, seen = new Set()) => {
      if (depth.has(id)) return depth.get(id);
      if (seen.has(id)) return 0;
      seen.add(id);
      const deps = (this.steps.get(id)?.dependencies || []).filter((d) => this.steps.has(d));
      const stage = deps.length ? 1 + Math.max(...deps.map((d) => stageOf(d, seen))) : 0;
      depth.set(id, stage);
      return stage;
    };
    const stages = [];
    const planned = [...this.steps.values()].some((s) => s.planned);
    // Without a plan (the action path) the steps are the run's own, one after the other: a stage each.
    [...this.steps.keys()].forEach((id, n) => (stages[planned ? stageOf(id) : n] ||= []).push(id));
    const levels = stages.filter(Boolean).map((ids, n) => el("ol", { class: "dag-level", "aria-label": `Stage ${n + 1}` },
      ids.map((id) => el("li", {}, this.elements(this.steps.get(id)).node))));
    this.graph.replaceChildren(this.svg, ...levels);
    this.graph.setAttribute("aria-label", `Plan graph: ${count(this.steps.size, "step")}`);
    this.list.replaceChildren(...[...this.steps.values()].map((entry) => this.elements(entry).details));
  }

  elements(entry) {
    if (entry.view) return entry.view;
    const detailsId = `${this.key}-step-${entry.id.replace(/[^A-Za-z0-9_-]/g, "_")}`;
    const view = {};
    view.state = el("span", { class: "state" });
    view.needs = el("span", { class: "visually-hidden" });
    view.node = el("button", {
      type: "button", class: "node", "aria-controls": detailsId, "aria-expanded": "false",
      dataset: { step: entry.id, testid: "node" }, onclick: () => this.show(entry.id) },
      el("span", { class: "id", text: entry.id }), view.fn = el("span", { class: "fn" }), view.state, view.needs);
    view.summary = el("summary");
    view.facts = el("dl", { class: "facts" });
    view.bar = new ConfidenceBar(`Confidence of ${entry.id}`, null, { shown: false });
    view.reasons = el("div");
    view.retries = el("p", { class: "meta" });
    view.attempts = el("ol", { class: "attempts", dataset: { testid: "attempts" } });
    view.output = el("div", { dataset: { testid: "step-output" } });
    view.outputTitle = el("h5", { text: "Rows" });
    view.details = el("details", { class: "step", id: detailsId, dataset: { step: entry.id, testid: "step" } },
      view.summary,
      el("div", { class: "step-body" }, view.facts,
        el("h5", { text: "Confidence" }), view.bar.root, view.reasons,
        el("h5", { text: "Retries and repairs" }), view.retries, view.attempts,
        view.outputTitle, view.output));
    view.details.addEventListener("toggle", () => {
      view.node.setAttribute("aria-expanded", String(view.details.open));
    });
    entry.view = view;
    return view;
  }

  show(id) {
    const { details, summary } = this.steps.get(id).view;
    details.open = true;
    summary.focus();
    details.scrollIntoView({ block: "nearest" });
  }

  render(entry) {
    const view = this.elements(entry);
    const word = STATE_WORDS[entry.state] || entry.state;
    const scored = typeof entry.score === "number";
    view.node.dataset.state = entry.state;
    view.details.dataset.state = entry.state;
    view.fn.textContent = entry.function;
    view.state.textContent = scored ? `${word} · ${fixed(entry.score)}` : word;
    view.needs.textContent = entry.dependencies.length ? `, after ${entry.dependencies.join(", ")}` : "";
    const retries = entry.retries ? `, ${count(entry.retries, "retry", "retries")}` : "";
    view.summary.textContent = `${entry.id} · ${entry.function} — ${word}`
      + (scored ? `, confidence ${fixed(entry.score)}` : "")
      + (typeof entry.threshold === "number" ? ` (${fixed(entry.threshold)} needed)` : "") + retries;
    this.renderFacts(entry, view);
    view.bar.set(entry.score ?? undefined, entry.threshold ?? undefined);
    if (view.reasonsKey !== entry.reasoning) {
      view.reasonsKey = entry.reasoning;
      view.reasons.replaceChildren(entry.reasoning ? reasonList(entry.reasoning)
                                                   : el("p", { class: "meta", text: "No score yet." }));
    }
    view.retries.textContent = entry.retries
      ? `Tried again ${count(entry.retries, "time")}: each attempt below, with what it was told.`
      : entry.log.length ? "The first attempt's result was used." : "Not run yet.";
    while (view.attempts.children.length > entry.log.length) view.attempts.firstChild.remove();
    const shown = [...view.attempts.children].map((li) => li.textContent);
    if (shown.join("\n") !== entry.log.slice(0, shown.length).join("\n")) view.attempts.replaceChildren();
    for (const line of entry.log.slice(view.attempts.children.length)) view.attempts.append(el("li", { text: line }));
    this.renderOutput(entry, view);
  }

  renderFacts(entry, view) {
    const rows = [["Tool", entry.function],
                  ["Needs", entry.dependencies.length ? entry.dependencies.join(", ") : "nothing: it starts the plan"]];
    const facts = [];
    for (const [name, value] of rows) facts.push(el("dt", { text: name }), el("dd", { text: value }));
    for (const [name, value] of Object.entries(entry.arguments)) {
      facts.push(el("dt", { text: name === "query" ? "Query" : name }),
                 el("dd", {}, el("pre", { class: "query", dataset: { argument: name }, text: String(value) })));
    }
    const repaired = entry.ran && Object.entries(entry.ran).find(([name, value]) => entry.arguments[name] !== value);
    if (repaired) {
      facts.push(el("dt", { text: `${repaired[0] === "query" ? "Query" : repaired[0]} as last run` }),
                 el("dd", {}, el("pre", { class: "query", dataset: { argument: `${repaired[0]}-ran` }, text: repaired[1] })));
    }
    const key = JSON.stringify([rows, entry.arguments, repaired || null]);
    if (view.factsKey === key) return;  // unchanged: keep a reader's selection
    view.factsKey = key;
    view.facts.replaceChildren(...facts);
  }

  renderOutput(entry, view) {
    const output = entry.output || entry.live;
    const key = JSON.stringify(output);
    if (view.outputKey === key) return;
    view.outputKey = key;
    if (!output) {
      view.outputTitle.textContent = "Rows";
      view.output.replaceChildren(el("p", { class: "meta", text: "None yet: they are shown when the step has run." }));
      return;
    }
    if (output.text !== undefined) {
      view.outputTitle.textContent = "Output";
      view.output.replaceChildren(el("pre", { class: "output", text: output.text }));
      return;
    }
    view.outputTitle.textContent = "Rows";
    const shown = output.rows.length;
    const caption = output.truncated || output.row_count > shown
      ? `Showing ${shown} of ${output.row_count}${output.truncated ? " or more" : ""} rows`
      : `${count(output.row_count, "row")}`;
    view.output.replaceChildren(shown ? table(output.columns, output.rows, `${entry.id}: ${caption}`)
                                      : el("p", { text: "No rows: the query matched nothing." }));
  }

  // Arrows from each dependency to its dependents, where the browser laid the steps out.
  drawEdges() {
    if (this.section.hidden || !this.steps.size) return;
    const frame = this.graph.getBoundingClientRect();
    const at = (node) => {
      const r = node.getBoundingClientRect();
      const left = r.left - frame.left + this.graph.scrollLeft, top = r.top - frame.top + this.graph.scrollTop;
      return { left, top, right: left + r.width, bottom: top + r.height, cx: left + r.width / 2, cy: top + r.height / 2 };
    };
    const shapes = [];
    for (const entry of this.steps.values()) {
      for (const dep of entry.dependencies) {
        const from = this.steps.get(dep)?.view?.node, to = entry.view?.node;
        if (!from || !to) continue;
        const a = at(from), b = at(to);
        let d, tip;
        if (b.left >= a.right - 2) {  // a stage to the right
          const mid = (a.right + b.left) / 2;
          d = `M${a.right},${a.cy} C${mid},${a.cy} ${mid},${b.cy} ${b.left - 6},${b.cy}`;
          tip = `${b.left},${b.cy} ${b.left - 7},${b.cy - 4} ${b.left - 7},${b.cy + 4}`;
        } else {  // a stage below (a narrow window)
          const mid = (a.bottom + b.top) / 2;
          d = `M${a.cx},${a.bottom} C${a.cx},${mid} ${b.cx},${mid} ${b.cx},${b.top - 6}`;
          tip = `${b.cx},${b.top} ${b.cx - 4},${b.top - 7} ${b.cx + 4},${b.top - 7}`;
        }
        const path = document.createElementNS(SVG, "path");
        path.setAttribute("d", d);
        const head = document.createElementNS(SVG, "polygon");
        head.setAttribute("points", tip);
        shapes.push(path, head);
      }
    }
    this.svg.setAttribute("width", String(this.graph.scrollWidth));
    this.svg.setAttribute("height", String(this.graph.scrollHeight));
    this.svg.replaceChildren(...shapes);
  }
}
