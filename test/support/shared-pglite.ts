import { fileURLToPath } from 'node:url';
import { PgliteDialect } from '../../adapters/pglite/pglite-dialect.js';
import type { Datasource } from '../../core/plugin-api/sql-dialect.js';
import { runtimeOver } from '../../core/sql/datasource-runtime.js';

let opening: Promise<Datasource> | undefined;
let openingCrm: Promise<Datasource> | undefined;
const retailSeed = fileURLToPath(new URL('../../../descriptors/seed/retail.sql', import.meta.url));
const crmSeed = fileURLToPath(new URL('../../../descriptors/seed/crm.sql', import.meta.url));

/**
 * The one in-memory PGlite datasource, seeded with the retail demo, of this test process (a cold start costs 3-5 s and ~700 MB), wrapped
 * in the runtime as the core wraps it. Suites share it and never close it: it dies with the process.
 */
export function sharedPglite(): Promise<Datasource> {
  opening ??= open(retailSeed, 'pglite');
  return opening;
}

/** The demo's second datasource (`crm_db`, seeded with its crm schema), opened on first use and shared the same way. */
export function sharedCrmPglite(): Promise<Datasource> {
  openingCrm ??= open(crmSeed, 'crm_db');
  return openingCrm;
}

/**
 * Its worker thread holds the process only while a statement runs, so the process exits once the suites are done.
 * Each has a name of its own: the service keys what it keeps per datasource (the action journals) by name.
 */
async function open(seed: string, name: string): Promise<Datasource> {
  return runtimeOver(await new PgliteDialect('pglite')
    .open({ name, adapter: 'pglite', connection: {}, pool: {}, init: [seed], baseDir: process.cwd() }));
}
