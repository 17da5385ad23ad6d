// The action history (GET /actions, most recent first) and undo (POST /actions/{key}/undo). An undo is
// confirmed with a second press of the same button: nothing is undone by one stray key press.

import { api, detailOf } from "./api.js";
import { announce, cellText, el } from "./dom.js";

const LISTED = 25;
const CONFIRM_MS = 6000;

const when = (iso) => {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso || "" : at.toLocaleString([], { dateStyle: "short", timeStyle: "medium" });
};
const changeText = (changes) => Object.entries(changes || {})
  .map(([property, c]) => `${property}: ${cellText(c?.before)} → ${cellText(c?.after)}`).join("; ");

export class ActionHistory {
  constructor(root) {
    this.root = root;
    this.status = root.querySelector("#history-status");
    this.list = root.querySelector("#history-list");
    root.querySelector("#history-refresh").addEventListener("click", () => this.refresh(true));
  }

  async refresh(asked = false) {
    let response;
    try {
      response = await api(`/actions?limit=${LISTED}`);
    } catch (err) {
      return this.say(`The action history could not be read: ${err}`);
    }
    if (response.status === 404) {  // no ontology: this service has no actions
      this.root.hidden = true;
      return;
    }
    this.root.hidden = false;
    if (response.status === 401) return this.say("The action history needs your access token (at the top of the page).");
    if (response.status === 403) return this.say("Your token may not read the action history: that needs the role 'audit'.");
    if (!response.ok) return this.say(`The action history could not be read: ${await detailOf(response)}`);
    this.render(await response.json());
    if (asked) announce("The action history was refreshed.");
  }

  say(text) {
    this.status.textContent = text;
    this.list.hidden = true;
  }

  render(entries) {
    this.list.hidden = entries.length === 0;
    this.status.textContent = entries.length
      ? `The ${entries.length} most recent actions. Undo applies an action's inverse, once.`
      : "No action has run yet.";
    this.list.replaceChildren(...entries.map((entry) => {
      let state;
      if (entry.undone_by) state = el("span", { class: "undone", text: "undone" });
      else if (entry.undoes) state = el("span", { class: "undone", text: "an undo" });
      else if (!entry.can_undo) state = el("span", { class: "undone", text: "cannot be undone" });
      else state = this.undoButton(entry);
      return el("li", { dataset: { key: entry.key, entity: entry.entity_id } },
        el("p", { class: "what" }, el("code", { text: entry.action }), " on ", el("strong", { text: entry.entity_id }),
           el("span", { class: "meta", text: ` ${entry.entity_type}` })),
        el("p", { class: "change", text: changeText(entry.changes) || "no property changed" }),
        el("p", { class: "meta", text: when(entry.at) }),
        el("div", { class: "state" }, state));
    }));
  }

  undoButton(entry) {
    const what = `${entry.action} on ${entry.entity_id}`;
    const button = el("button", { type: "button", class: "undo", text: "Undo", "aria-label": `Undo ${what}` });
    let timer = 0;
    const reset = () => {
      clearTimeout(timer);
      delete button.dataset.confirming;
      button.textContent = "Undo";
      button.setAttribute("aria-label", `Undo ${what}`);
    };
    button.addEventListener("blur", reset);
    button.addEventListener("click", async () => {
      if (!("confirming" in button.dataset)) {
        button.dataset.confirming = "";
        button.textContent = "Confirm undo";
        button.setAttribute("aria-label", `Confirm: undo ${what}`);
        announce(`Press again to undo ${what}.`);
        timer = setTimeout(reset, CONFIRM_MS);
        return;
      }
      reset();
      button.disabled = true;
      const response = await api(`/actions/${encodeURIComponent(entry.key)}/undo`, { method: "POST" });
      const said = response.ok ? `Undone: ${what} (${(await response.json()).detail})`
                               : `Not undone: ${await detailOf(response)}`;
      await this.refresh();
      this.status.textContent = said;
      this.status.focus();  // the button is gone with the refreshed rows: keep the keyboard's place here
      announce(said);
    });
    return button;
  }
}
