// SPDX-License-Identifier: Apache-2.0
// Paying a payment intent by card with Stripe.js (docs/dashboard.md "Paying by card"): the script
// from the URL GET /dashboard/settings names (the page's policy allows that origin only in Stripe
// mode), the Payment Element made with the intent's client secret and the publishable key of GET
// /billing/stripe_config, stripe.confirmPayment, then the credit (docs/protocol.md §2 "Billing").
import { get, getAll, pageSettings, post } from "./api.js";
import { h, showError, showOk } from "./dom.js";

let stripeLoad = null;

/** window.Stripe, once the script at `url` has run; loaded once per page. */
function loadStripe(url) {
  stripeLoad ??= new Promise((resolve, reject) => {
    if (typeof window.Stripe === "function") return resolve(window.Stripe);
    const script = document.createElement("script");
    script.src = url;
    script.addEventListener("load", () =>
      typeof window.Stripe === "function" ? resolve(window.Stripe) : reject(new Error(`${url} defines no Stripe().`)));
    script.addEventListener("error", () => reject(new Error(`Stripe.js could not be loaded from ${url}; card payments are unavailable.`)));
    document.head.append(script);
  });
  stripeLoad.catch(() => {
    stripeLoad = null;
  });
  return stripeLoad;
}

/**
 * The credits of a payment Stripe reports succeeded: the webhook usually credits it first;
 * confirm_payment asks Stripe itself, so a late or missing webhook does not leave them waiting.
 * Its 409 after the webhook is the payment credited already. Answers the new balance.
 */
async function credit(id) {
  try {
    return (await post("/billing/confirm_payment", { payment_intent_id: id })).balance_credits;
  } catch (err) {
    if (err.code !== "conflict") throw err;
    const record = (await getAll("/billing/payments")).find((p) => p.payment_intent_id === id);
    if (!record?.credited) throw err;
    return (await get("/billing/balance")).balance_credits;
  }
}

/**
 * The card form for `intent` ({payment_intent_id, client_secret, amount_cents}): the Payment
 * Element and a Pay button. `status` is the form's status line; `paid(text)` runs once the
 * credits are in, with the sentence to show.
 */
export async function cardPayment(intent, status, paid) {
  const [settings, config] = await Promise.all([pageSettings(), get("/billing/stripe_config")]);
  if (!settings?.stripe_js_url) throw new Error("This server names no Stripe.js URL: card payments are not available here.");
  const Stripe = await loadStripe(settings.stripe_js_url);
  const stripe = Stripe(config.publishable_key);
  const elements = stripe.elements({ clientSecret: intent.client_secret });
  const slot = h("div", { class: "payment-element" });
  elements.create("payment").mount(slot);
  const dollars = `$${(intent.amount_cents / 100).toFixed(2)}`;
  const pay = h("button", { type: "button" }, `Pay ${dollars}`);
  pay.addEventListener("click", async () => {
    pay.disabled = true;
    try {
      // A card resolves here; a method that must leave the page comes back to it (return_url).
      const { error, paymentIntent } = await stripe.confirmPayment({
        elements,
        confirmParams: { return_url: location.href },
        redirect: "if_required",
      });
      if (error) {
        pay.disabled = false;
        return showError(status, new Error(`The payment did not go through: ${error.message ?? "Stripe refused it."} Nothing was charged; check the details or use another card.`));
      }
      if (paymentIntent?.status !== "succeeded") {
        return showOk(status, `Stripe reports the payment as ${paymentIntent?.status ?? "pending"}; the credits arrive when Stripe reports it succeeded.`);
      }
      const balance = await credit(intent.payment_intent_id);
      await paid(`Payment received: the balance is ${balance} credits.`);
    } catch (err) {
      pay.disabled = false;
      showError(status, err);
    }
  });
  return h("div", { class: "card-payment" }, h("p", {}, `Pay ${dollars} by card; Stripe takes the card details, this server never sees them.`), slot, pay);
}
