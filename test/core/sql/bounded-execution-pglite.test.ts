import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PgliteDialect } from '../../../adapters/pglite/pglite-dialect.js';
import { runtimeOver } from '../../../core/sql/datasource-runtime.js';
import { runBoundedSuite } from './bounded-execution-suite.js';

// a file-backed PGlite of its own: a cancelled statement reopens the database, which must keep the suite's schema
const baseDir = mkdtempSync(join(tmpdir(), 'vdb-bounded-'));

runBoundedSuite({
  name: 'pglite',
  open: async () => runtimeOver(await new PgliteDialect('pglite').open({
    name: 'retail_db', adapter: 'pglite', connection: { dataDir: 'data' }, pool: {}, init: [], baseDir,
  })),
  close: async (datasource) => {
    await datasource.close();
    rmSync(baseDir, { recursive: true, force: true });
  },
});
