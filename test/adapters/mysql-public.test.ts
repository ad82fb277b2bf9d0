// test-lane: mysql-server
/**
 * MariaDB 10.11's PUBLIC (docs/governed-execution.md): a privilege granted to PUBLIC is every account's,
 * so a data role's user reads what its grants do not give it. The service warns at startup, naming it, as it
 * does for PostgreSQL's PUBLIC. A database of the suite's own: PUBLIC there reaches no other suite's tables.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Datasource } from '../../core/plugin-api/sql-dialect.js';
import { BACKENDS, skippedHere, type Backend } from '../support/backends.js';
import { dropSyncedRoles } from '../support/synced-roles.js';
import { demoConfig, startTestService } from '../support/test-service.js';

const mysql = BACKENDS.find((backend) => backend.name === 'mysql') as Backend;
const DATABASE = `vdbpub_${process.pid}`;

function files(): Record<string, string> {
  return {
    'bundle/vdbs/pub.yaml': `name: pub
version: "1"
datasource: my_db
schemas:
  - { name: ${DATABASE}, datasource: my_db }
dataRoles:
  - name: analyst
    grants: [{ resource: ${DATABASE}.open_items, allow: [select] }]
`,
  };
}

const test = suite<{ my: Datasource }>('mysql: PUBLIC\'s privileges are warned about at startup');

if (!skippedHere(test, mysql)) {
  test.before(async (context) => {
    context.my = await mysql.open('my_db');
    await context.my.query(`create database if not exists ${DATABASE}`, []);
    await context.my.query(`create table if not exists ${DATABASE}.open_items (id int primary key)`, []);
    await context.my.query(`create table if not exists ${DATABASE}.secret_items (id int primary key)`, []);
  });

  test.after(async ({ my }) => {
    if (!my) return;
    await my.query(`revoke all privileges on ${DATABASE}.* from PUBLIC`, []).catch(() => undefined);
    await my.query(`revoke all privileges on ${DATABASE}.secret_items from PUBLIC`, []).catch(() => undefined);
    await my.query(`drop database if exists ${DATABASE}`, []);
    await my.close();
  });

  const start = async (my: Datasource) => {
    const url = new URL(mysql.url as string);
    url.pathname = `/${DATABASE}`;
    const config = { ...demoConfig({ descriptors: './bundle' }), datasources: { my_db: { ...mysql.datasourceConfig, connection: { connectionString: url.toString() } } } };
    const service = await startTestService({ config, files: files(), datasources: { my_db: my } });
    const warnings = service.logs.filter((line) => line.includes('PUBLIC holds'));
    await dropSyncedRoles(service, my);
    await service.close();
    return warnings;
  };

  test('PUBLIC\'s SELECT on the VDB\'s database and on a table of it: each warned about, naming it; none once revoked', async ({ my }) => {
    await my.query(`grant select on ${DATABASE}.* to PUBLIC`, []);
    await my.query(`grant select on ${DATABASE}.secret_items to PUBLIC`, []);
    const warned = await start(my);
    assert.ok(warned.some((line) => line.includes(`PUBLIC holds select on schema ${DATABASE}`)), warned.join('\n'));
    assert.ok(warned.some((line) => line.includes(`PUBLIC holds select on ${DATABASE}.secret_items`)), warned.join('\n'));
    await my.query(`revoke all privileges on ${DATABASE}.* from PUBLIC`, []);
    await my.query(`revoke all privileges on ${DATABASE}.secret_items from PUBLIC`, []);
    assert.equal(await start(my), []);
  });
}

test.run();
