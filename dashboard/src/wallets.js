// SPDX-License-Identifier: Apache-2.0
// The Wallets page: each PKP wallet with its Ethereum address and its Solana (Ed25519) address,
// both as GET /list_wallets answers them; creating a wallet (docs/dashboard.md).
import { getAll, post } from "./api.js";
import { field, h, kUsageWalletNote, showError, showOk, statusLine } from "./dom.js";

function walletCard(w) {
  const row = (k, v) => [h("dt", {}, k), h("dd", {}, v)];
  return h(
    "article",
    { class: "card", "aria-labelledby": `wallet-${w.pkp_id}` },
    h("h3", { id: `wallet-${w.pkp_id}` }, w.name || "(unnamed)", w.usage_key_wallet && h("span", { class: "badge" }, "usage-key wallet")),
    // The server marks the wallet a usage key's (docs/protocol.md §2 "Wallet"): its key was handed
    // out with the usage key, so it is no PKP and never signs in a run.
    w.usage_key_wallet && h("p", { class: "meta" }, kUsageWalletNote),
    w.description && h("p", {}, w.description),
    h(
      "dl",
      { class: "facts" },
      row("Ethereum address", h("code", { class: "addr" }, w.wallet_address)),
      // null when the wallet's key is not this account's (a wallet registered on-chain under a
      // derivation path this account does not own): the server derives no address for it.
      row("Solana address", w.solana_address ? h("code", { class: "addr" }, w.solana_address) : h("span", { class: "empty" }, "none: this wallet's key is not this account's")),
      row("PKP id", h("code", { class: "addr" }, w.pkp_id)),
    ),
  );
}

export async function walletsPage(root, message = "") {
  const wallets = await getAll("/list_wallets");
  const status = statusLine();
  if (message) showOk(status, message);
  const name = field("Wallet name", { required: true, maxlength: "256" });
  const description = field("Wallet description", { maxlength: "4096" });
  const create = h("form", { class: "card", "aria-labelledby": "create-wallet-h" }, h("h2", { id: "create-wallet-h" }, "Create a wallet"),
    h("p", {}, "The key is derived inside the TEE on each use and never leaves it."), name.row, description.row, h("button", { type: "submit" }, "Create wallet"));
  create.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const w = await post("/create_wallet", { name: name.input.value, description: description.input.value });
      await walletsPage(root, `Wallet ${w.pkp_id} created, Solana address ${w.solana_address}.`);
    } catch (err) {
      showError(status, err);
    }
  });
  root.replaceChildren(
    h("h1", {}, "Wallets"),
    status,
    create,
    h("h2", {}, `Wallets (${wallets.length})`),
    h("div", { class: "list" }, wallets.length ? wallets.map(walletCard) : h("p", { class: "empty" }, "No wallets yet.")),
  );
}
