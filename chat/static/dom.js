// Building the page's parts. Every text from the server goes in as a text node (never as HTML).

export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  node.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

export const fixed = (n) => (typeof n === "number" ? n.toFixed(2) : "");

// A score's band, as the answer's colour and word show it.
export const level = (score) => (score >= 0.8 ? "high" : score >= 0.5 ? "medium" : "low");

export const count = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

// A cell's value as text: numbers and booleans as JSON writes them, null as a dash.
export function cellText(value) {
  if (value === null || value === undefined) return "—";
  return typeof value === "string" ? value : JSON.stringify(value);
}

// A bounded table in a frame of its own, which scrolls sideways on a narrow window (the page does not).
// `caption`: what the table is and what it leaves out.
export function table(columns, rows, caption, { numeric = [] } = {}) {
  const head = el("tr", {}, columns.map((c) => el("th", { scope: "col", text: c })));
  const body = rows.map((row) => el("tr", {}, row.map((value, i) => el("td", {
    class: numeric.includes(i) || typeof value === "number" ? "num" : null, text: cellText(value) }))));
  return el("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": caption },
    el("table", {}, el("caption", { text: caption }), el("thead", {}, head), el("tbody", {}, body)));
}

// Reasons as a list: the agent writes them as one line, separated by semicolons.
export function reasonList(text, testid) {
  const reasons = String(text || "").split(/;\s+/).map((r) => r.trim()).filter(Boolean);
  return el("ul", { class: "reasons", dataset: testid ? { testid } : {} },
    reasons.map((r) => el("li", { text: r })));
}

// A confidence as a bar with its value in words, and the threshold marked when there is one.
export class ConfidenceBar {
  // `shown`: whether the label is written beside the bar (else only said, where a heading names it already).
  constructor(label, testid, { shown = true } = {}) {
    this.fill = el("span", { class: "fill" });
    this.mark = el("span", { class: "mark", hidden: true });
    this.bar = el("div", { class: "bar", role: "meter", "aria-valuemin": "0", "aria-valuemax": "1",
                           "aria-label": label, dataset: testid ? { testid: `${testid}-bar` } : {} },
                  this.fill, this.mark);
    this.value = el("strong", { class: "score", dataset: testid ? { testid } : {}, text: "–" });
    this.word = el("span", { class: "level", hidden: true });
    this.root = el("div", { class: "confidence" }, el("span", { class: shown ? null : "visually-hidden", text: label }),
                   this.bar, this.value, this.word);
  }

  set(score, threshold) {
    if (typeof score !== "number") return;
    const band = level(score);
    this.bar.dataset.level = band;
    this.word.dataset.level = band;
    this.fill.style.width = `${Math.round(Math.max(0, Math.min(1, score)) * 100)}%`;
    this.value.textContent = fixed(score);
    this.word.textContent = band;
    this.word.hidden = false;
    const needs = typeof threshold === "number" ? `, ${fixed(threshold)} needed` : "";
    this.bar.setAttribute("aria-valuenow", String(score));
    this.bar.setAttribute("aria-valuetext", `${fixed(score)}, ${band}${needs}`);
    if (typeof threshold === "number") {
      this.mark.hidden = false;
      this.mark.style.left = `calc(${Math.round(threshold * 100)}% - 1px)`;
    }
  }
}

// Said to screen readers (one polite live region for the whole page), and nothing else.
export function announce(text) {
  const region = document.getElementById("announcer");
  region.textContent = "";
  setTimeout(() => { region.textContent = text; }, 50);  // a change a screen reader notices, even for the same text
}
