/**
 * The metric families observed on every request or message, kept by hand and written in Prometheus's text
 * format exactly as prom-client writes them. prom-client hashes an observation's label object on every call
 * (1 % of the server's main thread under load); these find their series by the label values' own string.
 */

/** A label value escaped for the text format: backslash, double quote and newline. */
export function labelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

/** `name="value",…` for these names and values, in this order. */
function labelPairs(names: readonly string[], values: readonly string[]): string {
  return names.map((name, i) => `${name}="${labelValue(values[i] ?? '')}"`).join(',');
}

function header(name: string, help: string, type: 'counter' | 'histogram'): string {
  return `# HELP ${name} ${help}\n# TYPE ${name} ${type}`;
}

/** A counter with two labels: one series per pair of values, in the order they were first seen. */
export class PairCounter {
  private readonly series = new Map<string, Map<string, { labels: string; value: number }>>();
  private readonly order: { labels: string; value: number }[] = [];

  constructor(
    private readonly name: string,
    private readonly help: string,
    private readonly labelNames: readonly [string, string],
  ) {}

  inc(first: string, second: string): void {
    let ofFirst = this.series.get(first);
    if (ofFirst === undefined) {
      ofFirst = new Map();
      this.series.set(first, ofFirst);
    }
    const found = ofFirst.get(second);
    if (found !== undefined) {
      found.value++;
      return;
    }
    const created = { labels: labelPairs(this.labelNames, [first, second]), value: 1 };
    ofFirst.set(second, created);
    this.order.push(created);
  }

  text(): string {
    const lines = [header(this.name, this.help, 'counter')];
    for (const { labels, value } of this.order) lines.push(`${this.name}{${labels}} ${value}`);
    return lines.join('\n');
  }
}

interface HistogramSeries {
  labels: string;
  /** Observations per bucket, not cumulative: the one an observation falls in (none past the last bound). */
  buckets: Float64Array;
  sum: number;
  count: number;
}

/** A histogram with one label: per label value, a typed array of bucket counts, a sum and a count. */
export class LabelledHistogram {
  private readonly series = new Map<string, HistogramSeries>();

  constructor(
    private readonly name: string,
    private readonly help: string,
    private readonly labelName: string,
    /** Upper bounds, ascending. */
    private readonly bounds: readonly number[],
  ) {}

  /** Counts `value` in the series of this label value. */
  observe(label: string, value: number): void {
    let series = this.series.get(label);
    if (series === undefined) {
      series = {
        labels: labelPairs([this.labelName], [label]),
        buckets: new Float64Array(this.bounds.length),
        sum: 0,
        count: 0,
      };
      this.series.set(label, series);
    }
    const { bounds } = this;
    let bucket = 0;
    while (bucket < bounds.length && value > bounds[bucket]!) bucket++;
    if (bucket < bounds.length) series.buckets[bucket]!++;
    series.sum += value;
    series.count++;
  }

  text(): string {
    const { name, bounds } = this;
    const lines = [header(name, this.help, 'histogram')];
    for (const { labels, buckets, sum, count } of this.series.values()) {
      let cumulative = 0;
      bounds.forEach((bound, i) => {
        cumulative += buckets[i]!;
        lines.push(`${name}_bucket{le="${bound}",${labels}} ${cumulative}`);
      });
      lines.push(
        `${name}_bucket{le="+Inf",${labels}} ${count}`,
        `${name}_sum{${labels}} ${sum}`,
        `${name}_count{${labels}} ${count}`,
      );
    }
    return lines.join('\n');
  }
}
