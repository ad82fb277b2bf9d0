import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ADMIN_TOKEN, ANALYST_TOKEN, startTestService, type TestService } from '../../support/test-service.js';

const demo = suite<{ service: TestService }>('the demo on PGlite: its data roles enforced by the database');
demo.before(async (context) => {
  context.service = await startTestService();
});
demo.after(async ({ service }) => service?.close());

const post = async (service: TestService, path: string, body: unknown, token: string) => {
  const response = await service.request(path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, token });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

demo('place_order as the clerk runs every statement as the clerk\'s role (assertions, inserts with serial ids, wait, update); the analyst is refused', async ({ service }) => {
  const order = { customerId: 4, lines: [{ productId: 1, quantity: 1, unitPrice: '1.20' }], total: '1.20' };
  const clerk = await post(service, '/api/v1/actions/run/place_order', order, ADMIN_TOKEN);
  assert.equal([clerk.status, clerk.body['status']], [200, 'completed'], JSON.stringify(clerk.body));
  const analyst = await post(service, '/api/v1/actions/run/place_order', order, ANALYST_TOKEN);
  assert.equal([analyst.status, analyst.body['code']], [403, 'forbidden']);
});

demo('a SELECT goal of the analyst through a join alias column list is denied by the database; the emails stay hidden', async ({ service }) => {
  const goal = 'select b from (sales.customers c cross join (select 1) s) as j(a, b)';
  const task = await post(service, '/api/v1/capabilities/answer/vdbs/retail/versions/1/tasks', { goal }, ANALYST_TOKEN);
  assert.equal([task.status, task.body['state']], [200, 'failed']);
  assert.match(JSON.stringify(task.body['stop']), /the database refused the statement.*42501/);
  assert.not.match(JSON.stringify(task.body), /@example\.com/);
});

demo.run();
