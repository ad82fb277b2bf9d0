import { sharedPglite } from '../../support/shared-pglite.js';
import { runOracleSuite } from './ossie-oracle-suite.js';

runOracleSuite({
  name: 'pglite',
  family: 'postgres',
  datasourceConfig: { adapter: 'pglite' },
  // The shared PGlite keeps the retail demo in `sales`; the models' schemas other than public are dropped after.
  open: sharedPglite,
  closeAfter: false,
  cleanup: async (schema, raw) => {
    for (const name of schema.schemas.filter((candidate) => candidate !== 'public')) await raw.query(`drop schema if exists "${name}" cascade`, []);
  },
});
