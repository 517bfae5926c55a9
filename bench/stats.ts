/** Small numeric helpers shared by the scenarios and the report. */

/** High-resolution wall clock in milliseconds, comparable across async tasks of this process. */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface Summary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentiles; null when there are no samples. */
export function summarize(samples: readonly number[]): Summary | null {
  if (samples.length === 0) return null;
  const sorted = Float64Array.from(samples).sort();
  const rank = (p: number): number =>
    sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0;
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: sorted.length,
    p50: rank(0.5),
    p90: rank(0.9),
    p99: rank(0.99),
    max: sorted[sorted.length - 1] ?? 0,
    mean: sum / sorted.length,
  };
}

export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function errorText(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`.split('\n')[0] ?? err.name;
  return String(err);
}
