// SPDX-License-Identifier: Apache-2.0
// The dashboard's entry: signing in with the account API key, the section navigation (one hash
// route per page, so the back button and reloads work) and the page each route draws.
// docs/dashboard.md describes the pages; every write goes through /core/v1 (api.js).
import { get, signIn, signInWallet, signOut, signedIn, signedInWallet } from "./api.js";
import { accountPage } from "./account.js";
import { actionsPage } from "./actions.js";
import { attestationPage } from "./attestation.js";
import { kChainPages } from "./chainpages.js";
import { field, h, showError, statusLine } from "./dom.js";
import { groupsPage } from "./groups.js";
import { keysPage } from "./keys.js";
import { triggersPage } from "./triggers.js";
import { connectWallet, hasWallet } from "./wallet.js";
import { walletsPage } from "./wallets.js";

const kPages = [
  ["account", "Account", accountPage],
  ["keys", "Usage keys", keysPage],
  ["groups", "Groups", groupsPage],
  ["wallets", "Wallets", walletsPage],
  ["actions", "Actions", actionsPage],
  ["triggers", "Triggers", triggersPage],
  ["attestation", "Attestation", attestationPage],
];

// A wallet session (a ChainSecured account's admin, X-Wallet-Auth) reaches the API's billing
// routes only; its keys, groups, wallets and actions are the registry's, read and written through
// the wallet (chainpages.js).
function pages() {
  if (!signedInWallet()) return kPages;
  return kPages.filter(([p]) => p !== "triggers").map(([p, label, draw]) => [p, label, kChainPages[p] ?? draw]);
}

// A payment that left the page for its provider comes back through return_url with the intent's
// client secret in the query (docs/dashboard.md "Paying by card"): dropped from the address bar and
// the history at once; the webhook credits the payment.
if (/[?&](payment_intent_client_secret|redirect_status)=/.test(location.search)) {
  history.replaceState(null, "", location.pathname + location.hash);
}

const main = document.getElementById("main");
const nav = document.getElementById("nav");

function signInPage() {
  const key = field("Account API key", { type: "password", required: true, autocomplete: "off", spellcheck: "false" }, "Kept in this tab only (session storage), never in a cookie or a URL.");
  const status = statusLine();
  const form = h("form", { class: "card narrow", "aria-labelledby": "signin-h" }, h("h1", { id: "signin-h" }, "Sign in"), key.row, h("button", { type: "submit" }, "Sign in"), status);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const value = key.input.value.trim();
    try {
      await get("/account", { key: value });
      signIn(value);
      key.input.value = "";
      if (location.hash === "#/account") render();
      else location.hash = "#/account";
    } catch (err) {
      showError(status, err);
    }
  });
  const walletBox = h("div");
  if (hasWallet()) {
    const byWallet = h("button", { type: "button" }, "Sign in with a wallet");
    byWallet.addEventListener("click", async () => {
      try {
        const address = await connectWallet();
        signInWallet(address);
        await get("/billing/balance"); // asks the wallet for a BillingAuth envelope and checks it
        if (location.hash === "#/account") render();
        else location.hash = "#/account";
      } catch (err) {
        signOut();
        showError(status, err);
      }
    });
    walletBox.append(h("p", {}, "ChainSecured account? Its admin wallet signs in: billing with X-Wallet-Auth, keys, groups, wallets and actions with its own registry transactions."), byWallet);
  }
  form.append(walletBox);
  nav.replaceChildren();
  main.replaceChildren(form);
  key.input.focus();
}

function drawNav(current) {
  const out = h("button", { type: "button", class: "link" }, "Sign out");
  out.addEventListener("click", () => {
    signOut();
    location.hash = "";
    render();
  });
  nav.replaceChildren(
    h(
      "ul",
      {},
      pages().map(([id, label]) => h("li", {}, h("a", { href: `#/${id}`, "aria-current": id === current ? "page" : undefined }, label))),
      h("li", {}, out),
    ),
  );
}

let rendering = 0;
async function render() {
  if (!signedIn()) return signInPage();
  const id = location.hash.replace(/^#\//, "") || "account";
  const shown = pages();
  const page = shown.find(([p]) => p === id) ?? shown[0];
  drawNav(page[0]);
  document.title = `${page[1]} · enact dashboard`;
  const mine = ++rendering;
  main.replaceChildren(h("p", { role: "status" }, "Loading…"));
  try {
    const root = h("div", { class: "page" });
    await page[2](root);
    if (mine !== rendering) return;
    main.replaceChildren(root);
    main.focus();
  } catch (err) {
    if (mine !== rendering) return;
    if (err.status === 401) {
      signOut();
      return signInPage();
    }
    const line = statusLine();
    showError(line, err);
    main.replaceChildren(h("h1", {}, page[1]), line);
  }
}

window.addEventListener("hashchange", render);
render();
