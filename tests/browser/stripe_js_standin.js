// SPDX-License-Identifier: Apache-2.0
// A stand-in for Stripe.js (https://js.stripe.com/v3/) served by the Stripe fixture on loopback
// (tests/billing/stripe_fixture_server.cpp) for browser.dashboard_stripe. It implements the part
// of Stripe.js the dashboard uses, as https://docs.stripe.com/js documents it: Stripe(pk),
// stripe.elements({clientSecret}), elements.create("payment").mount(el) and
// stripe.confirmPayment({elements, confirmParams, redirect}), which posts to the fixture's
// /v1/payment_intents/{id}/confirm with the publishable key and the client secret as Stripe.js
// does and resolves with {paymentIntent} or {error}. Instead of Stripe's card iframe it mounts one
// text field; 4000 0000 0000 0002 is Stripe's declined test card, any other number pays. What the
// page handed it is kept in window.__stripeStandin for the test to read.
(() => {
  const origin = new URL(document.currentScript.src).origin;
  const record = { keys: [], elements: [], created: [], confirms: [] };
  window.__stripeStandin = record;

  window.Stripe = function Stripe(publishableKey) {
    record.keys.push(publishableKey);
    return {
      elements(options) {
        record.elements.push({ clientSecret: options?.clientSecret });
        let card = null;
        return {
          create(type) {
            record.created.push(type);
            if (type !== "payment") throw new Error(`stand-in Stripe.js: no ${type} element`);
            return {
              mount(target) {
                const el = typeof target === "string" ? document.querySelector(target) : target;
                card = document.createElement("input");
                card.setAttribute("aria-label", "Card number");
                card.setAttribute("autocomplete", "cc-number");
                card.setAttribute("inputmode", "numeric");
                el.append(card);
              },
            };
          },
          standinCard: () => (card?.value ?? "").replace(/\s+/g, ""),
          standinSecret: options?.clientSecret,
        };
      },
      async confirmPayment({ elements, confirmParams, redirect }) {
        const secret = elements.standinSecret;
        record.confirms.push({ clientSecret: secret, redirect, returnUrl: confirmParams?.return_url });
        const id = secret.slice(0, secret.indexOf("_secret_"));
        const body = new URLSearchParams({
          key: publishableKey,
          client_secret: secret,
          payment_method: elements.standinCard() === "4000000000000002" ? "pm_card_chargeDeclined" : "pm_card_visa",
        });
        const res = await fetch(`${origin}/v1/payment_intents/${id}/confirm`, { method: "POST", body });
        const data = await res.json();
        return res.ok ? { paymentIntent: data } : { error: data.error };
      },
    };
  };
})();
