// Where a V8 CPU profile's time goes: self time by function and by file or package, inclusive time of the
// service's own files, as shares of the busy samples (idle and GC counted apart).
//
//   node bench/profile-summary.mjs FILE.cpuprofile [--top N (25)] [--skip S (0)]
//
// --skip S leaves out the samples of the first S seconds of the profile (startup, warm-up).
// A profile of the service under load: BENCH_SERVICE_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' with
// bench/peers.mjs (the profile covers the whole life of the process: warm-up, rounds, startup; the startup
// is a few hundred ms against tens of seconds of load).
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const file = args[0];
if (!file || file.startsWith('--')) {
  console.error('usage: node bench/profile-summary.mjs FILE.cpuprofile [--top N] [--skip S]');
  process.exit(2);
}
const TOP = flag('--top', 25);
const SKIP_US = flag('--skip', 0) * 1e6;
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

/** A package name, `node:<module>`, a project file (`core/...`), or a V8 pseudo-frame such as `(garbage collector)`. */
function where({ url, functionName }) {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 14).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 6).replace(/\.js$/, '.ts');
  return url.replace(/^file:\/\//, '');
}
const fn = (frame) => `${frame.functionName || '(anonymous)'} ${where(frame)}:${frame.lineNumber + 1}`;
const ours = (key) => /(^| )(core|adapters|plugins)\//.test(key);

const selfFn = new Map();
const selfFile = new Map();
const totalFn = new Map();
const totalFile = new Map();
const bump = (map, key) => map.set(key, (map.get(key) ?? 0) + 1);
let busy = 0;
let idle = 0;
let elapsed = 0;
for (const [index, id] of profile.samples.entries()) {
  elapsed += profile.timeDeltas[index];
  if (elapsed < SKIP_US) continue;
  const node = byId.get(id);
  if (node.callFrame.functionName === '(idle)') {
    idle++;
    continue;
  }
  busy++;
  bump(selfFn, fn(node.callFrame));
  bump(selfFile, where(node.callFrame));
  const fns = new Set();
  const files = new Set();
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const frame = byId.get(at).callFrame;
    if (frame.functionName === '(root)') continue;
    fns.add(fn(frame));
    files.add(where(frame));
  }
  for (const key of fns) bump(totalFn, key);
  for (const key of files) bump(totalFile, key);
}

const top = (map, count, keep = () => true) => [...map.entries()].filter(([key]) => keep(key)).sort((a, b) => b[1] - a[1]).slice(0, count)
  .map(([key, hits]) => `  ${(100 * hits / busy).toFixed(1).padStart(5)}%  ${key}`).join('\n');
console.log(`${file}: ${busy} busy samples, ${idle} idle (${(100 * idle / (busy + idle)).toFixed(1)}% idle); shares are of busy samples`);
console.log(`\nself time by function:\n${top(selfFn, TOP)}`);
console.log(`\nself time by file or package:\n${top(selfFile, TOP)}`);
console.log(`\ninclusive time, the service's functions:\n${top(totalFn, TOP, ours)}`);
console.log(`\ninclusive time by file or package:\n${top(totalFile, TOP)}`);
