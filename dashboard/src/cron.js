// SPDX-License-Identifier: Apache-2.0
// The trigger form's cron helper: the next fire times of a schedule in UTC, with the syntax the
// trigger service accepts (docs/triggers.md "Configs": 5 fields, or 6 with seconds first; ranges,
// steps, lists, month and weekday names, the @ macros; day of month and day of week, when both are
// restricted, fire on either). Checked against cron-parser's vectors (tests/vectors/cron.json) by
// browser.dashboard_bundle.
const kMacros = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};
const kMonths = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const kDays = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
// [min, max, names (index + offset), offset]
const kFields = {
  second: [0, 59],
  minute: [0, 59],
  hour: [0, 23],
  dom: [1, 31],
  month: [1, 12, kMonths, 1],
  dow: [0, 7, kDays, 0],
};

function value(text, [min, max, names, offset], what) {
  const lower = text.toLowerCase();
  if (names && names.includes(lower)) return names.indexOf(lower) + offset;
  if (!/^\d+$/.test(text)) throw new Error(`${what}: "${text}" is not a number${names ? " or a name" : ""}`);
  const n = Number(text);
  if (n < min || n > max) throw new Error(`${what}: ${n} is outside ${min}–${max}`);
  return n;
}

/** The set of values one field allows, and whether it was "*" (or "?"). */
function parseField(text, what) {
  const spec = kFields[what];
  const [min, max] = spec;
  const out = new Set();
  const any = text === "*" || text === "?";
  for (const part of text.split(",")) {
    const [range, stepText] = part.split("/");
    if (part.split("/").length > 2) throw new Error(`${what}: "${part}" has two steps`);
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1 || (stepText !== undefined && !/^\d+$/.test(stepText)))
      throw new Error(`${what}: bad step in "${part}"`);
    let lo;
    let hi;
    if (range === "*" || range === "?") [lo, hi] = [min, max];
    else if (range.includes("-")) {
      const [a, b] = range.split("-");
      [lo, hi] = [value(a, spec, what), value(b, spec, what)];
      if (lo > hi) throw new Error(`${what}: "${range}" runs backwards`);
    } else {
      lo = value(range, spec, what);
      hi = stepText === undefined ? lo : max;
    }
    for (let v = lo; v <= hi; v += step) out.add(what === "dow" && v === 7 ? 0 : v);
  }
  return { values: [...out].sort((a, b) => a - b), any };
}

/** Parses an expression: { second, minute, hour, dom, month, dow } or throws with the reason. */
export function parseCron(expression) {
  let text = expression.trim();
  text = kMacros[text.toLowerCase()] ?? text;
  const parts = text.split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6) throw new Error("a schedule has 5 fields (or 6, seconds first)");
  if (parts.length === 5) parts.unshift("0");
  const names = ["second", "minute", "hour", "dom", "month", "dow"];
  return Object.fromEntries(names.map((n, i) => [n, parseField(parts[i], n)]));
}

/** The next `count` fire times strictly after `from` (a Date), as Dates, in UTC. */
export function nextFirings(expression, from = new Date(), count = 5) {
  const c = parseCron(expression);
  const out = [];
  const start = Math.floor(from.getTime() / 1000) * 1000;
  const dayMs = 86_400_000;
  const firstDay = Math.floor(start / dayMs);
  for (let day = firstDay; day < firstDay + 366 * 28 && out.length < count; ++day) {
    const d = new Date(day * dayMs);
    if (!c.month.values.includes(d.getUTCMonth() + 1)) continue;
    const domOk = c.dom.values.includes(d.getUTCDate());
    const dowOk = c.dow.values.includes(d.getUTCDay());
    const dayOk = c.dom.any || c.dow.any ? domOk && dowOk : domOk || dowOk;
    if (!dayOk) continue;
    for (const h of c.hour.values)
      for (const m of c.minute.values)
        for (const s of c.second.values) {
          const t = day * dayMs + ((h * 60 + m) * 60 + s) * 1000;
          if (t > start && out.length < count) out.push(new Date(t));
        }
  }
  return out;
}
