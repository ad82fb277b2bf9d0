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
