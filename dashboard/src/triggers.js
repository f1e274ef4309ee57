// SPDX-License-Identifier: Apache-2.0
// The Triggers page (docs/triggers.md): signing in to the trigger service with the approval
// handshake (the page draws the token, opens the approval page with the token's hash only, and
// polls), then the triggers: create each kind (a schedule with its next five firings), enable or
// disable, and their runs with a status filter, each run's params, response or error with its
// stack, and a live view that polls for new runs. Every call goes to the service's own URL when
// GET /dashboard/settings names one (api.js triggerServiceUrl). docs/dashboard.md.
import { getAll, setTriggerToken, triggerCall, triggerServiceUrl, triggerTokenSet } from "./api.js";
import { nextFirings } from "./cron.js";
import { field, h, showError, showOk, statusLine, table } from "./dom.js";

const kPollMs = 2000;
const kLiveMs = 2000;
let live = null; // the live view's timer; one at a time, stopped when the page is left

function stopLive() {
  if (live) clearInterval(live);
  live = null;
}
window.addEventListener("hashchange", stopLive);

const b64url = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

/** The approval handshake of docs/triggers.md: resolves with the token once approved. */
async function handshake(status, linkBox) {
  const raw = crypto.getRandomValues(new Uint8Array(32));
  const token = b64url(raw);
  const challenge = b64url(new Uint8Array(await crypto.subtle.digest("SHA-256", raw)));
  const url = `${await triggerServiceUrl()}/auth/authorize?challenge=${challenge}&client=${encodeURIComponent("enact dashboard")}`;
  linkBox.replaceChildren(h("p", {}, "Approve the sign-in with your wallet on ", h("a", { href: url, target: "_blank", rel: "noopener" }, "the approval page"), ". This page waits for it."));
  window.open(url, "_blank", "noopener");
  const deadline = Date.now() + 10 * 60_000;
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, kPollMs));
    try {
      await triggerCall("POST", "/auth/token", { challenge, token }, { auth: false });
      return token;
    } catch (err) {
      if (err.code === "authorization_pending" || err.status === 429) continue;
      throw err;
    }
  }
  showError(status, new Error("The approval expired: start again."));
  return null;
}

function tokenForm(root) {
  const status = statusLine();
  const linkBox = h("div");
  const start = h("button", { type: "button" }, "Sign in to the trigger service");
  start.addEventListener("click", async () => {
    start.disabled = true;
    try {
      const token = await handshake(status, linkBox);
      if (token) {
        setTriggerToken(token);
        await triggersPage(root, "Signed in to the trigger service.");
      }
    } catch (err) {
      showError(status, err);
    } finally {
      start.disabled = false;
    }
  });
  const paste = field("Or paste a bearer token", { type: "password", autocomplete: "off" }, "A token from `enact triggers login` or the operator.");
  const use = h("form", {}, paste.row, h("button", { type: "submit" }, "Use token"));
  use.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    setTriggerToken(paste.input.value.trim());
    try {
      await triggerCall("GET", "/api/me");
      await triggersPage(root, "Signed in to the trigger service.");
    } catch (err) {
      setTriggerToken("");
      showError(status, err);
    }
  });
  return h("section", { class: "card", "aria-labelledby": "tsi-h" }, h("h2", { id: "tsi-h" }, "Sign in to the trigger service"),
    h("p", {}, "Triggers belong to a wallet's user. The token is drawn in this page and kept in this tab only."), start, linkBox, use, status);
}

function cronHelper(input) {
  const list = h("ol", { class: "firings", "aria-live": "polite" });
  const note = h("p", { class: "meta" });
  const update = () => {
    list.replaceChildren();
    try {
      const next = nextFirings(input.value || "", new Date(), 5);
      note.textContent = "Next five firings (UTC):";
      list.append(...next.map((d) => h("li", {}, d.toISOString().replace("T", " ").replace(".000Z", " UTC"))));
    } catch (err) {
      note.textContent = `Not a schedule yet: ${err.message}.`;
    }
  };
  input.addEventListener("input", update);
  update();
  return h("div", { class: "cron-help" }, note, list);
}

function createForm(root, actions, wallets) {
  const type = field("Kind", { tag: "select" });
  type.input.append(h("option", { value: "webhook" }, "Webhook"), h("option", { value: "schedule" }, "Schedule"), h("option", { value: "chain-event" }, "Chain event"));
  const name = field("Trigger name", { required: true, maxlength: "200" });
  const action = field("Action", { tag: "select", required: true });
  action.input.append(h("option", { value: "" }, "— choose —"), ...actions.map((a) => h("option", { value: a.action_ipfs_cid }, `${a.name} (${a.action_ipfs_cid})`)));
  const pkp = field("PKP (optional)", { tag: "select" });
  pkp.input.append(h("option", { value: "" }, "— none —"), ...wallets.map((w) => h("option", { value: w.pkp_id }, `${w.name} (${w.pkp_id})`)));
  const key = field("Usage key for its runs", { type: "password", required: true, autocomplete: "off" }, "A usage key allowed to run the action; the service stores it and shows only its hash.");
  const cron = field("Schedule (cron, UTC)", { value: "*/5 * * * *", spellcheck: "false" }, "5 fields (6 with seconds first), or @hourly, @daily…");
  const schedule = h("div", { class: "kind-fields" }, cron.row, cronHelper(cron.input));
  const chain = field("Chain", { tag: "select" });
  chain.input.append(...["ethereum", "svc", "arbitrum", "bsc", "polygon"].map((c) => h("option", { value: c }, c)));
  const contract = field("Contract address", { spellcheck: "false" });
  const event = field("Event signature", { spellcheck: "false", placeholder: "Transfer(address indexed from, address indexed to, uint256 value)" });
  const confirmations = field("Confirmations", { type: "number", min: "0", max: "1000", value: "0" });
  const chainBox = h("div", { class: "kind-fields" }, chain.row, contract.row, event.row, confirmations.row);
  const show = () => {
    schedule.hidden = type.input.value !== "schedule";
    chainBox.hidden = type.input.value !== "chain-event";
  };
  type.input.addEventListener("change", show);
  show();
  const status = statusLine();
  const form = h("form", { class: "card", "aria-labelledby": "ct-h" }, h("h2", { id: "ct-h" }, "Create a trigger"), type.row, name.row, action.row, pkp.row, key.row, schedule, chainBox, h("button", { type: "submit" }, "Create trigger"), status);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const kind = type.input.value;
    const config =
      kind === "schedule"
        ? { cron: cron.input.value.trim() }
        : kind === "chain-event"
          ? { chain: chain.input.value, contract: contract.input.value.trim(), event: event.input.value.trim(), confirmations: Number(confirmations.input.value || 0) }
          : {};
    const body = { type: kind, name: name.input.value, action_ipfs_cid: action.input.value, usage_api_key: key.input.value, config };
    if (pkp.input.value) body.pkp_id = pkp.input.value;
    try {
      const t = await triggerCall("POST", "/api/triggers", body);
      key.input.value = "";
      await triggersPage(root, `Trigger ${t.name} created (${t.id}).`);
    } catch (err) {
      showError(status, err);
    }
  });
  return form;
}

const kStatuses = ["all", "queued", "running", "success", "failed"];

function runDetails(run) {
  const block = (label, value) => [h("h4", {}, label), h("pre", { class: "code", tabindex: "0", "aria-label": label }, typeof value === "string" ? value : JSON.stringify(value, null, 2))];
  return h(
    "div",
    { class: "run-detail" },
    block("Params", run.params ?? null),
    run.status === "success" && block("Response", run.response ?? null),
    run.error && block("Error", `${run.error.code}: ${run.error.message}`),
    run.error?.stack && block("Stack", run.error.stack),
  );
}

function runsView(t) {
  const filter = field(`Status of runs of ${t.name}`, { tag: "select" });
  filter.input.append(...kStatuses.map((s) => h("option", { value: s }, s)));
  const liveBox = h("input", { type: "checkbox", id: `live-${t.id}` });
  const body = h("div", { class: "runs" });
  const detail = h("div");
  const status = statusLine();
  const load = async () => {
    try {
      const res = await triggerCall("GET", `/api/triggers/${t.id}/runs?limit=100`);
      const want = filter.input.value;
      const runs = res.items.filter((r) => want === "all" || r.status === want);
      body.replaceChildren(
        table(`Runs of ${t.name}`, ["Run", "Status", "Attempts", "Queued", "Finished", ""], runs.map((r) => [
          h("code", {}, r.id),
          h("span", { class: `run-${r.status}` }, r.status),
          String(r.attempts ?? 0),
          r.queued_at ?? "",
          r.finished_at ?? "",
          h("button", { type: "button", class: "small", "aria-label": `Details of run ${r.id}`, onclick: async () => {
            try {
              detail.replaceChildren(h("h4", {}, `Run ${r.id}`), runDetails(await triggerCall("GET", `/api/runs/${r.id}`)));
            } catch (err) {
              showError(status, err);
            }
          } }, "Details"),
        ]), { empty: want === "all" ? "No runs yet." : `No ${want} runs.` }),
      );
    } catch (err) {
      showError(status, err);
    }
  };
  filter.input.addEventListener("change", load);
  liveBox.addEventListener("change", () => {
    stopLive();
    if (liveBox.checked) live = setInterval(load, kLiveMs);
  });
  load();
  return h("section", { class: "runs-view" }, h("div", { class: "inline" }, filter.row, h("div", { class: "check" }, liveBox, h("label", { for: `live-${t.id}` }, "Live: show new runs as they come"))), body, detail, status);
}

function triggerCard(root, t) {
  const status = statusLine();
  const toggle = h("button", { type: "button" }, t.enabled ? "Disable" : "Enable");
  toggle.addEventListener("click", async () => {
    try {
      await triggerCall("PATCH", `/api/triggers/${t.id}`, { enabled: !t.enabled });
      await triggersPage(root, `Trigger ${t.name} ${t.enabled ? "disabled" : "enabled"}.`);
    } catch (err) {
      showError(status, err);
    }
  });
  const row = (k, v) => [h("dt", {}, k), h("dd", {}, v)];
  return h(
    "article",
    { class: "card", "aria-labelledby": `t-${t.id}` },
    h("h3", { id: `t-${t.id}` }, `${t.name} (${t.type})`),
    h("dl", { class: "facts" },
      row("State", t.enabled ? "enabled" : "disabled"),
      // Set by the service when it disabled the trigger (docs/protocol.md §4 "Limits"); enabling
      // it again clears it.
      t.disabled_reason && row("Disabled because", t.disabled_reason),
      row("Action", h("code", { class: "addr" }, t.action_ipfs_cid)),
      t.webhook_url && row("Webhook URL", h("code", { class: "addr" }, t.webhook_url)),
      row("Config", h("code", {}, JSON.stringify(t.config))),
      t.type === "schedule" && row("Next firings", (() => {
        try {
          return nextFirings(t.config.cron, new Date(), 5).map((d) => d.toISOString().slice(0, 16).replace("T", " ")).join(", ");
        } catch {
          return "";
        }
      })()),
    ),
    toggle,
    status,
    h("details", {}, h("summary", {}, `Runs of ${t.name}`), runsView(t)),
  );
}

export async function triggersPage(root, message = "") {
  stopLive();
  const status = statusLine();
  if (message) showOk(status, message);
  const serviceUrl = await triggerServiceUrl();
  // The service's own URL, named on the page when it is not this origin (replaceChildren takes Nodes).
  const where = serviceUrl ? [h("p", { class: "meta" }, "The trigger service is at ", h("code", { class: "addr" }, serviceUrl), ".")] : [];
  if (!triggerTokenSet()) {
    root.replaceChildren(h("h1", {}, "Triggers"), status, ...where, tokenForm(root));
    return;
  }
  let me;
  try {
    me = await triggerCall("GET", "/api/me");
  } catch (err) {
    if (err.status !== 401) throw err;
    setTriggerToken("");
    return triggersPage(root, "The trigger service token expired or was revoked: sign in again.");
  }
  const [list, actions, wallets] = await Promise.all([triggerCall("GET", "/api/triggers?limit=100"), getAll("/list_actions"), getAll("/list_wallets")]);
  const out = h("button", { type: "button", class: "danger" }, "Forget the trigger token");
  out.addEventListener("click", () => {
    setTriggerToken("");
    triggersPage(root);
  });
  root.replaceChildren(
    h("h1", {}, "Triggers"),
    status,
    ...where,
    h("p", { class: "meta" }, "Signed in to the trigger service as ", h("code", { class: "addr" }, me.user_id), " ", out),
    createForm(root, actions, wallets),
    h("h2", {}, `Triggers (${list.total})`),
    h("div", { class: "list" }, list.items.length ? list.items.map((t) => triggerCard(root, t)) : h("p", { class: "empty" }, "No triggers yet.")),
  );
}
