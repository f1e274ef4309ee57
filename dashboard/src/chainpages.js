// SPDX-License-Identifier: Apache-2.0
// The pages of a ChainSecured account signed in with its admin wallet (docs/dashboard.md "Signing
// in"): usage keys, groups, wallets and actions read from the registry's views and written with
// the wallet's own transactions (chainsecured.js). Each write shows its transaction hash, waits
// for the receipt and then reads the list again; a refusal shows the registry's custom error.
import { signedInWallet } from "./api.js";
import {
  accountOf,
  kSetUsageKey,
  listActions,
  listGroups,
  listKeys,
  listWallets,
  newUsageKey,
  permissionsTuple,
  sendRegistry,
  textHash,
} from "./chainsecured.js";
import { field, h, kUsageWalletNote, showError, showOk, statusLine, uid, when } from "./dom.js";
import { kAccountScopes, kGroupScopes, permissionMatrix } from "./keys.js";
import { connectWallet, signEnvelope } from "./wallet.js";

/**
 * Sends one registry write and reports it in `status`: the hash once the wallet sent it, then
 * `done(receipt)` (which re-reads the page); a refusal or failure is shown in `status`.
 */
async function write(status, what, name, args, done) {
  showOk(status, `${what}: asking the wallet to send the transaction…`);
  try {
    const receipt = await sendRegistry(name, args, (hash) => showOk(status, `${what}: transaction ${hash} sent, waiting for its receipt…`));
    await done(`${what}: transaction ${receipt.transactionHash} mined in block ${BigInt(receipt.blockNumber)}.`, receipt);
    return true;
  } catch (err) {
    showError(status, err);
    return false;
  }
}

function intro(text) {
  return h("p", { class: "meta" }, text);
}

function picker(label, options) {
  const f = field(label, { tag: "select" });
  f.input.append(h("option", { value: "" }, "— choose —"), ...options.map(([value, text]) => h("option", { value }, text)));
  return f;
}

/** Checkboxes for every scope: { fieldset, read() } where read() answers the API's fields. */
function permissionBoxes(groups, key) {
  const rows = [{ id: 0, name: "Every group" }, ...groups.map((g) => ({ id: g.group_id, name: `${g.name} (#${g.group_id})` }))];
  const account = kAccountScopes.map(([f, n]) => ({ f, n, id: uid(), input: null }));
  for (const a of account) a.input = h("input", { type: "checkbox", id: a.id, checked: !!key?.[a.f] });
  const grid = rows.flatMap((g) => kGroupScopes.map(([f, n]) => ({ f, id: g.id, g, input: h("input", { type: "checkbox", "aria-label": `${n} in ${g.name}`, checked: !!key?.[f]?.includes(g.id) }) })));
  const body = rows.map((g) => h("tr", {}, h("th", { scope: "row" }, g.name), grid.filter((c) => c.g === g).map((c) => h("td", {}, c.input))));
  const fieldset = h(
    "fieldset",
    {},
    h("legend", {}, "Permissions"),
    account.map(({ input, n, id }) => h("div", { class: "check" }, input, h("label", { for: id }, n))),
    h(
      "div",
      { class: "scroll", tabindex: "0", role: "region", "aria-label": "Permissions per group" },
      h("table", { class: "matrix edit" }, h("caption", {}, "Permissions per group"),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Group"), kGroupScopes.map(([, n]) => h("th", { scope: "col" }, n)))), h("tbody", {}, body)),
    ),
  );
  const read = () => {
    const out = Object.fromEntries(account.map(({ f, input }) => [f, input.checked]));
    for (const [f] of kGroupScopes) out[f] = grid.filter((c) => c.f === f && c.input.checked).map((c) => c.id);
    return out;
  };
  return { fieldset, read };
}

/** The usage key made in the page, shown once: the value, a copy button, and a button that clears it. */
function revealKey(container, value) {
  const id = uid();
  const input = h("input", { id, readonly: true, value, class: "secret", spellcheck: "false" });
  const note = statusLine();
  const copy = h("button", { type: "button" }, "Copy");
  copy.addEventListener("click", () =>
    navigator.clipboard.writeText(input.value).then(
      () => showOk(note, "Copied."),
      () => (input.select(), showOk(note, "Select and copy the value by hand (the browser refused clipboard access).")),
    ),
  );
  const done = h("button", { type: "button" }, "I have saved it");
  const box = h("div", { class: "card reveal", role: "region", "aria-labelledby": `${id}-h` }, h("h3", { id: `${id}-h` }, "New usage key"),
    h("p", {}, "This page made the key and this is the only time it is shown: the registry keeps only its hash. Copy it now."),
    h("label", { for: id }, "Usage key value"), h("div", { class: "inline" }, input, copy), note, done);
  done.addEventListener("click", () => {
    input.value = "";
    box.remove();
  });
  container.replaceChildren(box);
  input.focus();
}

/** Draws a page: loads with `load(account)`, then `draw(data, status, refresh)` answers its children. */
async function chainPage(root, title, note, load, draw, message) {
  const account = await accountOf(signedInWallet());
  const data = await load(account.accountHash);
  const status = statusLine();
  if (message) showOk(status, message);
  const refresh = (msg) => chainPage(root, title, note, load, draw, msg);
  root.replaceChildren(h("h1", {}, title), intro(note), status, ...draw({ ...data, account: account.accountHash }, status, refresh));
}

const kWriteNote = "ChainSecured: the page builds each registry transaction and your wallet sends it; the list below is read from the registry after the receipt.";

function keyCard(key, groups, account, refresh) {
  const status = statusLine();
  const perms = permissionBoxes(groups, key);
  const save = h("button", { type: "submit" }, "Save permissions");
  const remove = h("button", { type: "button", class: "danger" }, "Remove key");
  const form = h("form", { class: "edit-key" }, perms.fieldset, h("div", { class: "inline" }, save, remove), status);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    write(status, `Permissions of ${key.name}`, kSetUsageKey,
      [account, BigInt(key.hash), BigInt(key.expiration), key.balance, key.name, key.description, permissionsTuple(perms.read()), key.wallet_address], refresh);
  });
  remove.addEventListener("click", () => {
    if (!window.confirm(`Remove the usage key ${key.name}? Scripts using it stop working.`)) return;
    write(status, `Removing ${key.name}`, "removeUsageApiKey", [account, BigInt(key.hash)], refresh);
  });
  return h("article", { class: "card key", "aria-labelledby": `key-${key.hash}` }, h("h3", { id: `key-${key.hash}` }, key.name), key.description && h("p", {}, key.description),
    h("p", { class: "meta" }, "Wallet ", h("code", { class: "addr" }, key.wallet_address), ` · created ${when(key.created_at)} · expires ${when(key.expiration)}`),
    permissionMatrix(key, groups), h("details", {}, h("summary", {}, `Edit or remove ${key.name}`), form));
}

export function chainKeysPage(root, message = "") {
  const load = async (a) => ({ keys: await listKeys(a), groups: await listGroups(a) });
  return chainPage(root, "Usage keys", kWriteNote, load, ({ keys, groups, account }, status, refresh) => {
    const reveal = h("div", { id: "reveal" });
    const name = field("Name", { required: true, maxlength: "256" });
    const description = field("Description", { maxlength: "4096" });
    const expiry = field("Expires (UTC, optional)", { type: "datetime-local" }, "Empty: never.");
    const perms = permissionBoxes(groups, null);
    const form = h("form", { class: "card", "aria-labelledby": "create-key-h" }, h("h2", { id: "create-key-h" }, "Create a usage key"),
      h("p", {}, "The page makes the key itself (32 random bytes, base64) and sends only its hash (keccak-256 of the text) to the registry."),
      name.row, description.row, expiry.row, perms.fieldset, h("button", { type: "submit" }, "Create key"));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const key = newUsageKey();
      const expiration = expiry.input.value ? BigInt(Math.floor(Date.parse(`${expiry.input.value}Z`) / 1000)) : 0n;
      write(status, `Key ${name.input.value}`, kSetUsageKey,
        [account, key.hash, expiration, 0n, name.input.value, description.input.value, permissionsTuple(perms.read()), key.walletAddress],
        async (msg) => {
          await refresh(msg);
          revealKey(root.querySelector("#reveal"), key.value);
        });
    });
    return [reveal, form, h("h2", {}, `Keys (${keys.length})`),
      h("div", { class: "list" }, keys.length ? keys.map((k) => keyCard(k, groups, account, refresh)) : h("p", { class: "empty" }, "No usage keys yet."))];
  }, message);
}

function groupCard(g, wallets, actions, account, refresh) {
  const status = statusLine();
  const act = (what, name, args) => write(status, what, name, args, refresh);
  const id = BigInt(g.group_id);
  const walletList = g.pkp_ids_permitted.map((p) => h("li", {}, h("code", { class: "addr" }, p), " ",
    h("button", { type: "button", class: "danger small", "aria-label": `Remove wallet ${p} from ${g.name}`,
      onclick: () => act(`Removing a wallet from ${g.name}`, "removePkpFromGroup", [account, id, p]) }, "Remove")));
  const actionList = g.cid_hashes_permitted.map((hash) => {
    const a = actions.find((x) => x.hashed_cid === hash);
    return h("li", {}, a ? `${a.name} ` : "", h("code", { class: "addr" }, a?.action_ipfs_cid || hash), " ",
      h("button", { type: "button", class: "danger small", "aria-label": `Remove action ${a?.name ?? hash} from ${g.name}`,
        onclick: () => act(`Removing an action from ${g.name}`, "removeActionFromGroup", [account, id, BigInt(hash)]) }, "Remove"));
  });
  const addWallet = picker(`Add a wallet to ${g.name}`, wallets.filter((w) => !g.pkp_ids_permitted.includes(w.pkp_id)).map((w) => [w.pkp_id, `${w.name} (${w.pkp_id})`]));
  const addAction = picker(`Add an action to ${g.name}`, actions.filter((a) => !g.cid_hashes_permitted.includes(a.hashed_cid)).map((a) => [a.hashed_cid, `${a.name} (${a.action_ipfs_cid})`]));
  const adds = h("form", { class: "inline-form" }, addWallet.row, addAction.row, h("button", { type: "submit" }, "Add"));
  adds.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    // One transaction each, in order; the page is read again after the last one.
    const steps = [];
    if (addWallet.input.value) steps.push([`Adding a wallet to ${g.name}`, "addPkpToGroup", [account, id, addWallet.input.value]]);
    if (addAction.input.value) steps.push([`Adding an action to ${g.name}`, "addActionToGroup", [account, id, BigInt(addAction.input.value)]]);
    for (const [i, [what, name, args]] of steps.entries()) {
      if (!(await write(status, what, name, args, i === steps.length - 1 ? refresh : async () => {}))) break;
    }
  });
  const name = field(`Name of group ${g.group_id}`, { value: g.name, required: true, maxlength: "256" });
  const description = field(`Description of group ${g.group_id}`, { value: g.description, maxlength: "4096" });
  const rename = h("form", { class: "inline-form" }, name.row, description.row, h("button", { type: "submit" }, "Save name"));
  rename.addEventListener("submit", (ev) => {
    ev.preventDefault();
    act(`Group ${g.group_id}`, "updateGroup",
      [account, id, name.input.value, description.input.value, g.pkp_ids_permitted, g.cid_hashes_permitted.map(BigInt)]);
  });
  const drop = h("button", { type: "button", class: "danger" }, `Remove group ${g.name}`);
  drop.addEventListener("click", () => window.confirm(`Remove the group ${g.name}?`) && act(`Removing group ${g.name}`, "removeGroup", [account, id]));
  return h("article", { class: "card", "aria-labelledby": `group-${g.group_id}` }, h("h3", { id: `group-${g.group_id}` }, `${g.name} (#${g.group_id})`),
    g.description && h("p", {}, g.description),
    h("h4", {}, "Wallets"), walletList.length ? h("ul", { class: "plain" }, walletList) : h("p", { class: "empty" }, "No wallet."),
    h("h4", {}, "Actions"), actionList.length ? h("ul", { class: "plain" }, actionList) : h("p", { class: "empty" }, "No action."),
    adds, h("details", {}, h("summary", {}, `Rename ${g.name}`), rename), drop, status);
}

export function chainGroupsPage(root, message = "") {
  const load = async (a) => ({ groups: await listGroups(a), wallets: await listWallets(a), actions: await listActions(a) });
  return chainPage(root, "Groups", kWriteNote, load, ({ groups, wallets, actions, account }, status, refresh) => {
    const name = field("Group name", { required: true, maxlength: "256" });
    const description = field("Group description", { maxlength: "4096" });
    const create = h("form", { class: "card", "aria-labelledby": "create-group-h" }, h("h2", { id: "create-group-h" }, "Create a group"), name.row, description.row, h("button", { type: "submit" }, "Create group"));
    create.addEventListener("submit", (ev) => {
      ev.preventDefault();
      write(status, `Group ${name.input.value}`, "addGroup", [account, name.input.value, description.input.value, [], []], refresh);
    });
    return [create, h("h2", {}, `Groups (${groups.length})`),
      h("div", { class: "list" }, groups.length ? groups.map((g) => groupCard(g, wallets, actions, account, refresh)) : h("p", { class: "empty" }, "No groups yet."))];
  }, message);
}

export function chainWalletsPage(root, message = "") {
  // A wallet one of the account's usage keys records as its own is that key's wallet (what
  // setUsageApiKey writes for a key minted by signature), no PKP: labelled as the CLI's
  // `chain list-wallets` marks it (docs/protocol.md §2 "Wallet").
  const load = async (a) => {
    const [wallets, keys] = await Promise.all([listWallets(a), listKeys(a)]);
    const usage = new Set(keys.map((k) => k.wallet_address.toLowerCase()));
    return { wallets: wallets.map((w) => ({ ...w, usage_key_wallet: usage.has(w.wallet_address.toLowerCase()) })) };
  };
  return chainPage(root, "Wallets", kWriteNote, load, ({ wallets, account }, status, refresh) => {
    const name = field("Wallet name", { required: true, maxlength: "256" });
    const description = field("Wallet description", { maxlength: "4096" });
    const create = h("form", { class: "card", "aria-labelledby": "create-wallet-h" }, h("h2", { id: "create-wallet-h" }, "Register a wallet"),
      h("p", {}, "The server mints a PKP for your wallet's CreateWallet signature (POST /create_wallet_with_signature); your wallet then registers its derivation on the registry."),
      name.row, description.row, h("button", { type: "submit" }, "Register wallet"));
    create.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      try {
        const envelope = await signEnvelope("CreateWallet", await connectWallet());
        const res = await fetch("/core/v1/create_wallet_with_signature", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(envelope), cache: "no-store", credentials: "omit" });
        const pkp = await res.json();
        if (!res.ok) throw new Error(`${pkp?.error?.message ?? res.statusText} (${pkp?.error?.code ?? "error"}, HTTP ${res.status})`);
        write(status, `Wallet ${pkp.wallet_address}`, "registerWalletDerivation",
          [account, pkp.wallet_address, BigInt(pkp.derivation_path), name.input.value, description.input.value], refresh);
      } catch (err) {
        showError(status, err);
      }
    });
    const card = (w) => h("article", { class: "card", "aria-labelledby": `wallet-${w.pkp_id}` },
      h("h3", { id: `wallet-${w.pkp_id}` }, w.name || "(unnamed)", w.usage_key_wallet && h("span", { class: "badge" }, "usage-key wallet")),
      w.usage_key_wallet && h("p", { class: "meta" }, kUsageWalletNote),
      w.description && h("p", {}, w.description),
      h("dl", { class: "facts" }, h("dt", {}, "Ethereum address"), h("dd", {}, h("code", { class: "addr" }, w.wallet_address)),
        h("dt", {}, "Derivation path"), h("dd", {}, h("code", { class: "addr" }, w.derivation_path)), h("dt", {}, "Registered"), h("dd", {}, when(w.created_at))));
    return [create, h("h2", {}, `Wallets (${wallets.length})`), h("div", { class: "list" }, wallets.length ? wallets.map(card) : h("p", { class: "empty" }, "No wallets yet."))];
  }, message);
}

export function chainActionsPage(root, message = "") {
  return chainPage(root, "Actions", kWriteNote, async (a) => ({ actions: await listActions(a) }), ({ actions, account }, status, refresh) => {
    const cid = field("Action CID", { required: true, maxlength: "128", spellcheck: "false" }, "The IPFS CID of the code: pinned to IPFS, or uploaded with a usage key (POST /upload_action).");
    const name = field("Action name", { required: true, maxlength: "256" });
    const description = field("Action description", { maxlength: "4096" });
    const create = h("form", { class: "card", "aria-labelledby": "add-action-h" }, h("h2", { id: "add-action-h" }, "Register an action"), cid.row, name.row, description.row, h("button", { type: "submit" }, "Register action"));
    create.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const text = cid.input.value.trim();
      write(status, `Action ${name.input.value}`, "addAction", [account, textHash(text), text, name.input.value, description.input.value], refresh);
    });
    const card = (a) => {
      const line = statusLine();
      const newName = field(`Name of ${a.name}`, { value: a.name, required: true, maxlength: "256" });
      const newDescription = field(`Description of ${a.name}`, { value: a.description, maxlength: "4096" });
      const edit = h("form", { class: "inline-form" }, newName.row, newDescription.row, h("button", { type: "submit" }, "Save"));
      edit.addEventListener("submit", (ev) => {
        ev.preventDefault();
        write(line, `Action ${a.name}`, "updateActionMetadata", [account, BigInt(a.hashed_cid), newName.input.value, newDescription.input.value], refresh);
      });
      const drop = h("button", { type: "button", class: "danger" }, `Delete ${a.name}`);
      drop.addEventListener("click", () => window.confirm(`Delete the action ${a.name}? It leaves every group.`) && write(line, `Deleting ${a.name}`, "deleteAction", [account, BigInt(a.hashed_cid)], refresh));
      return h("article", { class: "card", "aria-labelledby": `action-${a.hashed_cid}` }, h("h3", { id: `action-${a.hashed_cid}` }, a.name), a.description && h("p", {}, a.description),
        h("dl", { class: "facts" }, h("dt", {}, "CID"), h("dd", {}, h("code", { class: "addr" }, a.action_ipfs_cid)), h("dt", {}, "CID hash"), h("dd", {}, h("code", { class: "addr" }, a.hashed_cid))),
        h("details", {}, h("summary", {}, `Edit ${a.name}`), edit), drop, line);
    };
    return [create, h("h2", {}, `Actions (${actions.length})`), h("div", { class: "list" }, actions.length ? actions.map(card) : h("p", { class: "empty" }, "No actions yet."))];
  }, message);
}

/** The pages a wallet session draws instead of the key's (main.js): by page id. */
export const kChainPages = { keys: chainKeysPage, groups: chainGroupsPage, wallets: chainWalletsPage, actions: chainActionsPage };
