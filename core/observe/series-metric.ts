import { Counter, Histogram, type Metric, type MetricValue, type Registry } from 'prom-client';

type Labels = Readonly<Record<string, string>>;
type Series = Counter | Histogram;

/**
 * A metric of the request path: each of its label sets is an unlabelled prom-client Counter or Histogram
 * (prom-client's own counting and buckets), which the caller finds once per label set and keeps. A labelled
 * prom-client metric builds and interns a key from the labels on every `inc` and `observe`, about 5% of the
 * query route's instructions for its four per request (bench/README.md). prom-client's Registry exposes it as one
 * metric: each series' values with its labels added, in prom-client's format.
 */
export class SeriesMetric<S extends Series> {
  readonly aggregator = 'sum';
  private readonly series: { labels: Labels; metric: S }[] = [];

  constructor(readonly name: string, readonly help: string, readonly type: 'counter' | 'histogram', private readonly create: () => S, prometheus: Registry) {
    prometheus.registerMetric(this as unknown as Metric);
  }

  /** The series of a label set not seen before: reported from now on, at zero until counted. */
  add(labels: Labels): S {
    const metric = this.create();
    this.series.push({ labels, metric });
    return metric;
  }

  /** What prom-client's Registry reads of a metric (prom-client's typings give `type` as a number; it is the name). */
  async get(): Promise<{ name: string; help: string; type: string; values: MetricValue<string>[]; aggregator: string }> {
    const values: MetricValue<string>[] = [];
    for (const { labels, metric } of this.series) {
      for (const value of (await metric.get()).values) values.push({ ...value, labels: { ...value.labels, ...labels } });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    for (const { metric } of this.series) metric.reset();
  }
}

/** A counter's series, unregistered: its name only names the values it reports. */
export function counterSeries(name: string, help: string, prometheus: Registry): SeriesMetric<Counter> {
  return new SeriesMetric(name, help, 'counter', () => new Counter({ name, help, registers: [] }), prometheus);
}

export function histogramSeries(name: string, help: string, buckets: number[], prometheus: Registry): SeriesMetric<Histogram> {
  return new SeriesMetric(name, help, 'histogram', () => new Histogram({ name, help, buckets, registers: [] }), prometheus);
}
