// SPDX-License-Identifier: Apache-2.0
// stripe_webhook.json: Stripe webhook deliveries made and judged by Stripe's own Node library.
// Headers come from stripe.webhooks.generateTestHeaderString, the verdict of each from the
// library's verifier (webhooks.signature.verifyHeader at a fixed receipt time), and every event's
// data.object carries each field the package's TypeScript types declare required, checked here
// against node_modules/stripe/esm/resources/*.d.ts so that a package upgrade that adds one fails
// the generation instead of going unnoticed. Nothing is random: ids and instants are fixed.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HERE } from './common.mjs';

const { default: Stripe } = await import('stripe');
const stripe = new Stripe('sk_test_vectors_only_never_sent');

const SECRET = 'whsec_enact_vectors_0000000000000000000000';
const ROLLED = 'whsec_enact_vectors_rolled_000000000000000';
const ATTACKER = 'whsec_attacker_000000000000000000000000000';
const T = 1767225600; // 2026-01-01T00:00:00Z
const TOLERANCE = 300; // the library's DEFAULT_TOLERANCE, and enact's

/** The required (non-optional) fields of `export interface <name>` in a .d.ts of the package. */
function requiredFields(file, name) {
  const text = readFileSync(join(HERE, 'node_modules/stripe/esm/resources', file), 'utf8');
  const start = text.indexOf(`export interface ${name} {`);
  if (start < 0) throw new Error(`${file}: no interface ${name}`);
  const body = text.slice(start, text.indexOf('\n}\n', start));
  return [...body.matchAll(/^ {4}([a-z_0-9]+):/gm)].map((m) => m[1]);
}

function checkShape(object, file, name) {
  const missing = requiredFields(file, name).filter((f) => !(f in object));
  if (missing.length) throw new Error(`${name} lacks fields its type requires: ${missing.join(', ')}`);
  return object;
}

const ACCOUNT = '0x' + 'ab'.repeat(32);
const PI = 'pi_3VectorsEnact0000000001';
const CH = 'ch_3VectorsEnact0000000001';
const DP = 'du_1VectorsEnact0000000001';

function paymentIntent() {
  return checkShape({
    id: PI, object: 'payment_intent', allowed_payment_method_types: null, amount: 2500, amount_capturable: 0, amount_details: { tip: {} },
    amount_received: 2500, application: null, application_fee_amount: null,
    automatic_payment_methods: { allow_redirects: 'always', enabled: true }, canceled_at: null,
    cancellation_reason: null, capture_method: 'automatic_async', client_secret: `${PI}_secret_vectors`,
    confirmation_method: 'automatic', created: T - 60, currency: 'usd', customer: null, customer_account: null, description: null,
    excluded_payment_method_types: null, last_payment_error: null, latest_charge: CH, livemode: false, managed_payments: null,
    metadata: { account: ACCOUNT }, next_action: null, on_behalf_of: null, payment_details: null,
    payment_method: 'pm_1VectorsEnact', payment_method_configuration_details: null,
    payment_method_options: { card: { installments: null, mandate_options: null, network: null, request_three_d_secure: 'automatic' } },
    payment_method_types: ['card'], payment_record: null, processing: null, receipt_email: null, review: null, setup_future_usage: null,
    shipping: null, source: null, statement_descriptor: null, statement_descriptor_suffix: null,
    status: 'succeeded', transfer_data: null, transfer_group: null,
  }, 'PaymentIntents.d.ts', 'PaymentIntent');
}

function charge(amountRefunded) {
  return checkShape({
    id: CH, object: 'charge', amount: 2500, amount_captured: 2500, amount_refunded: amountRefunded,
    application: null, application_fee: null, application_fee_amount: null, balance_transaction: 'txn_1VectorsEnact',
    billing_details: { address: null, email: null, name: null, phone: null, tax_id: null }, calculated_statement_descriptor: 'ENACT',
    captured: true, created: T - 60, currency: 'usd', customer: null, description: null, disputed: false,
    failure_balance_transaction: null, failure_code: null, failure_message: null, fraud_details: {}, livemode: false,
    metadata: { account: ACCOUNT }, on_behalf_of: null,
    outcome: { network_status: 'approved_by_network', reason: null, risk_level: 'normal', seller_message: 'Payment complete.', type: 'authorized' },
    paid: true, payment_intent: PI, payment_method: 'pm_1VectorsEnact', payment_method_details: { type: 'card' },
    presentment_details: null, receipt_email: null, receipt_number: null, receipt_url: null,
    refunded: amountRefunded === 2500, review: null, shipping: null, source: null, source_transfer: null, statement_descriptor: null,
    statement_descriptor_suffix: null, status: 'succeeded', transfer_data: null, transfer_group: null,
  }, 'Charges.d.ts', 'Charge');
}

function dispute(status, paymentIntent = PI) {
  return checkShape({
    id: DP, object: 'dispute', amount: 2500, balance_transactions: [], charge: CH, created: T - 30, currency: 'usd',
    enhanced_eligibility_types: [], evidence: {}, evidence_details: { due_by: T + 86400 * 7, has_evidence: false, past_due: false, submission_count: 0 },
    intended_submission_method: null, is_charge_refundable: false, livemode: false, metadata: {},
    payment_intent: paymentIntent, reason: 'fraudulent', status,
  }, 'Disputes.d.ts', 'Dispute');
}

// Event's type is a union in EventTypes.d.ts, not one interface: its fields are those of
// https://docs.stripe.com/api/events/object.
function event(n, type, object) {
  return ({
    id: `evt_1VectorsEnact${String(n).padStart(10, '0')}`, object: 'event', api_version: '2024-06-20', created: T, data: { object }, livemode: false, pending_webhooks: 1,
    request: { id: null, idempotency_key: null }, type,
  });
}

/** What the library's verifier says of `header` over `payload` at `receivedAt` (seconds). */
function verdict(payload, header, secret, receivedAt) {
  try {
    stripe.webhooks.signature.verifyHeader(payload, header, secret, TOLERANCE, undefined, receivedAt * 1000);
    return 'ok';
  } catch (e) {
    if (/tolerance/i.test(e.message)) return 'signature_expired';
    return 'signature_invalid';
  }
}

const header = (payload, secret, timestamp, scheme) =>
  stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp, ...(scheme ? { scheme } : {}) });
const v1Of = (h) => h.split(',').find((p) => p.startsWith('v1=') || p.startsWith('v0='));

export async function genStripeWebhook() {
  const events = [
    ['payment_intent.succeeded', event(1, 'payment_intent.succeeded', paymentIntent()), { object: 'payment_intent', id: PI, amount_cents: 2500, status: 'succeeded', account: ACCOUNT }],
    ['charge.refunded (partial)', event(2, 'charge.refunded', charge(1000)), { object: 'charge', id: CH, charge: CH, payment_intent: PI, amount_cents: 1000 }],
    ['charge.refunded (full)', event(3, 'charge.refunded', charge(2500)), { object: 'charge', id: CH, charge: CH, payment_intent: PI, amount_cents: 2500 }],
    ['charge.dispute.created', event(4, 'charge.dispute.created', dispute('needs_response')), { object: 'dispute', id: DP, charge: CH, payment_intent: PI, amount_cents: 2500, status: 'needs_response' }],
    ['charge.dispute.created without payment_intent', event(5, 'charge.dispute.created', dispute('needs_response', null)), { object: 'dispute', id: DP, charge: CH, payment_intent: '', amount_cents: 2500, status: 'needs_response' }],
    ['charge.dispute.closed (won)', event(6, 'charge.dispute.closed', dispute('won')), { object: 'dispute', id: DP, charge: CH, payment_intent: PI, amount_cents: 2500, status: 'won' }],
    ['charge.dispute.closed (lost)', event(7, 'charge.dispute.closed', dispute('lost')), { object: 'dispute', id: DP, charge: CH, payment_intent: PI, amount_cents: 2500, status: 'lost' }],
  ].map(([name, ev, expect]) => {
    // Stripe delivers its events pretty-printed; the signature covers these exact bytes.
    const payload = JSON.stringify(ev, null, 2);
    return { name, type: ev.type, event_id: ev.id, payload, header: header(payload, SECRET, T), ...expect };
  });

  const body = events[1].payload;
  const good = header(body, SECRET, T);
  const other = (s) => v1Of(header(body, s, T));
  const cases = [
    ['one v1 entry', good, T + 10],
    ['several v1 entries, the second valid', `t=${T},${other(ATTACKER)},${v1Of(good)},${other(ROLLED)}`, T],
    ['secret being rolled: old and new secrets each sign', `t=${T},${other(ROLLED)},${v1Of(good)}`, T + 1],
    ['several v1 entries, none valid', `t=${T},${other(ATTACKER)},${other(ROLLED)}`, T],
    ['signed at the edge of the tolerance', good, T + TOLERANCE],
    ['an old timestamp, beyond the tolerance', good, T + TOLERANCE + 1],
    ['a day-old delivery replayed', good, T + 86400],
    ['v0 scheme only', header(body, SECRET, T, 'v0'), T],
    ['signed under another secret', header(body, ATTACKER, T), T],
    ['empty header', '', T],
  ];
  const signatures = cases.map(([name, h, receivedAt]) => ({
    name, payload: body, secret: SECRET, header: h, received_at: receivedAt, tolerance: TOLERANCE,
    verdict: verdict(body, h, SECRET, receivedAt),
  }));
  // The body edited after signing (a larger refund): refused by the library, and by enact.
  const edited = body.replace('"amount_refunded": 1000', '"amount_refunded": 2500');
  if (edited === body) throw new Error('stripe_webhook: the edit did not apply');
  signatures.push({ name: 'body edited after signing', payload: edited, secret: SECRET, header: good, received_at: T, tolerance: TOLERANCE, verdict: verdict(edited, good, SECRET, T) });

  return {
    file: 'stripe_webhook.json',
    description: 'Stripe webhook deliveries: headers by stripe.webhooks.generateTestHeaderString, verdicts by the library\'s verifier at received_at (unix seconds); events shaped as the package\'s types require, each with what enact reads from it',
    libraries: ['stripe'],
    sections: { signatures, events },
  };
}
