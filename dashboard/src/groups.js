// SPDX-License-Identifier: Apache-2.0
// The Groups page: each group with the wallets (PKPs) and actions it permits; creating a group,
// renaming it, and adding or removing a wallet or an action (docs/dashboard.md).
import { getAll, post } from "./api.js";
import { field, h, showError, showOk, statusLine } from "./dom.js";

function picker(label, options) {
  const f = field(label, { tag: "select" });
  f.input.append(h("option", { value: "" }, "— choose —"), ...options.map(([value, text]) => h("option", { value }, text)));
  return f;
}

function groupCard(g, wallets, actions, refresh) {
  const status = statusLine();
  const act = async (path, body, done) => {
    try {
      await post(path, body);
      await refresh(done);
    } catch (err) {
      showError(status, err);
    }
  };
  const actionName = (hash) => actions.find((a) => a.hashed_cid === hash);
  const walletList = g.pkp_ids_permitted.map((p) =>
    h("li", {}, h("code", { class: "addr" }, p), " ",
      h("button", { type: "button", class: "danger small", "aria-label": `Remove wallet ${p} from ${g.name}`, onclick: () => act("/remove_pkp_from_group", { group_id: g.group_id, pkp_id: p }, `Wallet removed from ${g.name}.`) }, "Remove")),
  );
  const actionList = g.cid_hashes_permitted.map((hash) => {
    const a = actionName(hash);
    return h("li", {}, a ? `${a.name} ` : "", h("code", { class: "addr" }, a?.action_ipfs_cid || hash), " ",
      h("button", { type: "button", class: "danger small", "aria-label": `Remove action ${a?.name ?? hash} from ${g.name}`, onclick: () => act("/remove_action_from_group", { group_id: g.group_id, hashed_cid: hash }, `Action removed from ${g.name}.`) }, "Remove"));
  });
  const addWallet = picker(`Add a wallet to ${g.name}`, wallets.filter((w) => !g.pkp_ids_permitted.includes(w.pkp_id)).map((w) => [w.pkp_id, `${w.name} (${w.pkp_id})`]));
  const addAction = picker(`Add an action to ${g.name}`, actions.filter((a) => !g.cid_hashes_permitted.includes(a.hashed_cid)).map((a) => [a.action_ipfs_cid, `${a.name} (${a.action_ipfs_cid})`]));
  const name = field(`Name of group ${g.group_id}`, { value: g.name, required: true, maxlength: "256" });
  const description = field(`Description of group ${g.group_id}`, { value: g.description, maxlength: "4096" });
  const rename = h("form", { class: "inline-form" }, name.row, description.row, h("button", { type: "submit" }, "Save name"));
  rename.addEventListener("submit", (ev) => {
    ev.preventDefault();
    act("/update_group", { group_id: g.group_id, name: name.input.value, description: description.input.value }, `Group ${g.group_id} saved.`);
  });
  const adds = h("form", { class: "inline-form" }, addWallet.row, addAction.row, h("button", { type: "submit" }, "Add"));
  adds.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (addWallet.input.value) await act("/add_pkp_to_group", { group_id: g.group_id, pkp_id: addWallet.input.value }, `Wallet added to ${g.name}.`);
    if (addAction.input.value) await act("/add_action_to_group", { group_id: g.group_id, action_ipfs_cid: addAction.input.value }, `Action added to ${g.name}.`);
  });
  return h(
    "article",
    { class: "card", "aria-labelledby": `group-${g.group_id}` },
    h("h3", { id: `group-${g.group_id}` }, `${g.name} (#${g.group_id})`),
    g.description && h("p", {}, g.description),
    h("h4", {}, "Wallets"),
    walletList.length ? h("ul", { class: "plain" }, walletList) : h("p", { class: "empty" }, "No wallet."),
    h("h4", {}, "Actions"),
    actionList.length ? h("ul", { class: "plain" }, actionList) : h("p", { class: "empty" }, "No action."),
    adds,
    h("details", {}, h("summary", {}, `Rename ${g.name}`), rename),
    status,
  );
}

export async function groupsPage(root, message = "") {
  const [groups, wallets, actions] = await Promise.all([getAll("/list_groups"), getAll("/list_wallets"), getAll("/list_actions")]);
  const refresh = (msg) => groupsPage(root, msg);
  const status = statusLine();
  if (message) showOk(status, message);
  const name = field("Group name", { required: true, maxlength: "256" });
  const description = field("Group description", { maxlength: "4096" });
  const create = h("form", { class: "card", "aria-labelledby": "create-group-h" }, h("h2", { id: "create-group-h" }, "Create a group"), name.row, description.row, h("button", { type: "submit" }, "Create group"));
  create.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const g = await post("/add_group", { name: name.input.value, description: description.input.value });
      await refresh(`Group ${name.input.value} (#${g.group_id}) created.`);
    } catch (err) {
      showError(status, err);
    }
  });
  root.replaceChildren(
    h("h1", {}, "Groups"),
    status,
    create,
    h("h2", {}, `Groups (${groups.length})`),
    h("div", { class: "list" }, groups.length ? groups.map((g) => groupCard(g, wallets, actions, refresh)) : h("p", { class: "empty" }, "No groups yet.")),
  );
}
