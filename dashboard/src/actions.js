// SPDX-License-Identifier: Apache-2.0
// The Actions page: each registered action with its CID and its code, read back from the content
// store (GET /get_action_code) and shown highlighted; adding an action from its code (uploaded to
// the content store, then registered under its CID); and a run form (params as JSON, a PKP picker)
// showing the response, logs and signatures, each signature checked in the page (verify.js).
// docs/dashboard.md.
import { get, getAll, post } from "./api.js";
import { field, h, showError, showOk, statusLine } from "./dom.js";
import { highlighted } from "./highlight.js";
import { verifySignature } from "./verify.js";

const kCodeReads = 4; // requests for code in flight at a time, so a long list does not flood the server

/** The code of `cid` from GET /get_action_code, read with the signed-in key. */
async function actionCode(cid) {
  return (await get(`/get_action_code?action_ipfs_cid=${encodeURIComponent(cid)}`)).code;
}

/**
 * Fills each [action, slot] pair with the highlighted code, or a message saying why it cannot be
 * read. Nothing is cached: what the page shows is what the signed-in key may read now.
 */
async function fillCode(slots) {
  let next = 0;
  const worker = async () => {
    while (next < slots.length) {
      const [a, slot] = slots[next++];
      try {
        slot.replaceChildren(highlighted(await actionCode(a.action_ipfs_cid), `Code of ${a.name}`));
      } catch (err) {
        // The server's message says why: 404 for an action this key may not read and for code the
        // content store does not hold, with different messages.
        const why = `The code cannot be read: ${String(err.message).replace(/\.$/, "")}${err.code ? ` (${err.code}, HTTP ${err.status})` : ""}.`;
        slot.replaceChildren(h("p", { class: "empty code-error" }, why));
      }
    }
  };
  await Promise.all(Array.from({ length: kCodeReads }, worker));
}

function runResult(res, pkp) {
  const sigs = Object.entries(res.signatures ?? {});
  return h(
    "div",
    { class: "run-result" },
    h("h4", {}, "Response"),
    h("pre", { class: "code", tabindex: "0", "aria-label": "Response" }, JSON.stringify(res.response, null, 2)),
    h("h4", {}, "Logs"),
    res.logs ? h("pre", { class: "code", tabindex: "0", "aria-label": "Logs" }, res.logs) : h("p", { class: "empty" }, "No output."),
    h("h4", {}, "Signatures"),
    sigs.length
      ? h("ul", { class: "plain" }, sigs.map(([name, sig]) => {
          const v = verifySignature(sig, pkp);
          return h("li", { class: v.ok ? "sig ok" : "sig bad" }, h("strong", {}, `${name}: `), `${v.ok ? "✓" : "✗"} ${v.reason}`, h("br"), h("code", { class: "addr" }, sig.signature));
        }))
      : h("p", { class: "empty" }, "No signature."),
    h("p", { class: "meta" }, `Ran in ${res.run_ms} ms, charged ${res.charged_credits} credits.`),
  );
}

function runForm(action, wallets) {
  const params = field(`Params for ${action.name} (JSON)`, { tag: "textarea", rows: "4", spellcheck: "false" });
  params.input.value = "{}";
  const pkp = field(`PKP for ${action.name}`, { tag: "select" });
  pkp.input.append(h("option", { value: "" }, "— none —"), ...wallets.map((w) => h("option", { value: w.pkp_id }, `${w.name} (${w.pkp_id})`)));
  const status = statusLine();
  const out = h("div");
  const form = h("form", { class: "run-form" }, params.row, pkp.row, h("button", { type: "submit" }, `Run ${action.name}`), status, out);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    out.replaceChildren();
    let parsed;
    try {
      parsed = JSON.parse(params.input.value || "{}");
    } catch (err) {
      return showError(status, new Error(`Params are not JSON: ${err.message}`));
    }
    const body = { action_ipfs_cid: action.action_ipfs_cid, params: parsed };
    if (pkp.input.value) body.pkp_id = pkp.input.value;
    try {
      showOk(status, "Running…");
      const res = await post("/run_action", body);
      showOk(status, "Done.");
      out.append(runResult(res, pkp.input.value));
    } catch (err) {
      showError(status, err);
    }
  });
  return h("details", {}, h("summary", {}, `Run ${action.name}`), form);
}

function actionCard(a, wallets, codeSlot) {
  return h(
    "article",
    { class: "card", "aria-labelledby": `action-${a.hashed_cid}` },
    h("h3", { id: `action-${a.hashed_cid}` }, a.name || "(unnamed)"),
    a.description && h("p", {}, a.description),
    h("dl", { class: "facts" }, h("dt", {}, "CID"), h("dd", {}, h("code", { class: "addr" }, a.action_ipfs_cid || "(only the hash is known)")),
      h("dt", {}, "CID hash"), h("dd", {}, h("code", { class: "addr" }, a.hashed_cid))),
    h("h4", {}, "Code"),
    codeSlot,
    runForm(a, wallets),
  );
}

export async function actionsPage(root, message = "") {
  const [actions, wallets] = await Promise.all([getAll("/list_actions"), getAll("/list_wallets")]);
  const status = statusLine();
  if (message) showOk(status, message);
  const name = field("Action name", { required: true, maxlength: "256" });
  const code = field("Action code (JavaScript)", { tag: "textarea", rows: "6", required: true, spellcheck: "false" }, "Uploaded to the content store and registered under its CID.");
  const create = h("form", { class: "card", "aria-labelledby": "add-action-h" }, h("h2", { id: "add-action-h" }, "Add an action"), name.row, code.row, h("button", { type: "submit" }, "Add action"));
  create.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const { action_ipfs_cid: cid } = await post("/upload_action", { code: code.input.value });
      await post("/add_action", { action_ipfs_cid: cid, name: name.input.value });
      await actionsPage(root, `Action ${name.input.value} added: ${cid}.`);
    } catch (err) {
      showError(status, err);
    }
  });
  // Each card's code arrives on its own after the page is drawn; an action known by its hash only
  // has no CID to read by.
  const slots = [];
  const cards = actions.map((a) => {
    let slot;
    if (a.action_ipfs_cid) {
      slot = h("div", { class: "code-slot" }, h("p", { class: "empty", role: "status" }, "Reading the code…"));
      slots.push([a, slot]);
    } else slot = h("p", { class: "empty" }, "The code cannot be read: only the CID's hash is known.");
    return actionCard(a, wallets, slot);
  });
  root.replaceChildren(
    h("h1", {}, "Actions"),
    status,
    create,
    h("h2", {}, `Actions (${actions.length})`),
    h("div", { class: "list" }, cards.length ? cards : h("p", { class: "empty" }, "No actions yet.")),
  );
  fillCode(slots);
}
