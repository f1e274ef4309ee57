// SPDX-License-Identifier: Apache-2.0
// The Account page: mode, admin wallet, balance, the chart of credit use, payments, and buying
// credits (create a payment intent, then pay it by card with Stripe.js, or with the dev provider
// confirm it here). docs/dashboard.md.
import { accountKeyHash, get, getAll, post, signOut, signedInWallet } from "./api.js";
import { usageChart } from "./chart.js";
import { field, h, showError, showOk, statusLine, table, uid, when } from "./dom.js";
import { cardPayment } from "./stripe.js";
import { connectWallet, hasWallet, signEnvelope } from "./wallet.js";

/** Converting to ChainSecured (docs/chainsecured.md): one-way, signed by the new admin wallet. */
function convertForm(account) {
  const status = statusLine();
  const agreeId = uid();
  const agree = h("input", { type: "checkbox", id: agreeId });
  const go = h("button", { type: "button", class: "danger" }, "Convert with my wallet");
  go.addEventListener("click", async () => {
    if (!agree.checked) return showError(status, new Error("Tick the box first: the conversion cannot be undone."));
    go.disabled = true;
    try {
      const address = await connectWallet();
      // The envelope names the account converted (docs/protocol.md §2): the hash of this page's key.
      const envelope = await signEnvelope("ConvertAccount", address, { account: accountKeyHash() });
      const res = await post("/convert_to_chain_secured_account", { new_admin_wallet_address: address, ...envelope });
      signOut();
      document.getElementById("main").replaceChildren(
        h("h1", {}, "Account converted"),
        h("p", { role: "status" }, `The account is ChainSecured: ${res.new_admin_wallet_address} is its admin, and the account key no longer works. Sign in again with that wallet.`),
        h("p", {}, h("a", { href: "#/signed-out" }, "Sign in")),
      );
    } catch (err) {
      go.disabled = false;
      showError(status, err);
    }
  });
  return h(
    "section",
    { class: "card", "aria-labelledby": "convert-h" },
    h("h2", { id: "convert-h" }, "Convert to ChainSecured"),
    h("p", {}, h("strong", {}, "One-way. "), "Your browser wallet becomes the admin: it signs its own registry writes, the server no longer writes for the account, and the account API key stops working. Groups, wallets, actions and usage keys stay. This cannot be undone."),
    hasWallet() ? null : h("p", { class: "empty" }, "No browser wallet was found in this page."),
    h("div", { class: "check" }, agree, h("label", { for: agreeId }, "I understand that the account key stops working and that this cannot be undone")),
    go,
    status,
  );
}

function summary(account, balance) {
  const mode = account.managed
    ? "Managed: the server holds the admin key and signs registry writes for you."
    : "ChainSecured: registry writes are signed by the admin wallet.";
  const row = (k, v) => [h("dt", {}, k), h("dd", {}, v)];
  return h(
    "dl",
    { class: "facts" },
    account.name && row("Name", account.name),
    row("Mode", mode),
    row("Admin wallet", h("code", { class: "addr" }, account.admin_wallet_address)),
    account.api_key_hash && row("Account key hash", h("code", { class: "addr" }, account.api_key_hash)),
    row("Balance", h("strong", { id: "balance" }, `${balance.balance_credits} credits`)),
    row("Payment provider", balance.mode ?? "stripe"),
  );
}

// Refunds and disputes as GET /billing/payments lists them (docs/protocol.md §2 "Billing").
function reversalNote(p) {
  const dollars = (c) => `$${(c / 100).toFixed(2)}`;
  const notes = [];
  const refunded = (p.reversals ?? []).filter((r) => r.kind === "refund").reduce((n, r) => n + r.amount_cents, 0);
  if (refunded > 0) notes.push(`refunded ${dollars(refunded)}`);
  const disputes = (p.reversals ?? []).filter((r) => r.kind === "dispute").length;
  const won = (p.reversals ?? []).filter((r) => r.kind === "dispute_won").length;
  if (disputes > won) notes.push("disputed");
  else if (won > 0) notes.push("dispute won");
  return notes.join(", ");
}

function paymentsTable(payments) {
  return table(
    "Payments",
    ["Intent", "Amount", "Provider", "Status", "Created"],
    payments.map((p) => [
      h("code", {}, p.payment_intent_id),
      `$${(p.amount_cents / 100).toFixed(2)}`,
      p.provider,
      [p.credited ? `credited ${when(p.credited_at)}` : "pending", reversalNote(p)].filter(Boolean).join("; "),
      when(p.created_at),
    ]),
    { empty: "No payments yet." },
  );
}

function buyForm(devProvider, refresh, message) {
  const amount = field("Amount in US dollars", { type: "number", min: "5", step: "0.01", value: "5", required: true }, "At least $5.00.");
  const status = statusLine();
  const pending = h("div", { class: "pending" });
  const form = h(
    "form",
    { class: "card", "aria-labelledby": "buy-h" },
    h("h3", { id: "buy-h" }, "Buy credits"),
    amount.row,
    h("button", { type: "submit" }, "Create payment intent"),
    status,
    pending,
  );
  if (message) showOk(status, message);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    pending.replaceChildren();
    const cents = Math.round(Number(amount.input.value) * 100);
    try {
      const intent = await post("/billing/create_payment_intent", { amount_cents: cents });
      showOk(status, `Payment intent ${intent.payment_intent_id} created for $${(cents / 100).toFixed(2)}.`);
      if (!devProvider) {
        pending.append(await cardPayment(intent, status, refresh));
        pending.querySelector("input, button")?.focus();
        return;
      }
      const confirm = h("button", { type: "button" }, "Confirm payment (dev provider)");
      confirm.addEventListener("click", async () => {
        confirm.disabled = true;
        try {
          const res = await post("/billing/confirm_payment", { payment_intent_id: intent.payment_intent_id });
          showOk(status, `Payment confirmed: the balance is ${res.balance_credits} credits.`);
          await refresh();
        } catch (err) {
          confirm.disabled = false;
          showError(status, err);
        }
      });
      pending.append(confirm);
      confirm.focus();
    } catch (err) {
      showError(status, err);
    }
  });
  return form;
}

export async function accountPage(root, message = "") {
  const wallet = signedInWallet();
  const [account, balance, charges, payments] = await Promise.all([
    // A wallet (X-Wallet-Auth) reaches only the billing routes; it is the admin of its account.
    wallet ? Promise.resolve({ managed: false, name: "", admin_wallet_address: wallet, api_key_hash: "" }) : get("/account"),
    get("/billing/balance"),
    getAll("/billing/usage"),
    getAll("/billing/payments"),
  ]);
  const refresh = (text = "") => accountPage(root, text);
  // h() drops the false of a ChainSecured account; replaceChildren would print it.
  const page = h(
    "div",
    {},
    h("h1", {}, "Account"),
    summary(account, balance),
    h("h2", {}, "Credit use"),
    usageChart(charges),
    h("h2", {}, "Payments"),
    buyForm(balance.mode === "dev", refresh, message),
    paymentsTable(payments),
    account.managed && convertForm(account),
  );
  root.replaceChildren(page);
}
