import pg from 'pg';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { forEachBackend, type Backend } from '../../support/backends.js';
import type { GeneratedSchema } from '../../support/ossie-models.js';
import { runOracleSuite, type OracleBackend } from './ossie-oracle-suite.js';

/** Where each backend keeps the models' schemas, and how it drops them. */
function placement(backend: Backend): Pick<OracleBackend, 'prepare' | 'open' | 'closeAfter' | 'cleanup' | 'datasourceConfig'> {
  switch (backend.name) {
    case 'pglite':
      // the shared PGlite keeps the retail demo in `sales`; the models' schemas other than public are dropped after
      return {
        datasourceConfig: backend.datasourceConfig, open: () => backend.open(), closeAfter: false,
        cleanup: async (schema: GeneratedSchema, raw: Datasource) => {
          for (const name of schema.schemas.filter((candidate) => candidate !== 'public')) await raw.query(`drop schema if exists "${name}" cascade`, []);
        },
      };
    case 'postgres': {
      // a database of its own: the models' tables are in public, which other suites use
      const database = `ossie_oracle_${process.pid}`;
      const own = new URL(backend.url ?? 'postgres://unset');
      own.pathname = `/${database}`;
      const onServer = async (sql: string) => {
        const client = new pg.Client({ connectionString: backend.url });
        await client.connect();
        try {
          await client.query(sql);
        } finally {
          await client.end();
        }
      };
      const settings = { adapter: 'postgres', connection: { connectionString: own.toString() }, pool: { max: 4 } };
      return {
        datasourceConfig: settings,
        prepare: async () => {
          await onServer(`drop database if exists ${database} with (force)`);
          await onServer(`create database ${database}`);
        },
        open: () => backend.open('ossie_db', own.toString()),
        closeAfter: true,
        cleanup: () => onServer(`drop database if exists ${database} with (force)`),
      };
    }
    case 'mysql':
      // the models' schemas (public, tpch, schema) are databases of the server, made by the schema statements
      return {
        datasourceConfig: backend.datasourceConfig, open: () => backend.open('ossie_db'), closeAfter: false,
        cleanup: async (schema: GeneratedSchema, raw: Datasource) => {
          for (const name of schema.schemas) await raw.query(`drop database if exists \`${name}\``, []);
          await raw.close();
        },
      };
  }
}

forEachBackend((backend) => runOracleSuite({ name: backend.name, skip: backend.skip, family: backend.family, ...placement(backend) }));
