// SPDX-License-Identifier: Apache-2.0
// The Usage keys page: each key's permissions as a group × scope matrix, creating a key (its value
// shown once, with a copy button, and kept nowhere), editing permissions and removing a key. The
// API names a usage key to edit or remove by its value, which the server never shows again, so
// those forms ask for it (docs/dashboard.md).
import { getAll, post } from "./api.js";
import { field, h, showError, showOk, statusLine, table, uid, when } from "./dom.js";

/** The per-group scopes of a usage key: the API's list field and the name the page shows. */
export const kGroupScopes = [
  ["execute_in_groups", "Run actions"],
  ["manage_ipfs_ids_in_groups", "Manage actions"],
  ["add_pkp_to_groups", "Add wallets"],
  ["remove_pkp_from_groups", "Remove wallets"],
];
/** The account-wide scopes: the API's boolean field and the name the page shows. */
export const kAccountScopes = [
  ["can_create_groups", "Create groups"],
  ["can_delete_groups", "Delete groups"],
  ["can_create_pkps", "Create wallets"],
];

const groupName = (groups, id) =>
  id === 0 ? "Every group" : (groups.find((g) => Number(g.group_id) === id)?.name ?? "") + ` (#${id})`;

/** A key's permissions as a table: one row per group it names, one column per scope. */
export function permissionMatrix(key, groups) {
  const ids = [...new Set(kGroupScopes.flatMap(([f]) => key[f]))].sort((a, b) => a - b);
  const account = kAccountScopes.filter(([f]) => key[f]).map(([, n]) => n);
  const parts = [h("p", { class: "scopes" }, "Account: ", account.length ? account.join(", ") : "no account-wide permission")];
  if (!ids.length) parts.push(h("p", { class: "scopes" }, "Groups: no permission in any group"));
  else {
    const rows = ids.map((id) =>
      h(
        "tr",
        {},
        h("th", { scope: "row" }, groupName(groups, id)),
        kGroupScopes.map(([f]) => h("td", { class: key[f].includes(id) ? "yes" : "no" }, key[f].includes(id) ? "✓ yes" : "— no")),
      ),
    );
    const matrix = h(
      "table",
      { class: "matrix" },
      h("caption", {}, `Permissions of ${key.name} per group`),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Group"), kGroupScopes.map(([, n]) => h("th", { scope: "col" }, n)))),
      h("tbody", {}, rows),
    );
    parts.push(h("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": `Permissions of ${key.name}` }, matrix));
  }
  return h("div", {}, parts);
}

/** Checkboxes for every scope: { fieldset, read() } where read() answers the API's fields. */
function permissionEditor(groups, key) {
  const rows = [{ id: 0, name: "Every group" }, ...groups.map((g) => ({ id: Number(g.group_id), name: `${g.name} (#${g.group_id})` }))];
  const boxes = [];
  const accountBoxes = kAccountScopes.map(([f, n]) => {
    const id = uid();
    const input = h("input", { type: "checkbox", id, checked: !!key?.[f] });
    boxes.push({ f, input });
    return h("div", { class: "check" }, input, h("label", { for: id }, n));
  });
  const grid = [];
  const matrix = h(
    "table",
    { class: "matrix edit" },
    h("caption", {}, "Permissions per group"),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Group"), kGroupScopes.map(([, n]) => h("th", { scope: "col" }, n)))),
    h(
      "tbody",
      {},
      rows.map((g) =>
        h(
          "tr",
          {},
          h("th", { scope: "row" }, g.name),
          kGroupScopes.map(([f, n]) => {
            const input = h("input", { type: "checkbox", "aria-label": `${n} in ${g.name}`, checked: !!key?.[f]?.includes(g.id) });
            grid.push({ f, id: g.id, input });
            return h("td", {}, input);
          }),
        ),
      ),
    ),
  );
  const fieldset = h("fieldset", {}, h("legend", {}, "Permissions"), accountBoxes, h("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": "Permissions per group" }, matrix));
  const read = () => {
    const out = {};
    for (const { f, input } of boxes) out[f] = input.checked;
    for (const [f] of kGroupScopes) out[f] = grid.filter((c) => c.f === f && c.input.checked).map((c) => c.id);
    return out;
  };
  return { fieldset, read };
}

/** Shows a new key's value once: a read-only field, a copy button, and a button that clears it. */
function revealOnce(container, created) {
  const id = uid();
  const value = h("input", { id, readonly: true, value: created.usage_api_key, class: "secret", spellcheck: "false" });
  const note = statusLine();
  const copy = h("button", { type: "button" }, "Copy");
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(value.value);
      showOk(note, "Copied.");
    } catch {
      value.select();
      showOk(note, "Select and copy the value by hand (the browser refused clipboard access).");
    }
  });
  const done = h("button", { type: "button" }, "I have saved it");
  const box = h(
    "div",
    { class: "card reveal", role: "region", "aria-labelledby": `${id}-h` },
    h("h3", { id: `${id}-h` }, "New usage key"),
    h("p", {}, "This is the only time the key is shown. Copy it now: the server keeps only its hash."),
    h("label", { for: id }, "Usage key value"),
    h("div", { class: "inline" }, value, copy),
    note,
    done,
  );
  done.addEventListener("click", () => {
    value.value = "";
    box.remove();
  });
  container.replaceChildren(box);
  value.focus();
}

function createForm(groups, reveal, refresh) {
  const name = field("Name", { required: true, maxlength: "256" });
  const description = field("Description", { maxlength: "4096" });
  const expiry = field("Expires (UTC, optional)", { type: "datetime-local" }, "Empty: never.");
  const perms = permissionEditor(groups, null);
  const status = statusLine();
  const form = h(
    "form",
    { class: "card", "aria-labelledby": "create-key-h" },
    h("h2", { id: "create-key-h" }, "Create a usage key"),
    name.row,
    description.row,
    expiry.row,
    perms.fieldset,
    h("button", { type: "submit" }, "Create key"),
    status,
  );
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = { name: name.input.value, description: description.input.value, ...perms.read() };
    if (expiry.input.value) body.expiration = Math.floor(Date.parse(`${expiry.input.value}Z`) / 1000);
    try {
      const created = await post("/add_usage_api_key", body);
      form.reset();
      showOk(status, `Key ${body.name} created.`);
      await refresh();
      reveal(created);
    } catch (err) {
      showError(status, err);
    }
  });
  return form;
}

/** Now in Unix seconds, by this browser's clock (the server checks expiries against its own). */
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The permission fields of a key as list_api_keys answers them, to send back unchanged. */
const currentPermissions = (key) => Object.fromEntries([...kAccountScopes, ...kGroupScopes].map(([f]) => [f, key[f]]));

/** A datetime-local value (UTC) for Unix seconds, "" for 0 (never). */
const localInput = (seconds) => (seconds ? new Date(seconds * 1000).toISOString().slice(0, 16) : "");

/**
 * The edit and remove forms of one key; all need the key's value. The API's update_usage_api_key
 * sets the expiry and every permission at once, so each edit sends the fields it does not change
 * as the list shows them.
 */
function keyActions(key, groups, refresh) {
  const value = field(`Value of ${key.name}`, { type: "password", required: true, autocomplete: "off" }, "The API names a usage key by its value; the dashboard does not keep it.");
  const perms = permissionEditor(groups, key);
  const status = statusLine();
  const save = h("button", { type: "submit" }, "Save permissions");
  const expiry = field(`Expiry of ${key.name} (UTC)`, { type: "datetime-local", value: localInput(key.expiration) }, "Empty: never. It must be later than now.");
  const saveExpiry = h("button", { type: "button" }, "Save expiry");
  const expireNow = h("button", { type: "button", class: "danger" }, "Expire now");
  const remove = h("button", { type: "button", class: "danger" }, "Remove key");
  const form = h(
    "form",
    { class: "edit-key" },
    value.row,
    perms.fieldset,
    h("div", { class: "inline" }, save),
    h("fieldset", {}, h("legend", {}, "Expiry"), expiry.row, h("div", { class: "inline" }, saveExpiry, expireNow)),
    h("div", { class: "inline" }, remove),
    status,
  );
  const update = (fields) =>
    post("/update_usage_api_key", { usage_api_key: value.input.value, name: key.name, description: key.description, expiration: key.expiration, ...currentPermissions(key), ...fields });
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    // The API takes no expiry in the past, and this edit keeps the key's expiry.
    if (key.expiration && key.expiration <= nowSeconds()) return showError(status, new Error(`${key.name} has expired: give it a new expiry (or none) first.`));
    try {
      await update(perms.read());
      value.input.value = "";
      await refresh(`Permissions of ${key.name} saved.`);
    } catch (err) {
      showError(status, err);
    }
  });
  saveExpiry.addEventListener("click", async () => {
    if (!form.reportValidity()) return;
    const expiration = expiry.input.value ? Math.floor(Date.parse(`${expiry.input.value}Z`) / 1000) : 0;
    try {
      await update({ expiration });
      value.input.value = "";
      await refresh(expiration ? `${key.name} now expires ${when(expiration)}.` : `${key.name} now never expires.`);
    } catch (err) {
      showError(status, err);
    }
  });
  expireNow.addEventListener("click", async () => {
    if (!form.reportValidity()) return;
    if (!window.confirm(`Expire the usage key ${key.name} now? Scripts using it stop working; a new expiry brings it back.`)) return;
    // The API takes only an expiry later than its clock, so the earliest is the next second; the
    // list is drawn again once that second has passed, with the key shown as expired.
    const expiration = nowSeconds() + 1;
    try {
      await update({ expiration }).catch((err) => {
        if (err.code === "invalid_request" && /in the past/.test(err.message)) err.message += " (this computer's clock is behind the server's)";
        throw err;
      });
      value.input.value = "";
      showOk(status, `Expiring ${key.name}…`);
      await new Promise((r) => setTimeout(r, Math.max(0, expiration * 1000 - Date.now() + 100)));
      await refresh(`${key.name} expired ${when(expiration)}.`);
    } catch (err) {
      showError(status, err);
    }
  });
  remove.addEventListener("click", async () => {
    if (!form.reportValidity()) return;
    if (!window.confirm(`Remove the usage key ${key.name}? Scripts using it stop working.`)) return;
    try {
      await post("/remove_usage_api_key", { usage_api_key: value.input.value });
      await refresh(`Key ${key.name} removed.`);
    } catch (err) {
      showError(status, err);
    }
  });
  return h("details", {}, h("summary", {}, `Edit, expire or remove ${key.name}`), form);
}

/** "expires …", or "expired …" once the expiry has passed. */
function expiryText(key) {
  if (!key.expiration) return "never expires";
  return key.expiration <= nowSeconds() ? `expired ${when(key.expiration)}` : `expires ${when(key.expiration)}`;
}

function keyCard(key, groups, refresh) {
  return h(
    "article",
    { class: "card key", "aria-labelledby": `key-${key.hash}` },
    h("h3", { id: `key-${key.hash}` }, key.name),
    key.description && h("p", {}, key.description),
    h(
      "p",
      { class: "meta" },
      "Wallet ",
      h("code", { class: "addr" }, key.wallet_address),
      ` · created ${when(key.created_at)} · `,
      h("span", { class: key.expiration && key.expiration <= nowSeconds() ? "expired" : undefined }, expiryText(key)),
    ),
    permissionMatrix(key, groups),
    keyActions(key, groups, refresh),
  );
}

export async function keysPage(root, message = "") {
  const [keys, groups] = await Promise.all([getAll("/list_api_keys"), getAll("/list_groups")]);
  const reveal = h("div");
  const status = statusLine();
  if (message) showOk(status, message);
  const refresh = async (msg = "") => {
    const kept = reveal;
    await keysPage(root, msg);
    // A value being shown survives the reload of the list, and only in the page.
    if (kept.firstChild) root.querySelector("#reveal").replaceWith(kept);
  };
  reveal.id = "reveal";
  root.replaceChildren(
    h("h1", {}, "Usage keys"),
    status,
    reveal,
    createForm(groups, (created) => revealOnce(root.querySelector("#reveal"), created), refresh),
    h("h2", {}, `Keys (${keys.length})`),
    h("div", { class: "list" }, keys.length ? keys.map((k) => keyCard(k, groups, refresh)) : h("p", { class: "empty" }, "No usage keys yet.")),
  );
}
