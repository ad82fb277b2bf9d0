// CPU time a process has used so far, for the benchmarks that report CPU per request or per query.
import { readFileSync } from 'node:fs';

/** User and system time of process `pid` (all threads) in µs, from /proc/<pid>/stat (Linux, 100 clock ticks/s). */
export function processCpu(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { user: Number(fields[11]) * 10_000, system: Number(fields[12]) * 10_000 };
}
