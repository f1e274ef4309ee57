// SPDX-License-Identifier: Apache-2.0
// A small JavaScript highlighter for action code: comments, strings and template literals,
// numbers, keywords and the Enact API, each as a <span> with a class; everything else as text.
// It builds text nodes only, so the code can never become markup.
import { h } from "./dom.js";

const kKeywords = new Set(
  "await break case catch class const continue default delete do else export extends false finally for function if import in instanceof let new null return switch this throw true try typeof undefined var void while yield async of".split(" "),
);
const kToken = /(\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$))|("(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?|`(?:\\.|[^`\\])*`?)|(\b\d[\d_]*(?:\.\d+)?(?:e[+-]?\d+)?n?\b|\b0x[0-9a-fA-F_]+n?\b)|([A-Za-z_$][\w$]*)/g;

/** [{kind, text}] for `code`; kind is "comment", "string", "number", "keyword", "api" or "". */
export function tokens(code) {
  const out = [];
  let last = 0;
  for (const m of code.matchAll(kToken)) {
    if (m.index > last) out.push({ kind: "", text: code.slice(last, m.index) });
    const kind = m[1] ? "comment" : m[2] ? "string" : m[3] ? "number" : kKeywords.has(m[4]) ? "keyword" : m[4] === "Enact" || m[4] === "params" ? "api" : "";
    out.push({ kind, text: m[0] });
    last = m.index + m[0].length;
  }
  if (last < code.length) out.push({ kind: "", text: code.slice(last) });
  return out;
}

/** The code as a <pre><code> block with highlighted tokens. */
export function highlighted(code, label) {
  return h(
    "pre",
    { class: "code", tabindex: "0", "aria-label": label },
    h("code", {}, tokens(code).map((t) => (t.kind ? h("span", { class: `tok-${t.kind}` }, t.text) : t.text))),
  );
}
