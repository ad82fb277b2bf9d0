// Where a callgrind profile's instructions go, with V8's compiled JavaScript named: callgrind counts every
// instruction (repeatable, whatever else the machine does) but knows JIT code only by address; V8's
// `--perf-basic-prof` writes the address range of each compiled function to /tmp/perf-<pid>.map. This joins
// the two, per request (or per unit of work given with --per).
//
//   valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes --callgrind-out-file=/tmp/cg/out.%p \
//     node --perf-basic-prof dist/core/cli.js start --config bench/peers/service-postgres.yaml --port 3040
//   (warm up under load; callgrind_control -i on; N requests; callgrind_control -i off; callgrind_control -d)
//   node bench/instruction-profile.mjs /tmp/cg/out.<pid>.1-01 /tmp/perf-<pid>.map --per N [--top 40]
//
// The `-01` file is the main thread's. Needs callgrind_annotate (Debian's valgrind) on PATH.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const [profile, perfMap] = args;
if (!profile || !perfMap || profile.startsWith('--') || perfMap.startsWith('--')) {
  console.error('usage: node bench/instruction-profile.mjs CALLGRIND_OUT PERF_MAP [--per N] [--top N]');
  process.exit(2);
}
const per = flag('--per', 1);
const top = flag('--top', 40);

/** Compiled functions by start address: `start size name` per line, hexadecimal. */
const ranges = readFileSync(perfMap, 'utf8').split('\n').filter(Boolean).map((line) => {
  const [start, size, ...name] = line.split(' ');
  return { start: parseInt(start, 16), end: parseInt(start, 16) + parseInt(size, 16), name: name.join(' ') };
}).sort((a, b) => a.start - b.start);

function compiledAt(address) {
  let low = 0;
  let high = ranges.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (ranges[middle].start <= address) low = middle + 1;
    else high = middle - 1;
  }
  const range = ranges[high];
  return range !== undefined && address < range.end ? range.name : undefined;
}

const annotated = execFileSync('callgrind_annotate', ['--threshold=100', profile], { encoding: 'utf8', maxBuffer: 1 << 28 });
const byName = new Map();
let total = 0;
for (const line of annotated.split('\n')) {
  const match = /^\s*([\d,]+) \([ \d.]+%\)\s+(.*)$/.exec(line);
  if (!match) continue;
  const count = Number(match[1].replaceAll(',', ''));
  let name = match[2];
  if (name.includes('PROGRAM TOTALS')) {
    total = count;
    continue;
  }
  const jit = /^\?\?\?:0x([0-9a-f]+) /.exec(name);
  if (jit) name = compiledAt(parseInt(jit[1], 16)) ?? name;
  byName.set(name, (byName.get(name) ?? 0) + count);
}
console.log(`${Math.round(total / per)} instructions per unit (${per} units)`);
for (const [name, count] of [...byName].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${String(Math.round(count / per)).padStart(9)}  ${name.slice(0, 140)}`);
}
