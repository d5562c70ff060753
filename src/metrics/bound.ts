import type { Registry } from 'prom-client';

type Labels = Record<string, string | number>;

/** prom-client's configuration shape (name, help, labelNames, registers). */
export interface BoundConfig<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registers: readonly Registry[];
}
interface Sample {
  labels: Labels;
  value: number;
  metricName?: string;
}

/** One label set's live numbers; `gone` once remove() dropped it (a bound handle then re-adds it). */
interface Series<V> {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: V;
  gone: boolean;
}

/**
 * The metrics every call updates, with label sets bound once: a bound handle's update is a few
 * additions (prom-client validates, hashes and copies the label object on every call, ~6 µs per
 * call for the two per-call metrics). Exposed through a prom-client Registry in prom-client's own
 * text format (a test compares the two byte for byte).
 */
abstract class BoundMetric<L extends string, V> {
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series<V>>();

  readonly name: string;
  readonly help: string;
  private readonly labelNames: readonly L[];

  constructor(config: BoundConfig<L>) {
    this.name = config.name;
    this.help = config.help;
    this.labelNames = config.labelNames;
    for (const r of config.registers) r.registerMetric(this as never);
  }

  protected abstract fresh(): V;
  protected abstract samples(s: Series<V>): Sample[];

  /** The label set's series, made on first use; a handle keeps it until remove() drops it. */
  protected bind(labels: Readonly<Record<L, string>>): () => V {
    const key = this.labelNames.map((n) => labels[n]).join('\u0000');
    let s = this.series.get(key);
    const own = () => {
      if (!s || s.gone) {
        s = this.series.get(key) ?? { labels: { ...labels }, value: this.fresh(), gone: false };
        this.series.set(key, s);
      }
      return s.value;
    };
    return own;
  }

  /** Drops the series whose labels include these (prom-client's `remove`). */
  remove(labels: Partial<Record<L, string | number>>): void {
    for (const [key, s] of this.series) {
      if (Object.entries(labels).every(([k, v]) => s.labels[k] === String(v))) {
        s.gone = true;
        this.series.delete(key);
      }
    }
  }

  reset(): void {
    for (const s of this.series.values()) s.gone = true;
    this.series.clear();
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    const values: Sample[] = [];
    for (const s of this.series.values()) values.push(...this.samples(s));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  abstract readonly type: string;
}

export class BoundCounter<L extends string> extends BoundMetric<L, { n: number }> {
  readonly type = 'counter';

  /** A handle whose inc() adds to this label set. */
  labels(labels: Readonly<Record<L, string>>): { inc(by?: number): void } {
    const series = this.bind(labels);
    return {
      inc: (by = 1) => {
        series().n += by;
      },
    };
  }

  protected fresh(): { n: number } {
    return { n: 0 };
  }

  protected samples(s: Series<{ n: number }>): Sample[] {
    return [{ labels: { ...s.labels }, value: s.value.n }];
  }
}

interface Buckets {
  counts: Float64Array;
  sum: number;
  count: number;
}

export class BoundHistogram<L extends string> extends BoundMetric<L, Buckets> {
  readonly type = 'histogram';

  private readonly bounds: readonly number[];

  constructor(config: BoundConfig<L> & { buckets: readonly number[] }) {
    super(config);
    this.bounds = config.buckets;
  }

  /** A handle whose observe() records into this label set. */
  labels(labels: Readonly<Record<L, string>>): { observe(v: number): void } {
    const series = this.bind(labels);
    const bounds = this.bounds;
    return {
      observe: (v: number) => {
        if (!Number.isFinite(v)) return;
        const b = series();
        let i = 0;
        while (i < bounds.length && v > (bounds[i] as number)) i++;
        if (i < bounds.length) b.counts[i] = (b.counts[i] ?? 0) + 1;
        b.sum += v;
        b.count++;
      },
    };
  }

  protected fresh(): Buckets {
    return { counts: new Float64Array(this.bounds.length), sum: 0, count: 0 };
  }

  protected samples(s: Series<Buckets>): Sample[] {
    const out: Sample[] = [];
    let acc = 0;
    const bucket = `${this.name}_bucket`;
    this.bounds.forEach((le, i) => {
      acc += s.value.counts[i] as number;
      out.push({ labels: { le, ...s.labels }, value: acc, metricName: bucket });
    });
    out.push({ labels: { le: '+Inf', ...s.labels }, value: s.value.count, metricName: bucket });
    out.push({ labels: { ...s.labels }, value: s.value.sum, metricName: `${this.name}_sum` });
    out.push({ labels: { ...s.labels }, value: s.value.count, metricName: `${this.name}_count` });
    return out;
  }
}
