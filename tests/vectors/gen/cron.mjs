// SPDX-License-Identifier: Apache-2.0
// cron.json: cron expressions and their next fire times (cron-parser).

import { CronExpressionParser, Rng } from './common.mjs';

const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

/** One cron field over [lo, hi]: *, value, list, range, range/step, * /step; names optional. */
function randomCronField(rng, lo, hi, names, allowStar = true) {
  // Names replace both ends of a range or neither (no "SEP-11"); 7 (Sunday again) has no name.
  const offset = names === MONTH_NAMES ? 1 : 0;
  const named = (v) => names[v - offset];
  const atom = () => {
    const r = rng.int(10);
    const useNames = names && rng.chance(0.4);
    if (r < 4) {
      const v = rng.range(lo, hi);
      return useNames && named(v) ? named(v) : String(v);
    }
    if (r < 7) {
      const a = rng.range(lo, hi - 1);
      const b = rng.range(a + 1, hi);
      return useNames && named(a) && named(b) ? `${named(a)}-${named(b)}` : `${a}-${b}`;
    }
    const a = rng.range(lo, hi - 1);
    return `${a}-${rng.range(a + 1, hi)}/${rng.range(1, Math.max(1, Math.floor((hi - lo) / 2)))}`;
  };
  const r = rng.int(10);
  if (allowStar && r < 3) return '*';
  if (r < 4) return `*/${rng.range(1, Math.max(2, Math.floor((hi - lo + 1) / 2)))}`;
  if (r < 7) return atom();
  // A list of distinct atoms (cron-parser rejects duplicate values).
  const n = rng.range(2, 4);
  return Array.from({ length: n }, atom).join(',');
}

function randomCronExpression(rng) {
  const six = rng.chance(0.3);
  const fields = [];
  if (six) fields.push(rng.chance(0.4) ? String(rng.int(60)) : randomCronField(rng, 0, 59));
  fields.push(rng.chance(0.3) ? String(rng.int(60)) : randomCronField(rng, 0, 59));
  fields.push(rng.chance(0.3) ? String(rng.int(24)) : randomCronField(rng, 0, 23));
  fields.push(rng.chance(0.5) ? '*' : randomCronField(rng, 1, 31));
  fields.push(rng.chance(0.6) ? '*' : randomCronField(rng, 1, 12, MONTH_NAMES));
  fields.push(rng.chance(0.5) ? '*' : randomCronField(rng, 0, 7, DAY_NAMES));
  return fields.join(' ');
}

const FIXED_CRON = [
  '* * * * *', '*/5 * * * *', '0 * * * *', '0 0 * * *', '30 2 * * 1-5', '0 9-17 * * MON-FRI',
  '0 0 1 * *', '0 0 1 1 *', '0 0 29 2 *', '0 12 29 FEB *', '0 0 31 * *', '59 23 31 12 *',
  '0 0 13 * FRI', '0 0 1,15 * MON', '0 0 */2 * MON', '0 0 * * 0', '0 0 * * 7', '0 0 * * SUN',
  '15 10 * JAN,JUL *', '*/15 * * * * *', '0 */10 * * * *', '30 0 0 1 1 *', '0 0 0 29 2 *',
  '5-10/2 1,3,5 * * *', '0 0 1-7 * MON', '0 4 8-14 * *', '0 22 * * 1-5', '23 0-20/2 * * *',
  '0 0,12 1 */2 *', '0 0 * * 5-7', '0 0 * DEC SAT', '1 2 3 4 5',
  '@hourly', '@daily', '@weekly', '@monthly', '@yearly',
];

/** Vector expressions use only the portable syntax; cron-parser's extensions are skipped. */
function usesExtension(expr) {
  return /[LW#?H]/.test(expr.replace(/JUL|JUN|JAN|APR|MAR|MAY|AUG|SEP|OCT|NOV|DEC|FEB|MON|TUE|WED|THU|FRI|SAT|SUN/g, ''));
}

function isoSeconds(d) {
  const s = d.toISOString();
  if (!s.endsWith('.000Z')) throw new Error(`fire time with milliseconds: ${s}`);
  return s.replace('.000Z', 'Z');
}

export function genCron() {
  const rng = new Rng(0xc4011234);
  const vectors = [];
  const skipped = {};
  const lo = Date.UTC(2020, 0, 1) / 1000;
  const hi = Date.UTC(2040, 0, 1) / 1000;
  const candidates = [...FIXED_CRON];
  const fixedCount = FIXED_CRON.length;
  for (let i = 0; vectors.length < 200; i++) {
    const expr = i < candidates.length ? candidates[i] : randomCronExpression(rng);
    if (usesExtension(expr)) {
      skipped['uses a cron-parser extension (L, W, #, ?, H)'] = (skipped['uses a cron-parser extension (L, W, #, ?, H)'] ?? 0) + 1;
      continue;
    }
    // Start instants at whole seconds: random, at the end of a month or year, or exactly on a
    // fire time (which must not be returned: next() is strictly after the start).
    let start;
    switch (rng.int(6)) {
      case 0: start = Date.UTC(rng.range(2020, 2039), rng.int(12), 1) / 1000 - rng.pick([0, 1, 60]); break;
      case 1: start = Date.UTC(rng.range(2020, 2039), 1, 28, 23, 59, 59) / 1000; break;
      default: start = rng.range(lo, hi); break;
    }
    let next;
    try {
      const it = CronExpressionParser.parse(expr, { currentDate: new Date(start * 1000), tz: 'UTC' });
      next = Array.from({ length: 5 }, () => isoSeconds(it.next().toDate()));
    } catch (e) {
      const reason = e.message.split('\n')[0].replace(/: .*/, '');
      skipped[reason] = (skipped[reason] ?? 0) + 1;
      continue;
    }
    const onFire = rng.chance(0.15) && i >= fixedCount;
    if (onFire) {
      // Restart from the first fire time itself.
      start = Date.parse(next[0]) / 1000;
      const it = CronExpressionParser.parse(expr, { currentDate: new Date(start * 1000), tz: 'UTC' });
      next = Array.from({ length: 5 }, () => isoSeconds(it.next().toDate()));
    }
    vectors.push({ expression: expr, start: isoSeconds(new Date(start * 1000)), next });
  }
  return {
    file: 'cron.json',
    description: 'Cron schedules: the next 5 fire times strictly after `start`, from cron-parser CronExpressionParser.parse(expression, {currentDate: start, tz: "UTC"}).',
    vectors,
    rejected: skipped,
  };
}
