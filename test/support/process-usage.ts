/** This process's memory and CPU around a piece of work (the service under test runs in this process). */
export interface Usage<T> {
  value: T;
  /** Peak resident set size growth over the start, sampled every 20 ms, in MiB. */
  rssGrowthMiB: number;
  /** CPU time (user and system) the process spent, in seconds. */
  cpuSeconds: number;
}

const MIB = 1024 * 1024;

export async function measured<T>(work: () => Promise<T>): Promise<Usage<T>> {
  const startRss = process.memoryUsage().rss;
  let peak = startRss;
  const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 20);
  const cpu = process.cpuUsage();
  try {
    const value = await work();
    peak = Math.max(peak, process.memoryUsage().rss);
    const used = process.cpuUsage(cpu);
    return { value, rssGrowthMiB: (peak - startRss) / MIB, cpuSeconds: (used.user + used.system) / 1e6 };
  } finally {
    clearInterval(sampler);
  }
}

/**
 * Waits until this process's RSS stops growing (less than 2 MiB over 3 s, at most a minute): work the
 * service started in the background (a catalog mirror's thread opening) is then not counted in a measure.
 */
export async function rssSettled(): Promise<void> {
  const started = Date.now();
  let last = process.memoryUsage().rss;
  while (Date.now() - started < 60_000) {
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const now = process.memoryUsage().rss;
    if (Math.abs(now - last) < 2 * MIB) return;
    last = now;
  }
}
