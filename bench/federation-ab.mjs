// One federated statement of bench/federation.mjs on two builds side by side, alternating, so that both see the
// same load: the build of this checkout ("after") and BENCH_ROOT_BEFORE ("before": another build, e.g. of the
// commit before a change), each service in a child process started by its own bench/federation.mjs --serve,
// and the same statement on the baseline database. Prints each side's median time, its ratio to the baseline,
// and its service's CPU per statement (/proc, every thread), then the same CPU split into the main thread and
// the others (DuckDB's, libuv's, V8's), each side run alone.
//
//   npm run build && VDB_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test BENCH_ROOT_BEFORE=/tmp/before \
//     node bench/federation-ab.mjs selective 80        # or: full 3
//
// The databases are bench/federation.mjs's (run it once with BENCH_KEEP=1 first).
import { fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { databaseUrl, FULL, SELECTIVE, TOKEN, writeFederationConfig } from './federation-service.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const url = process.env.VDB_TEST_POSTGRES_URL;
const before = process.env.BENCH_ROOT_BEFORE;
if (!url || !before) {
  console.error('set VDB_TEST_POSTGRES_URL and BENCH_ROOT_BEFORE');
  process.exit(1);
}
const [kind = 'selective', count = '40'] = process.argv.slice(2);
const runs = Number(count);
const [sql, values] = kind === 'full' ? [FULL, []] : [SELECTIVE, ['customer4242@example.com']];

async function start(root, configFile) {
  const child = fork(join(root, 'bench/federation.mjs'), ['--serve', configFile], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await new Promise((resolve) => child.once('message', resolve));
  const client = new pg.Client({ host: '127.0.0.1', port, database: 'fedbench@1', user: 'bench', password: TOKEN });
  client.on('error', () => undefined);
  await client.connect();
  // a catalog statement waits for the SQL door's mirror
  await client.query('select count(*) from pg_catalog.pg_namespace');
  return { child, client };
}

/** CPU milliseconds of the process's threads, the main thread apart. */
function cpu(pid) {
  const split = { main: 0, others: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
      split[tid === String(pid) ? 'main' : 'others'] += (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      // a thread that ended meanwhile
    }
  }
  return split;
}

const once = async (client) => {
  const started = process.hrtime.bigint();
  await client.query({ text: sql, values, rowMode: 'array' });
  return Number(process.hrtime.bigint() - started) / 1e6;
};
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

const configFile = writeFederationConfig(url, { memoryLimit: '512MB', maxSourceRows: 1_000_000 });
// one after the other: both sync the same database role
const sides = { before: await start(before, configFile), after: await start(ROOT, configFile) };
const single = new pg.Client({ connectionString: databaseUrl(url, 'fedbench_single') });
await single.connect();
for (const side of Object.values(sides)) await once(side.client);
console.log(`${new Date().toISOString()} load average ${load()}`);
const times = { before: [], after: [], single: [] };
const used = { before: 0, after: 0 };
for (let i = 0; i < runs; i += 1) {
  for (const name of i % 2 === 0 ? ['after', 'before'] : ['before', 'after']) {
    const { main, others } = cpu(sides[name].child.pid);
    times[name].push(await once(sides[name].client));
    const now = cpu(sides[name].child.pid);
    used[name] += now.main + now.others - main - others;
  }
  times.single.push(await once(single));
}
for (const name of ['before', 'after']) {
  console.log(`${kind} ${name}: median ${median(times[name]).toFixed(2)} ms, ${(median(times[name]) / median(times.single)).toFixed(2)}× one PostgreSQL `
    + `(${median(times.single).toFixed(2)} ms); the service's CPU ${(used[name] / runs).toFixed(1)} ms per statement (${runs} runs)`);
}
for (const name of ['before', 'after']) {
  const start = cpu(sides[name].child.pid);
  for (let i = 0; i < runs; i += 1) await once(sides[name].client);
  const end = cpu(sides[name].child.pid);
  console.log(`${kind} ${name} alone: CPU per statement, main thread ${((end.main - start.main) / runs).toFixed(1)} ms, other threads ${((end.others - start.others) / runs).toFixed(1)} ms`);
}
console.log(`${new Date().toISOString()} load average ${load()}`);
await single.end();
for (const side of Object.values(sides)) {
  await side.client.end().catch(() => undefined);
  side.child.send('stop');
}
