/**
 * Federation without any server: a VDB over two PGlite datasources (the demo's and one the service opens),
 * through the real service, as the caller's database role on each (docs/federation.md).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { sharedPglite } from '../../support/shared-pglite.js';
import { ADMIN_TOKEN, ANALYST_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';

const SEGMENTS: readonly [number, string][] = [[1, 'gold'], [2, 'silver'], [3, 'gold'], [4, 'bronze']];

const CRM_SEED = `create schema crm;
create table crm.segments (customer_id int primary key, segment text not null);
insert into crm.segments values ${SEGMENTS.map(([id, segment]) => `(${id}, '${segment}')`).join(', ')};
create view crm.whoami as select current_user::text as who;
`;

const VDB = `name: fedl
version: "1"
datasource: retail_db
schemas:
  - { name: sales, datasource: retail_db, include: [orders] }
  - { name: crm, datasource: crm_db }
dataRoles:
  - name: analyst
    grants: [{ resource: sales.orders, allow: [select] }, { resource: crm, allow: [select] }]
  - name: clerk
    grants: [{ resource: sales.orders, allow: [select] }]
`;

const BY_SEGMENT = 'select s.segment, count(*) as n, sum(o.total) as total from sales.orders o join crm.segments s on s.customer_id = o.customer_id group by s.segment order by s.segment';

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

async function perform(service: TestService, name: string, token: string, query = ''): Promise<Reply> {
  const response = await service.request(`/api/v1/query/perform/${name}${query}`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' }, token });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const test = suite<{ raw: Datasource; service: TestService }>('federation: two PGlite datasources through the service');

test.before(async (context) => {
  context.raw = await sharedPglite();
  const config = {
    ...demoConfig({ descriptors: './bundle' }),
    datasources: { retail_db: { adapter: 'pglite' }, crm_db: { adapter: 'pglite', init: ['crm.sql'] } },
  };
  context.service = await startTestService({
    config,
    files: {
      'bundle/crm.sql': CRM_SEED,
      'bundle/vdbs/fedl.yaml': VDB,
      'bundle/queries/fedl_segments.yaml': `---\ntype: sqlDirect\nvirtualDatabase: fedl\nquery: ${BY_SEGMENT}\n`,
      'bundle/queries/fedl_whoami.yaml': '---\ntype: sqlDirect\nvirtualDatabase: fedl\nquery: select w.who, count(*) as n from crm.whoami w cross join sales.orders o group by w.who\n',
    },
    datasources: { retail_db: context.raw },
  });
});

test.after(async ({ service }) => {
  await service?.close();
});

test('a join and aggregation over both answers what the same statement answers on one database', async ({ raw, service }) => {
  const segments = SEGMENTS.map(([id, segment]) => `(${id}, '${segment}')`).join(', ');
  const expected = await raw.query(BY_SEGMENT.replace('crm.segments s', `(values ${segments}) as s (customer_id, segment)`), []);
  const reply = await perform(service, 'fedl_segments', ANALYST_TOKEN);
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  assert.ok(expected.rows.length > 1, 'the demo has orders of several segments');
  assert.equal(reply.body['rows'], expected.rows);
  assert.equal(reply.body['columns'], [
    { name: 'segment', logicalType: 'string' }, { name: 'n', logicalType: 'bigint' }, { name: 'total', logicalType: 'decimal' },
  ]);
});

test('the pushed statement runs as the caller\'s database role on the second PGlite', async ({ service }) => {
  const reply = await perform(service, 'fedl_whoami', ANALYST_TOKEN);
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  assert.is((reply.body['rows'] as { who: string }[])[0]?.who, 'vdb_fedl_v1_analyst');
});

test('a data role without the second datasource\'s relation is refused before anything runs: 403', async ({ service }) => {
  const reply = await perform(service, 'fedl_segments', ADMIN_TOKEN);
  assert.equal([reply.status, reply.body['code']], [403, 'forbidden'], JSON.stringify(reply.body));
});

test('?explain=true answers each source\'s statement and the engine\'s: the orders summed by customer on their source', async ({ service }) => {
  const reply = await perform(service, 'fedl_segments', ANALYST_TOKEN, '?explain=true');
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  assert.equal(reply.body['sources'], [
    { datasource: 'crm_db', sql: 'SELECT "customer_id", "segment" FROM "crm"."segments"' },
    {
      datasource: 'retail_db',
      sql: 'SELECT "o"."customer_id" AS "o.customer_id", COUNT(*) AS "vdb_agg_1", SUM("o"."total") AS "vdb_agg_2" FROM "sales"."orders" "o" GROUP BY "o"."customer_id"',
    },
  ]);
  assert.match(String((reply.body['engine'] as { sql: string }).sql), 'GROUP BY');
});

test.run();
