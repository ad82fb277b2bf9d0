/** `name{a="1",b="2"}` with its labels sorted by name, whatever order the exposition wrote them in. */
function keyOf(name: string, labels: Record<string, string>): string {
  const rendered = Object.keys(labels).sort().map((label) => `${label}="${labels[label]}"`).join(',');
  return rendered === '' ? name : `${name}{${rendered}}`;
}

/** The samples of a Prometheus text exposition, by metric name and labels. */
export function samplesOf(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((label) => [label[1] as string, label[2] as string]));
    samples.set(keyOf(match[1] as string, labels), Number(match[3]));
  }
  return samples;
}

/** The value of a sample; 0 when absent (a counter not yet incremented for those labels). */
export function sampleValue(samples: ReadonlyMap<string, number>, name: string, labels: Record<string, string> = {}): number {
  return samples.get(keyOf(name, labels)) ?? 0;
}
