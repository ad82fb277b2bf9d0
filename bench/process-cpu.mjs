// CPU time processes have used so far, for the benchmarks that report CPU per request or per query (Linux,
// /proc, 100 clock ticks/s).
import { readdirSync, readFileSync } from 'node:fs';

/** The fields of a /proc stat line after the command name (which may hold spaces). */
function statFields(path) {
  const stat = readFileSync(path, 'utf8');
  return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), fields: stat.slice(stat.lastIndexOf(')') + 2).split(' ') };
}

const cpuOf = ({ fields }) => ({ user: Number(fields[11]) * 10_000, system: Number(fields[12]) * 10_000 });

/** User and system time of process `pid` (all threads) in µs. */
export function processCpu(pid) {
  return cpuOf(statFields(`/proc/${pid}/stat`));
}

/**
 * The main thread of `pid` alone: its user and system time in µs, and how often it gave up the CPU
 * (voluntary: it waited for work; nonvoluntary: the scheduler preempted it). A thread that is never idle
 * bounds the process's throughput.
 */
export function mainThread(pid) {
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
  const count = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { ...cpuOf(statFields(`/proc/${pid}/task/${pid}/stat`)), voluntary: count('voluntary_ctxt_switches'), nonvoluntary: count('nonvoluntary_ctxt_switches') };
}

/** User plus system time in µs of every process named `name` (e.g. `postgres`: its backends), 0 when none runs here. */
export function commandCpu(name) {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = statFields(`/proc/${entry}/stat`);
      if (stat.name !== name) continue;
      const { user, system } = cpuOf(stat);
      total += user + system;
    } catch {
      // the process ended while the list was read
    }
  }
  return total;
}
