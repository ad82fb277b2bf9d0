import { dirname } from 'node:path';
import { writeBundle } from '../support/test-service.js';

export const FAULT_TOKEN = 'fault-admin-token';
/** The time limit of every statement of the fault tests' services (`server.requestTimeoutMs`). */
export const REQUEST_TIMEOUT_MS = 4_000;

/**
 * A service of one datasource `db` (PostgreSQL or MariaDB at `url`) serving the VDB `faults`: the table
 * `<schema>.items` (created by the test), `fault_one` (one row by id) and `fault_work` (`work`: a statement
 * that keeps the database busy for a while). Returns the config file and its folder.
 */
export function faultBundle(adapter: 'postgres' | 'mysql', url: string, schema: string, work: string): { configFile: string; dir: string } {
  const configFile = writeBundle({
    instanceId: 'fault-1',
    server: { host: '127.0.0.1', port: 0, requestTimeoutMs: REQUEST_TIMEOUT_MS },
    descriptors: './bundle',
    datasources: { db: { adapter, connection: { connectionString: url }, pool: { max: 10, acquireTimeoutMs: 3_000 } } },
    auth: { scheme: 'bearer', adminRoles: ['admin'], tokens: [{ token: FAULT_TOKEN, subject: 'ops', roles: ['admin', 'clerk'] }] },
    logging: { level: 'warn' },
    runtime: { enabled: false },
  }, {
    'bundle/vdbs/faults.yaml': `name: faults
version: "1"
datasource: db
schemas: [{ name: ${schema} }]
dataRoles:
  - name: clerk
    grants: [{ resource: ${schema}, allow: [select] }]
`,
    'bundle/queries/fault_one.yaml': `---\ntype: sqlDirect\nvirtualDatabase: faults\nneededFields: [id]\nquery: select id, label from ${schema}.items where id = {{ id }}\n`,
    'bundle/queries/fault_work.yaml': `---\ntype: sqlDirect\nvirtualDatabase: faults\nquery: ${work}\n`,
  });
  return { configFile, dir: dirname(configFile) };
}
