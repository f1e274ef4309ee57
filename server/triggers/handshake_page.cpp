// SPDX-License-Identifier: Apache-2.0
// The approval page of the handshake (handshake_page.hpp).
#include "triggers/handshake_page.hpp"

#include <httplib.h>

#include <array>

#include "enact/codec/hex.hpp"
#include "enact/crypto/random.hpp"
#include "http/html.hpp"

namespace enact::triggers {

// The page's script: the values it needs come from data attributes of #app (escaped by the
// server), never from text spliced into the script.
namespace {

using http::html_escape;

constexpr std::string_view kScript = R"js(
"use strict";
const app = document.getElementById("app");
const challenge = app.dataset.challenge;
const clientName = app.dataset.client;
const $ = (id) => document.getElementById(id);
function show(id) {
  for (const s of document.querySelectorAll("section")) s.hidden = s.id !== id;
}
function say(text) { $("status").textContent = text; }
async function call(path, body) {
  const init = { method: body === undefined ? "GET" : "POST", credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  let json = null;
  try { json = await res.json(); } catch (e) { json = null; }
  if (!res.ok) {
    const err = new Error(json && json.error ? json.error.message : "HTTP " + res.status);
    err.status = res.status;
    throw err;
  }
  return json;
}
function hexOf(text) {
  return "0x" + Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, "0")).join("");
}
function signedIn(user) {
  $("user").textContent = user;
  show("decide");
}
async function signIn() {
  say("");
  if (!window.ethereum) { say("No Ethereum wallet was found in this browser."); return; }
  try {
    $("signin").disabled = true;
    const accounts = await window.ethereum.request({ method: "eth_requestAccounts" });
    if (!accounts || !accounts.length) throw new Error("the wallet gave no account");
    const account = accounts[0];
    let chainId = 1;
    try { chainId = parseInt(await window.ethereum.request({ method: "eth_chainId" }), 16) || 1; } catch (e) { chainId = 1; }
    const { nonce } = await call("/auth/nonce");
    const message =
      location.host + " wants you to sign in with your Ethereum account:\n" + account + "\n\n" +
      "Sign in to the enact trigger service to approve or deny a client's access.\n\n" +
      "URI: " + location.origin + "/auth/authorize\n" +
      "Version: 1\n" +
      "Chain ID: " + chainId + "\n" +
      "Nonce: " + nonce + "\n" +
      "Issued At: " + new Date().toISOString();
    const signature = await window.ethereum.request({ method: "personal_sign", params: [hexOf(message), account] });
    const { user_id } = await call("/auth/sign-in", { message, signature });
    signedIn(user_id);
  } catch (e) {
    say("Sign-in failed: " + e.message);
  } finally {
    $("signin").disabled = false;
  }
}
async function decide(approve) {
  say("");
  try {
    $("approve").disabled = $("deny").disabled = true;
    const { status } = await call(approve ? "/auth/approve" : "/auth/deny", { challenge });
    $("outcome").textContent = status === "approved"
      ? "Approved. " + clientName + " now has access; you can close this page."
      : "Denied. " + clientName + " gets no access.";
    show("done");
  } catch (e) {
    say("Failed: " + e.message);
    $("approve").disabled = $("deny").disabled = false;
  }
}
async function signOut() {
  say("");
  try {
    await call("/auth/sign-out", {});
    $("user").textContent = "";
    show("signin-section");
  } catch (e) {
    say("Sign-out failed: " + e.message);
  }
}
$("signin").addEventListener("click", signIn);
$("signout").addEventListener("click", signOut);
$("approve").addEventListener("click", () => decide(true));
$("deny").addEventListener("click", () => decide(false));
if (app.dataset.state === "pending") {
  call("/auth/session").then(
    (s) => (s.user_id ? signedIn(s.user_id) : show("signin-section")),
    (e) => { show("signin-section"); say(e.message); });
}
)js";

}  // namespace

std::string approval_page(const approval& a, bool expired, const std::string& script_nonce) {
  const std::string client = html_escape(a.client_name);
  std::string state;
  std::string message;
  if (a.status == approval_status::approved) {
    state = "approved";
    message = "This request was approved.";
  } else if (a.status == approval_status::denied) {
    state = "denied";
    message = "This request was denied.";
  } else if (expired) {
    state = "expired";
    message = "This request expired. Start the sign-in again from the client.";
  } else {
    state = "pending";
  }
  std::string out = R"(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Approve access — enact triggers</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 36rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.5; }
.client { font-weight: bold; }
button { font-size: 1rem; padding: .5rem 1.2rem; margin-right: .5rem; }
#status { color: #a00; }
code { word-break: break-all; }
</style>
</head>
<body>
<main id="app" data-challenge=")";
  out += html_escape(a.challenge);
  out += R"(" data-client=")";
  out += client;
  out += R"(" data-state=")";
  out += state;
  out += R"(">
<h1>Approve access</h1>
<p>The client <span class="client" id="client">)";
  out += client;
  out += R"(</span> asks for a token of the enact trigger service. With it, it can create, change
and delete your triggers for 30 days (you can revoke it earlier).</p>
<p>Approve only if you just started this sign-in yourself.</p>
)";
  if (state != "pending") {
    out += "<section id=\"final\"><p>" + message + "</p></section>\n";
  } else {
    out += R"(<section id="signin-section" hidden>
<p>Sign in with your Ethereum wallet to decide.</p>
<button id="signin" type="button">Sign in with wallet</button>
</section>
<section id="decide" hidden>
<p>Signed in as <code id="user"></code>.</p>
<button id="approve" type="button">Approve</button>
<button id="deny" type="button">Deny</button>
<button id="signout" type="button">Sign out</button>
</section>
<section id="done" hidden><p id="outcome"></p></section>
<p id="status" role="status"></p>
<script nonce=")";
    out += script_nonce;
    out += "\">";
    out += kScript;
    out += "</script>\n";
  }
  out += "</main>\n</body>\n</html>\n";
  return out;
}

void send_page(httplib::Response& res, int status, std::string html, const std::string& script_nonce) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_header("Content-Security-Policy",
                 "default-src 'none'; script-src 'nonce-" + script_nonce +
                     "'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; "
                     "frame-ancestors 'none'");
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_content(std::move(html), "text/html; charset=utf-8");
}

void send_error_page(httplib::Response& res, int status, const std::string& message) {
  std::array<uint8_t, 16> n{};
  crypto::random_bytes(n);
  const std::string nonce = codec::hex::encode(n);
  send_page(res, status,
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>enact triggers</title></head>"
            "<body><h1>Cannot approve</h1><p>" +
                html_escape(message) + "</p></body></html>\n",
            nonce);
}

}  // namespace enact::triggers
