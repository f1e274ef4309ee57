// SPDX-License-Identifier: Apache-2.0
// Building the page without HTML strings: every value reaches the DOM as text, so nothing the
// server answers (names, descriptions, errors) can become markup. No inline styles either: the
// page's Content-Security-Policy allows only the stylesheet (docs/dashboard.md).
const kSvg = "http://www.w3.org/2000/svg";

function build(el, attrs, children) {
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** An HTML element: h("button", {type: "submit", onclick}, "Save"). */
/** What a usage-key wallet is, shown on its card (docs/protocol.md §2 "Wallet"). */
export const kUsageWalletNote =
  "Usage-key wallet: the wallet of a usage key minted by signature, not a PKP. It never signs, encrypts or decrypts in a run.";

export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** An SVG element, as h() makes HTML ones. */
export function svg(tag, attrs, ...children) {
  return build(document.createElementNS(kSvg, tag), attrs, children);
}

let nextId = 0;
/** A fresh element id for label/aria pairs. */
export function uid(prefix = "f") {
  return `${prefix}-${++nextId}`;
}

/** A labelled form field: { row, input }. */
export function field(label, attrs = {}, hint = "") {
  const id = uid();
  const hintId = hint ? uid("hint") : undefined;
  const input = h(attrs.tag ?? "input", { ...attrs, tag: undefined, id, "aria-describedby": hintId });
  const row = h("div", { class: "field" }, h("label", { for: id }, label), input, hint && h("small", { id: hintId }, hint));
  return { row, input };
}

/** A status line whose changes screen readers announce. */
export function statusLine() {
  return h("p", { class: "status", role: "status", "aria-live": "polite" });
}

/** Shows an error (an ApiError or any Error) in `line`. */
export function showError(line, err) {
  line.classList.add("error");
  line.textContent = err?.code ? `${err.message} (${err.code}, HTTP ${err.status})` : String(err?.message ?? err);
}

export function showOk(line, text) {
  line.classList.remove("error");
  line.textContent = text;
}

/** Unix seconds as an ISO date and time (UTC), or "never" for 0. */
export function when(seconds) {
  if (!seconds) return "never";
  return new Date(seconds * 1000).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

/** A table with a caption, its header row and body rows (arrays of cells). */
export function table(caption, headers, rows, { empty = "None yet." } = {}) {
  if (!rows.length) return h("p", { class: "empty" }, empty);
  return h(
    "div",
    { class: "scroll", tabindex: "0", role: "region", "aria-label": caption },
    h(
      "table",
      {},
      h("caption", {}, caption),
      h("thead", {}, h("tr", {}, headers.map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows.map((r) => h("tr", {}, r.map((c) => h("td", {}, c))))),
    ),
  );
}
