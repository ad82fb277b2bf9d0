// Orchestration overhead per task step, against the in-process reference runtime, excluding the database.
// Usage: npm run build && node bench/task-orchestration.mjs [tasks]   (default 300, after 50 warm-up tasks)
// The real service is prepared (config, plugins, demo bundle on an in-memory PGlite, semantic activation),
// then tasks run through the TaskOrchestrator as the HTTP route calls it. Each task is one step: start ->
// one pending query -> advance -> completed. The datasource is wrapped to time its queries; that time (the
// database) is subtracted. What remains is orchestration: request checks, authorized context, runtime
// documents and their schema checks, the runtime's planning and artifacts, authorization of the proposed
// query, budgets.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { PgliteDialect } from '../dist/adapters/pglite/pglite-dialect.js';
import { runtimeOver } from '../dist/core/sql/datasource-runtime.js';
import { prepareService } from '../dist/core/service.js';
import { coreTokens } from '../dist/core/service-tokens.js';

const tasks = Number(process.argv[2] ?? 300);
const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'vdb-task-bench-'));
const configFile = join(dir, 'service.yaml');
writeFileSync(configFile, stringify({
  server: { host: '127.0.0.1', port: 0 },
  descriptors: join(root, 'descriptors'),
  // the demo's VDB retail-crm reads a second datasource
  datasources: { retail_db: { adapter: 'pglite', init: ['seed/retail.sql'] }, crm_db: { adapter: 'pglite', init: ['seed/crm.sql'] } },
  auth: { scheme: 'bearer', tokens: [{ token: 'bench-token-0123456789', subject: 'bench', roles: ['admin', 'clerk'] }] },
  logging: { level: 'warn' },
}));

const pglite = runtimeOver(await new PgliteDialect('pglite').open({
  name: 'retail_db', adapter: 'pglite', connection: {}, pool: {}, init: [join(root, 'descriptors/seed/retail.sql')], baseDir: dir,
}));
let databaseMs = 0;
const timed = Object.create(pglite, {
  query: {
    value: async (sql, bindings, options) => {
      const started = performance.now();
      try {
        return await pglite.query(sql, bindings, options);
      } finally {
        databaseMs += performance.now() - started;
      }
    },
  },
});
const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
const service = await prepareService({ configFile, env: {}, logDestination: quiet, datasources: { retail_db: timed } });
const orchestrator = service.container.resolve(coreTokens.tasks);
const caller = { subject: 'bench', roles: ['admin', 'clerk'] };

const goals = [
  { label: 'semantic goal (metric by dimension)', goal: 'total sales by region' },
  { label: 'SQL goal', goal: 'select id, name from sales.products where id < 5' },
];
console.log(`node ${process.version}; ${tasks} tasks per goal after 50 warm-up tasks; one step per task`);
for (const { label, goal } of goals) {
  const run = async (count) => {
    for (let i = 0; i < count; i++) {
      const snapshot = await orchestrator.run({ capability: 'answer', vdb: 'retail', version: '1', body: { goal }, caller });
      if (snapshot.state !== 'completed') throw new Error(`task ended ${snapshot.state}: ${snapshot.stop.detail}`);
    }
  };
  await run(50);
  databaseMs = 0;
  const started = performance.now();
  await run(tasks);
  const totalMs = performance.now() - started;
  const perStep = (totalMs - databaseMs) / tasks;
  console.log(`${label}: ${(totalMs / tasks).toFixed(3)} ms per task, of which database ${(databaseMs / tasks).toFixed(3)} ms; orchestration ${perStep.toFixed(3)} ms per step (target ≤ 2 ms)`);
}
await service.close();
await pglite.close();
