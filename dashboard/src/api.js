// SPDX-License-Identifier: Apache-2.0
// The dashboard's only way to the server: the same /core/v1 API a script calls (docs/protocol.md),
// with the account's API key in X-Api-Key. The key lives in this module and in sessionStorage
// (gone when the tab closes), never in a cookie or a URL.
import { forgetWalletAuth, keccakHex, walletAuthHeader } from "./wallet.js";

const kKeyItem = "enact.dashboard.apiKey";
const kWalletItem = "enact.dashboard.wallet";

let apiKey = sessionStorage.getItem(kKeyItem) ?? "";
// Signed in with a wallet instead (a ChainSecured account's admin): its address. Requests then
// carry X-Wallet-Auth, which only the billing routes accept.
let walletAddress = sessionStorage.getItem(kWalletItem) ?? "";

export function signedIn() {
  return apiKey !== "" || walletAddress !== "";
}

/** The admin wallet signed in with, or "" when signed in with a key. */
export function signedInWallet() {
  return apiKey ? "" : walletAddress;
}

export function signInWallet(address) {
  apiKey = "";
  sessionStorage.removeItem(kKeyItem);
  walletAddress = address;
  sessionStorage.setItem(kWalletItem, address);
}

export function signIn(key) {
  apiKey = key;
  walletAddress = "";
  sessionStorage.removeItem(kWalletItem);
  sessionStorage.setItem(kKeyItem, key);
}

export function signOut() {
  apiKey = "";
  walletAddress = "";
  sessionStorage.removeItem(kKeyItem);
  sessionStorage.removeItem(kWalletItem);
  forgetWalletAuth();
  setTriggerToken("");
}

/** An answer other than 2xx: the status and the {"error": {code, message}} body of docs/protocol.md §0. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Sends a request (`body`: JSON text, or undefined for none) and answers the parsed JSON, or throws ApiError. */
async function send(method, url, headers, body) {
  const init = { method, headers, cache: "no-store", credentials: "omit" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = body;
  }
  const res = await fetch(url, init);
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    const err = data?.error;
    throw new ApiError(res.status, err?.code ?? `http_${res.status}`, err?.message ?? (text || res.statusText));
  }
  return data;
}

const json = (body) => (body === undefined ? undefined : JSON.stringify(body));

/**
 * Sends one request to /core/v1`path` and answers its parsed JSON body, or throws ApiError. A
 * wallet session signs a BillingAuth for exactly this request (docs/protocol.md §2): the target as
 * fetch sends it (the URL's serialized path and query) and the body text as sent.
 */
export async function call(method, path, body, { key = apiKey } = {}) {
  const headers = {};
  const url = new URL(`/core/v1${path}`, location.origin);
  const text = json(body);
  if (key) headers["X-Api-Key"] = key;
  else if (walletAddress) headers["X-Wallet-Auth"] = await walletAuthHeader(walletAddress, method, url.pathname + url.search, text ?? "");
  return send(method, url.href, headers, text);
}

/** keccak256 of the account key this page is signed in with: the account's hash (protocol.md §1), "" without a key. */
export const accountKeyHash = () => (apiKey ? keccakHex(apiKey) : "");

export const get = (path, opts) => call("GET", path, undefined, opts);
export const post = (path, body = {}, opts) => call("POST", path, body, opts);

/** Every item of a paged list route (page_size 100), up to `limit` items. */
export async function getAll(path, limit = 1000) {
  const items = [];
  for (let page = 1; items.length < limit; ++page) {
    const sep = path.includes("?") ? "&" : "?";
    const res = await get(`${path}${sep}page_number=${page}&page_size=100`);
    items.push(...res.items);
    if (res.items.length < 100 || items.length >= res.total) break;
  }
  return items;
}

// The trigger service's bearer token (docs/triggers.md, approval handshake), kept like the key.
const kTokenItem = "enact.dashboard.triggerToken";
let triggerToken = sessionStorage.getItem(kTokenItem) ?? "";

export function triggerTokenSet() {
  return triggerToken !== "";
}

export function setTriggerToken(token) {
  triggerToken = token;
  if (token) sessionStorage.setItem(kTokenItem, token);
  else sessionStorage.removeItem(kTokenItem);
}

// GET /dashboard/settings (docs/dashboard.md): read once per page load, again after a failure.
let settingsRead = null;

/** The server's page settings: {triggers_url, stripe_js_url}. */
export function pageSettings() {
  settingsRead ??= send("GET", "/dashboard/settings", {});
  settingsRead.catch(() => {
    settingsRead = null;
  });
  return settingsRead;
}

// Where the trigger service's /api and /auth routes are: "" for this page's origin (the default),
// or the base URL GET /dashboard/settings names as `triggers_url` (the service on a listener of its
// own, --triggers-listen, or behind --triggers-public-url).
let triggersBase = null;

/** The trigger service's base URL, without a trailing slash ("" for this page's own origin). */
export function triggerServiceUrl() {
  triggersBase ??= pageSettings().then((settings) => {
    const url = settings?.triggers_url;
    if (url === null || url === undefined || url === "") return "";
    const parsed = new URL(url);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error(`triggers_url is not an http(s) URL: ${url}`);
    return `${parsed.origin}${parsed.pathname}`.replace(/\/+$/, "");
  });
  triggersBase.catch(() => {
    triggersBase = null; // asked again on the next call
  });
  return triggersBase;
}

/** One request to the trigger service (`/api/…`, `/auth/…` at triggerServiceUrl()) with the bearer token. */
export async function triggerCall(method, path, body, { auth = true } = {}) {
  const headers = {};
  if (auth) headers.Authorization = `Bearer ${triggerToken}`;
  return send(method, `${await triggerServiceUrl()}${path}`, headers, json(body));
}
