import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { longText, manyTerms, nestedSubqueries } from '../../support/hostile-statements.js';
import { ANALYST_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';

/** `shop` allows one function beyond PostgreSQL's list; `plain` does not. Both over the demo's sales schema. */
const FILES = {
  'bundle/vdbs/shop.yaml': 'name: shop\nversion: "1"\ndatasource: retail_db\nschemas: [{ name: sales }]\nallowFunctions: [pg_size_pretty]\n',
  'bundle/vdbs/plain.yaml': 'name: plain\nversion: "1"\ndatasource: retail_db\nschemas: [{ name: sales }]\n',
  // The statement is the caller's own text: the hostile case the authorizer must bound.
  'bundle/queries/shop_sql.yaml': '---\ntype: sqlDirect\nvirtualDatabase: shop\nneededFields: [sql]\nquery: "{{ sql | raw }}"\n',
  'bundle/queries/plain_sql.yaml': '---\ntype: sqlDirect\nvirtualDatabase: plain\nneededFields: [sql]\nquery: "{{ sql | raw }}"\n',
};

interface Reply {
  status: number;
  body: { code?: string; message?: string; details?: { denial?: string; resource?: string }; rows?: unknown[] };
}

const routes = suite<{ service: TestService }>('query endpoints: the function allow-list and statement bounds over HTTP');

routes.before(async (context) => {
  context.service = await startTestService({
    config: demoConfig({ descriptors: './bundle', server: { host: '127.0.0.1', port: 0, maxBodyBytes: 512 * 1024 } }),
    files: FILES,
  });
});
routes.after(async ({ service }) => service?.close());

async function perform(service: TestService, query: string, sql: string): Promise<Reply> {
  const response = await service.request(`/api/v1/query/perform/${query}`, {
    method: 'POST', body: JSON.stringify({ sql }), headers: { 'content-type': 'application/json' }, token: ANALYST_TOKEN,
  });
  return { status: response.status, body: (await response.json()) as Reply['body'] };
}

routes('a built-in off the allow-list is 403 forbidden, details.denial function_not_allowed, naming the function', async ({ service }) => {
  for (const sql of ["select pg_read_file('/etc/passwd')", 'select * from pg_hba_file_rules()', 'select * from pg_show_all_file_settings()']) {
    const reply = await perform(service, 'plain_sql', sql);
    const name = /(pg_\w+)/.exec(sql)?.[1];
    assert.equal([reply.status, reply.body.code, reply.body.details], [403, 'forbidden', { denial: 'function_not_allowed', resource: name }], sql);
    assert.is(reply.body.message, `function ${name} is not allowed (not on the allow-list; a VDB may add it with allowFunctions)`);
  }
});

routes('allowFunctions widens the list for its VDB only', async ({ service }) => {
  const sql = 'select pg_size_pretty(count(*)) as size from sales.products';
  const widened = await perform(service, 'shop_sql', sql);
  assert.is(widened.status, 200, JSON.stringify(widened.body));
  assert.is(widened.body.rows?.length, 1);
  const plain = await perform(service, 'plain_sql', sql);
  assert.equal([plain.status, plain.body.details?.denial], [403, 'function_not_allowed']);
});

routes('7,000 terms, 1,800 nested subqueries and 100,000 characters are 400 statement_too_complex; the service keeps answering', async ({ service }) => {
  for (const sql of [manyTerms(7_000), nestedSubqueries(1_800), longText(100_000)]) {
    const reply = await perform(service, 'plain_sql', sql);
    assert.equal([reply.status, reply.body.code], [400, 'statement_too_complex'], JSON.stringify(reply.body).slice(0, 300));
    const next = await perform(service, 'plain_sql', 'select count(*) as n from sales.products');
    assert.is(next.status, 200, JSON.stringify(next.body));
  }
});

routes.run();
