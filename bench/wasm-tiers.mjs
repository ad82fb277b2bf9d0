// What keeping the process's WebAssembly on V8's baseline compiler costs and saves (core/wasm-tiers.ts,
// docs/federation.md#memory): each round runs two processes, one with V8's default tiers and one after
// keepWebAssemblyOnBaseline(), alternately, and each measures
//   - libpg-query's parser: the peak RSS over the RSS once loaded while it parses a statement PARSES times
//     (then waits 3 s, for compiles in the background to end), and its CPU per statement once warm;
//   - PGlite (in its own process's main thread): the peak RSS over the RSS before it while it is created, fed
//     100,000 rows, runs 1,500 indexed lookups, waits 3 s, runs 1,500 more and 3 full scans; the CPU of the
//     second 1,500 and of the scans.
// CPU is the process's (process.cpuUsage: every thread, V8's compiler threads included).
//
//   npm run build && node bench/wasm-tiers.mjs
//
// Environment: ROUNDS (3), PARSES (20000).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const PARSES = Number(process.env.PARSES ?? 20000);

const mib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
/** Resets the peak RSS to the RSS (proc(5): clear_refs 5); returns the RSS in MiB. */
const resetPeak = () => {
  writeFileSync('/proc/self/clear_refs', '5');
  return mib('VmRSS');
};
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function child(setting) {
  if (setting === 'baseline') (await import(`${ROOT}dist/core/wasm-tiers.js`)).keepWebAssemblyOnBaseline();
  const { loadModule, parseSync } = await import('libpg-query');
  await loadModule();
  const sql = 'select c.region, count(*) as n, sum(l.price * l.quantity) as revenue from shop.customers c join shop.orders o on o.customer_id = c.id join shop.lines l on l.order_id = o.id where o.placed_at >= $1 and c.region is not null group by c.region order by revenue desc limit 10';
  parseSync(sql);
  const parserBase = resetPeak();
  for (let run = 0; run < PARSES; run++) {
    parseSync(sql);
    // the event loop turns, as in the service, so that a finished compile is installed
    if (run % 200 === 0) await pause(0);
  }
  await pause(3000);
  const parserPeak = mib('VmHWM') - parserBase;
  let cpu = cpuMs();
  for (let run = 0; run < PARSES; run++) parseSync(sql);
  const parseUs = ((cpuMs() - cpu) * 1000) / PARSES;

  const { PGlite } = await import('@electric-sql/pglite');
  const pgliteBase = resetPeak();
  const db = await PGlite.create();
  await db.exec('create table t as select i, md5(i::text) as s from generate_series(1, 100000) as i; create index on t (i)');
  const lookup = (i) => db.query("select count(*), max(s) from t where i between $1 and $2 and s like '%a%'", [i, i + 50]);
  for (let i = 0; i < 1500; i++) await lookup(i);
  await pause(3000);
  cpu = cpuMs();
  for (let i = 0; i < 1500; i++) await lookup(i);
  const lookupsMs = cpuMs() - cpu;
  cpu = cpuMs();
  for (let i = 0; i < 3; i++) await db.query('select sum(length(s)), count(distinct substr(s, 1, 3)) from t');
  const scansMs = cpuMs() - cpu;
  const pglitePeak = mib('VmHWM') - pgliteBase;
  await db.close();
  process.stdout.write(`${JSON.stringify({ setting, parserPeak, parseUs, pglitePeak, lookupsMs, scansMs })}\n`);
}

if (process.argv[2] === 'child') {
  await child(process.argv[3]);
} else {
  console.log(`Node ${process.version}, ${ROUNDS} rounds, ${PARSES} parses`);
  console.log('setting  | parser peak | µs/parse warm | PGlite peak | 1,500 lookups CPU | 3 scans CPU');
  for (let round = 0; round < ROUNDS; round++) {
    for (const setting of ['default', 'baseline']) {
      const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), 'child', setting], { cwd: ROOT, encoding: 'utf8' });
      if (run.status !== 0) throw new Error(`${setting}: exit ${run.status}\n${run.stderr}`);
      const r = JSON.parse(run.stdout.trim().split('\n').at(-1));
      console.log(`${setting.padEnd(8)} | ${r.parserPeak.toFixed(0).padStart(7)} MiB | ${r.parseUs.toFixed(1).padStart(13)} | ${r.pglitePeak.toFixed(0).padStart(7)} MiB | ${r.lookupsMs.toFixed(0).padStart(14)} ms | ${r.scansMs.toFixed(0).padStart(8)} ms`);
    }
  }
}
