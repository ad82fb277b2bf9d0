import { suite, test } from 'uvu';
import * as assert from 'uvu/assert';
import { denialError } from '../../../core/plugin-api/denial.js';
import { authorizeSql } from '../../../core/authorization/sql-authorizer.js';
import { ForbiddenError } from '../../../core/plugin-api/errors.js';
import { FAMILY_DIALECTS } from '../../support/family-dialects.js';
import { ANALYST, CLERK, retailVdb } from './authorization-fixtures.js';
import { CALLERS, outcome, POSTGRES_DECISIONS } from './decision-table.js';

const table = suite('authorizeSql, postgres family: the decision table');

for (const [sql, caller, expected] of POSTGRES_DECISIONS) {
  const title = `${caller}: ${sql.replace(/\n/g, ' ⏎ ') || '(empty)'} → ${expected === 'allowed' ? expected : expected.join(' ')}`;
  table(title, async () => {
    const { grants, readOnly } = CALLERS[caller];
    const result = await authorizeSql({ sql, dialect: FAMILY_DIALECTS.postgres, grants, catalog: retailVdb.catalog, readOnly });
    assert.equal(outcome(result, expected), expected, result.allowed ? 'allowed' : result.reason);
  });
}

table.run();

const facts = suite('authorizeSql, postgres family: what an allowed statement does');

async function allowedFacts(sql: string, readOnly: boolean) {
  const result = await authorizeSql({ sql, dialect: FAMILY_DIALECTS.postgres, grants: CLERK, catalog: retailVdb.catalog, readOnly });
  if (!result.allowed) throw new Error(`expected allowed, got ${result.code}: ${result.reason}`);
  return result.facts;
}

facts('a read names each relation with the columns it reads, the datasource, and the VDB functions called', async () => {
  const result = await allowedFacts('select sales.discount(o.total), c.region from sales.orders o join sales.customers c on c.id = o.customer_id', true);
  assert.equal(result, {
    kind: 'select',
    readOnly: true,
    relations: [
      { schema: 'sales', name: 'orders', datasource: 'retail_db', action: 'select', columns: ['customer_id', 'total'] },
      { schema: 'sales', name: 'customers', datasource: 'retail_db', action: 'select', columns: ['id', 'region'] },
    ],
    functions: [{ schema: 'sales', name: 'discount' }],
  });
});

facts('an update asks update on the assigned columns and select on what WHERE and RETURNING read', async () => {
  const result = await allowedFacts("update sales.orders set status = 'shipped' where id = 10 returning total", false);
  assert.equal(result.kind, 'update');
  assert.is(result.readOnly, false);
  assert.equal(result.relations.map(({ action, columns }) => [action, columns]), [['update', ['status']], ['select', ['id', 'total']]]);
});

facts('an insert without a column list assigns every column; a delete asks for the whole relation', async () => {
  const insert = await allowedFacts("insert into sales.orders values (1, 1, 1, 'open')", false);
  assert.equal(insert.relations.map(({ action, columns }) => [action, columns]), [['insert', ['id', 'customer_id', 'total', 'status']]]);
  const remove = await allowedFacts('delete from sales.order_lines', false);
  assert.equal(remove.relations.map(({ name, action, columns }) => [name, action, columns]), [['order_lines', 'delete', []]]);
});

facts('bound values in knex form (`?`) parse as placeholders; `??` (an identifier from a value) is refused', async () => {
  const result = await authorizeSql({ sql: 'select id, region from sales.customers where id = ? and region = ?', dialect: FAMILY_DIALECTS.postgres, grants: ANALYST, catalog: retailVdb.catalog, readOnly: true });
  assert.is(result.allowed, true);
  const identifier = await authorizeSql({ sql: 'select ?? from sales.customers', dialect: FAMILY_DIALECTS.postgres, grants: ANALYST, catalog: retailVdb.catalog, readOnly: true });
  assert.equal(identifier.allowed ? 'allowed' : identifier.code, 'unparseable');
});

facts('renamed columns (`c(a, b)`) are followed to the column they rename', async () => {
  const renamed = await authorizeSql({ sql: 'select c.region from sales.customers c(id, region)', dialect: FAMILY_DIALECTS.postgres, grants: ANALYST, catalog: retailVdb.catalog, readOnly: true });
  // the column read is email, which the statement never names: the refusal names the relation only
  assert.equal(renamed.allowed ? 'allowed' : [renamed.code, renamed.resource], ['forbidden', 'sales.customers']);
  assert.not.ok(renamed.allowed || renamed.reason.includes('email'));
});

facts('a repeated text gives the same decision for each caller (the cache holds facts, not decisions)', async () => {
  const sql = 'select sales.discount(total) from sales.orders';
  for (let round = 0; round < 2; round += 1) {
    const analyst = await authorizeSql({ sql, dialect: FAMILY_DIALECTS.postgres, grants: ANALYST, catalog: retailVdb.catalog, readOnly: true });
    const clerk = await authorizeSql({ sql, dialect: FAMILY_DIALECTS.postgres, grants: CLERK, catalog: retailVdb.catalog, readOnly: true });
    assert.equal([analyst.allowed, clerk.allowed], [false, true]);
  }
});

facts.run();

test('a denial becomes a 403 `forbidden` error that names the rule and the resource', async () => {
  const result = await authorizeSql({ sql: 'select * from pg_catalog.pg_authid', dialect: FAMILY_DIALECTS.postgres, grants: CLERK, catalog: retailVdb.catalog, readOnly: true });
  if (result.allowed) throw new Error('expected a denial');
  const error = denialError(result);
  assert.instance(error, ForbiddenError);
  assert.equal([error.code, error.message, error.details], [
    'forbidden', 'relation pg_catalog.pg_authid is not part of the VDB', { denial: 'unknown_relation', resource: 'pg_catalog.pg_authid' },
  ]);
});

test.run();
