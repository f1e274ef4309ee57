// SPDX-License-Identifier: Apache-2.0
// The Account page's chart of credit use: the charges of GET /core/v1/billing/usage summed per UTC
// day and drawn as SVG bars (built element by element; no chart library).
import { h, svg } from "./dom.js";

const kDays = 14;
const kWidth = 560;
const kHeight = 160;
const kPad = { top: 12, right: 8, bottom: 24, left: 44 };

/** Credits charged on each of the last `days` UTC days ending at `now` (ms): [{day, credits}]. */
export function dailyCredits(charges, now = Date.now(), days = kDays) {
  const dayOf = (ms) => Math.floor(ms / 86_400_000);
  const last = dayOf(now);
  const totals = new Map();
  for (const c of charges) {
    const d = dayOf(c.charged_at * 1000);
    if (d > last - days && d <= last) totals.set(d, (totals.get(d) ?? 0) + c.charged_credits);
  }
  const out = [];
  for (let d = last - days + 1; d <= last; ++d) out.push({ day: d, credits: totals.get(d) ?? 0 });
  return out;
}

/** The chart as a <figure>: an SVG with a text alternative and the figures as a caption. */
export function usageChart(charges, now = Date.now()) {
  const series = dailyCredits(charges, now);
  const total = series.reduce((s, p) => s + p.credits, 0);
  const max = Math.max(1, ...series.map((p) => p.credits));
  const plotW = kWidth - kPad.left - kPad.right;
  const plotH = kHeight - kPad.top - kPad.bottom;
  const slot = plotW / series.length;
  const label = (d) => new Date(d * 86_400_000).toISOString().slice(5, 10);
  const title = `Credits used per day over the last ${kDays} days: ${total} in all, at most ${max === 1 && total === 0 ? 0 : max} in one day.`;
  const chart = svg(
    "svg",
    { viewBox: `0 0 ${kWidth} ${kHeight}`, role: "img", "aria-label": title, class: "chart" },
    svg("title", {}, title),
    svg("line", { x1: kPad.left, y1: kPad.top + plotH, x2: kWidth - kPad.right, y2: kPad.top + plotH, class: "axis" }),
    svg("text", { x: kPad.left - 6, y: kPad.top + 4, "text-anchor": "end", class: "tick" }, String(max)),
    svg("text", { x: kPad.left - 6, y: kPad.top + plotH, "text-anchor": "end", class: "tick" }, "0"),
    series.map((p, i) => {
      const barH = (p.credits / max) * plotH;
      const x = kPad.left + i * slot + slot * 0.15;
      return [
        svg(
          "rect",
          { x: x.toFixed(1), y: (kPad.top + plotH - barH).toFixed(1), width: (slot * 0.7).toFixed(1), height: barH.toFixed(1), class: "bar" },
          svg("title", {}, `${label(p.day)}: ${p.credits} credits`),
        ),
        i % 2 === series.length % 2
          ? null
          : svg("text", { x: (x + slot * 0.35).toFixed(1), y: kHeight - 6, "text-anchor": "middle", class: "tick" }, label(p.day)),
      ];
    }),
  );
  return h("figure", { class: "chart-box" }, chart, h("figcaption", {}, title));
}
