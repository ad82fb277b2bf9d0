import { fileURLToPath } from 'node:url';
import { PgliteDialect } from '../../adapters/pglite/pglite-dialect.js';
import type { Datasource } from '../../core/plugin-api/sql-dialect.js';
import { runtimeOver } from '../../core/sql/datasource-runtime.js';

let opening: Promise<Datasource> | undefined;
const retailSeed = fileURLToPath(new URL('../../../descriptors/seed/retail.sql', import.meta.url));

/**
 * The one in-memory PGlite datasource, seeded with the retail demo, of this test process (a cold start costs 3-5 s and ~700 MB), wrapped
 * in the runtime as the core wraps it. Suites share it and never close it: it dies with the process.
 */
export function sharedPglite(): Promise<Datasource> {
  opening ??= open();
  return opening;
}

/** Its worker thread holds the process only while a statement runs, so the process exits once the suites are done. */
async function open(): Promise<Datasource> {
  return runtimeOver(await new PgliteDialect('pglite')
    .open({ name: 'pglite', adapter: 'pglite', connection: {}, pool: {}, init: [retailSeed], baseDir: process.cwd() }));
}
