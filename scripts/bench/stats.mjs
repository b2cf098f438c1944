/** min/median/max of repeated samples, and the figure record every figure module returns. */

export function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return { n: 0, min: null, median: null, max: null };
  const mid = Math.floor(n / 2);
  const median = n % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { n, min: sorted[0], median, max: sorted[n - 1] };
}

const round = (x, digits) => (x === null ? null : Number(x.toFixed(digits)));

/**
 * One row of the report. `value` is the median; the target is a goal (`value <= target`), never a
 * gate. `detail` holds the absolute numbers behind a ratio.
 */
export function figure({
  id,
  title,
  unit,
  samples,
  target,
  op = "<=",
  digits = 3,
  params = {},
  detail = {},
  notes = [],
}) {
  const s = summarize(samples);
  return {
    id,
    title,
    unit,
    value: round(s.median, digits),
    min: round(s.min, digits),
    median: round(s.median, digits),
    max: round(s.max, digits),
    runs: s.n,
    samples: samples.map((x) => round(x, digits)),
    target: { op, value: target },
    meets_target: s.median === null ? null : op === ">=" ? s.median >= target : s.median <= target,
    params,
    detail,
    notes,
  };
}

/** Absolute timings (ms) as a compact min/median/max record. */
export function msSummary(samples) {
  const s = summarize(samples);
  return { n: s.n, min: round(s.min, 2), median: round(s.median, 2), max: round(s.max, 2) };
}
