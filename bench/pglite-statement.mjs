// CPU per statement of the PGlite datasource's path for a caller's statement, against PGlite's own query()
// in this thread: the peers lookup (`SELECT id, email, name, region FROM shop.customers WHERE email = ?`) on
// the bench bundle's seed, through the datasource as a caller's statement is run (a data role's scope,
// read-only, wrapped in the row-size bound with the 16 MiB default, the byte budget), and without the bound.
// CPU is the process's (process.cpuUsage: the main thread and the worker thread together), per statement,
// after 500 warm-up statements.
//
//   npm run build && node bench/pglite-statement.mjs
//
// Environment: N (statements per measure, 4000), CONC (statements in flight, 1), ROUNDS (2), ONLY (names,
// comma-separated parts), ROOT (the build to measure, default this one), WASM_BASELINE=1 (WebAssembly on V8's
// baseline compiler only, as the service sets it: core/wasm-tiers.ts; this script runs no service).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
const ROOT = process.env.ROOT ?? new URL('..', import.meta.url).pathname.slice(0, -1);
if (process.env.WASM_BASELINE === '1') (await import(`${ROOT}/dist/core/wasm-tiers.js`)).keepWebAssemblyOnBaseline();
const { PgliteDialect } = await import(`${ROOT}/dist/adapters/pglite/pglite-dialect.js`);
const SEED = readFileSync(`${ROOT}/bench/peers/descriptors/seed/shop.sql`, 'utf8');
const SQL = 'SELECT id, email, name, region FROM shop.customers WHERE email = ? ORDER BY id LIMIT 5';
const N = Number(process.env.N ?? 4000);
const CONC = Number(process.env.CONC ?? 1);
const dir = mkdtempSync(join(tmpdir(), 'h12p-'));
writeFileSync(join(dir, 'seed.sql'), SEED + '\ncreate role vdb_r nologin; grant usage on schema shop to vdb_r; grant select on shop.customers to vdb_r;');
const dialect = new PgliteDialect('pglite');
const ds = await dialect.open({ name: 'b', adapter: 'pglite', connection: {}, pool: {}, init: [join(dir, 'seed.sql')], baseDir: dir });
await ds.restrictSession(['vdb_r']);
const scope = Object.freeze({ role: 'vdb_r', readOnly: true });
const MAX = 16 * 1024 * 1024;
const bounded = dialect.boundRowBytes(SQL);
const db = await PGlite.create(); await db.exec(SEED);
async function measure(name, fn) {
  for (let i = 0; i < 500; i++) await fn();
  const c0 = process.cpuUsage(); const t0 = performance.now();
  let i = 0;
  await Promise.all(Array.from({ length: CONC }, async () => { while (i++ < N) await fn(); }));
  const t = performance.now() - t0; const c = process.cpuUsage(c0);
  console.log(`${name.padEnd(34)} wall ${(t * 1000 / N).toFixed(0).padStart(5)} µs  cpu ${((c.user + c.system) / N).toFixed(0).padStart(5)} µs`);
}
const variants = {
  'in-thread PGlite db.query': () => db.query(SQL.replace('?', '$1'), ['ada@example.com']),
  'service: scope + bound + budget': async () => { const r = await ds.query(bounded, ['ada@example.com', MAX], { scope, timeoutMs: 30000, maxBytes: MAX }); if (r.rows.length !== 1) throw new Error('rows'); },
  'scope, no bound': () => ds.query(SQL, ['ada@example.com'], { scope, timeoutMs: 30000, maxBytes: MAX }),
};
const only = process.env.ONLY?.split(',');
for (let round = 0; round < Number(process.env.ROUNDS ?? 2); round++)
  for (const [name, fn] of Object.entries(variants)) if (!only || only.some((o) => name.includes(o))) await measure(name, fn);
await ds.close();
await db.close();
rmSync(dir, { recursive: true, force: true });
