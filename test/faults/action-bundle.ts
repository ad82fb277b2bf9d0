import { dirname } from 'node:path';
import { writeBundle } from '../support/test-service.js';

export const CRASH_TOKEN = 'crash-test-admin-token';
/** A caller of the data role `clerk`, not an admin. */
export const CLERK_TOKEN = 'crash-test-clerk-token';

/** The stock of an item before the action (`oldQty`) and after it (`newQty`). */
export const OLD_QTY = 10;
export const NEW_QTY = 7;

/** The tables of the crash tests, in `schema` (a MySQL database is its schema). */
export function crashTables(family: 'postgres' | 'mysql', schema: string): string[] {
  const text = family === 'postgres' ? 'text' : 'varchar(40)';
  return [
    ...(family === 'postgres' ? [`create schema if not exists ${schema}`] : []),
    `create table if not exists ${schema}.crash_stock (item ${text} primary key, qty integer not null)`,
    `create table if not exists ${schema}.crash_orders (id integer primary key, item ${text} not null, ready integer not null)`,
    `create table if not exists ${schema}.crash_shipments (order_id integer primary key)`,
  ];
}

/**
 * A service of one datasource `db` serving the VDB `crash` on `schema` and the action `crash_place`, three
 * operations with rollbacks: `reserve` (the item's stock from oldQty to newQty), `order` (insert the order,
 * then wait until its `ready` is 1: at once when the request says `ready: 1`, otherwise until someone sets it
 * or 4 s pass) and `ship` (insert the shipment: fails when one exists). Beside it `crash_stock_add`,
 * `crash_ship_first` (a shipment, which makes `ship` fail), `crash_ready` (sets ready), `crash_state` (the item's
 * stock and the order's rows), and `crash_broken_undo` / `crash_broken_wait`, whose first rollback cannot
 * succeed once a shipment exists. Recovery looks every second, leases last 3 s.
 */
export function actionBundle(datasource: Record<string, unknown>, schema: string, instanceId: string, init: string[] = []): { configFile: string; dir: string } {
  const { config, files } = actionBundleFiles(datasource, schema, instanceId, init);
  const configFile = writeBundle(config, files);
  return { configFile, dir: dirname(configFile) };
}

/** The config and files of `actionBundle`, for a service started in the test's process. */
export function actionBundleFiles(datasource: Record<string, unknown>, schema: string, instanceId: string, init: string[] = []): { config: Record<string, unknown>; files: Record<string, string> } {
  const header = 'virtualDatabase: crash\n';
  // the first operation of crash_broken_undo and crash_broken_wait: its rollback inserts the shipment the failing operation met
  const brokenReserve = `  - name: reserve
    type: update
    entity: ${schema}.crash_stock
    valueAssignments: [{ field: qty, value: 0, dataType: integer }]
    filters: [{ field: item, operation: EQUAL, value: {{ item }} }]
    rollback:
      type: insert
      entity: ${schema}.crash_shipments
      valueAssignments: [{ field: order_id, value: {{ id }}, dataType: integer }]
`;
  // an order whose wait reads it back once it is ready (`ready`: its value, or the request's field)
  const order = (ready: string) => `  - name: order
    type: insert
    entity: ${schema}.crash_orders
    valueAssignments:
      - { field: id, value: {{ id }}, dataType: integer }
      - { field: item, value: {{ item }}, dataType: string }
      - { field: ready, value: ${ready}, dataType: integer }
    waitUntilEffective:
      maxSeconds: 4
      checkEverySeconds: 1
      byGetting:
        fields: [id]
        usingFilterFieldValuePairs: { id: {{ id }}, ready: 1 }
    rollback:
      type: delete
      filters: [{ field: id, operation: EQUAL, value: {{ id }} }]
`;
  const config = {
    instanceId,
    server: { host: '127.0.0.1', port: 0, requestTimeoutMs: 5_000 },
    descriptors: './bundle',
    datasources: { db: { ...datasource, ...(init.length > 0 ? { init: ['seed.sql'] } : {}) } },
    auth: {
      scheme: 'bearer', adminRoles: ['admin'],
      tokens: [{ token: CRASH_TOKEN, subject: 'ops', roles: ['admin', 'clerk'] }, { token: CLERK_TOKEN, subject: 'clerk', roles: ['clerk'] }],
    },
    logging: { level: process.env['VDB_TEST_ACTION_LOG'] ?? 'warn' },
    runtime: { enabled: false },
    actions: { leaseSeconds: 3, recoveryIntervalSeconds: 1 },
  };
  const files: Record<string, string> = {
    ...(init.length > 0 ? { 'bundle/seed.sql': `${init.join(';\n')};\n` } : {}),
    'bundle/vdbs/crash.yaml': `name: crash
version: "1"
datasource: db
schemas: [{ name: ${schema} }]
dataRoles:
  - name: clerk
    grants: [{ resource: ${schema}, allow: [select, insert, update, delete] }]
`,
    'bundle/queries/crash_state.yaml': `---
type: sqlDirect
${header}neededFields: [id, item]
query: >-
  select (select qty from ${schema}.crash_stock where item = {{ item }}) as qty,
  (select count(*) from ${schema}.crash_orders where id = {{ id }}) as orders,
  (select count(*) from ${schema}.crash_shipments where order_id = {{ id }}) as shipments
`,
    'bundle/actions/crash_stock_add.yaml': `---
${header}needed:
  fields: [item, qty]
operations:
  - name: add
    type: insert
    entity: ${schema}.crash_stock
    valueAssignments:
      - { field: item, value: {{ item }}, dataType: string }
      - { field: qty, value: {{ qty }}, dataType: integer }
`,
    'bundle/actions/crash_ship_first.yaml': `---
${header}needed:
  fields: [id]
operations:
  - name: ship
    type: insert
    entity: ${schema}.crash_shipments
    valueAssignments: [{ field: order_id, value: {{ id }}, dataType: integer }]
`,
    'bundle/actions/crash_ready.yaml': `---
${header}needed:
  fields: [id]
operations:
  - name: ready
    type: update
    entity: ${schema}.crash_orders
    valueAssignments: [{ field: ready, value: 1, dataType: integer }]
    filters: [{ field: id, operation: EQUAL, value: {{ id }} }]
`,
    'bundle/actions/crash_place.yaml': `---
${header}needed:
  fields: [id, item, oldQty, newQty, ready]
operations:
  - name: reserve
    type: update
    entity: ${schema}.crash_stock
    valueAssignments: [{ field: qty, value: {{ newQty }}, dataType: integer }]
    filters: [{ field: item, operation: EQUAL, value: {{ item }} }]
    rollback:
      type: update
      valueAssignments: [{ field: qty, value: {{ oldQty }}, dataType: integer }]
      filters: [{ field: item, operation: EQUAL, value: {{ item }} }]
${order('{{ ready }}')}  - name: ship
    type: insert
    entity: ${schema}.crash_shipments
    valueAssignments: [{ field: order_id, value: {{ id }}, dataType: integer }]
    rollback:
      type: delete
      filters: [{ field: order_id, operation: EQUAL, value: {{ id }} }]
`,
    // its rollback inserts the shipment the failing operation met: a compensation that cannot succeed
    'bundle/actions/crash_broken_undo.yaml': `---
${header}needed:
  fields: [id, item]
operations:
${brokenReserve}  - name: ship
    type: insert
    entity: ${schema}.crash_shipments
    valueAssignments: [{ field: order_id, value: {{ id }}, dataType: integer }]
`,
    // as crash_broken_undo, with a wait between: a database restart there leaves the broken rollback to recovery
    'bundle/actions/crash_broken_wait.yaml': `---
${header}needed:
  fields: [id, item]
operations:
${brokenReserve}${order('0')}`,
  };
  return { config, files };
}

/** POSTs an action or query of the crash bundle; resolves with the status and body (status 0: the connection dropped). */
export async function call(url: string, route: 'actions/run' | 'query/perform', name: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  try {
    const response = await fetch(`${url}/api/v1/${route}/${name}`, {
      method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', authorization: `Bearer ${CRASH_TOKEN}`, ...headers },
      signal: AbortSignal.timeout(60_000),
    });
    return { status: response.status, body: await response.json() as Record<string, unknown> };
  } catch {
    return { status: 0, body: {} };
  }
}

/** GETs an admin route with the crash token. */
export async function admin(url: string, path: string, token = CRASH_TOKEN): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/api/v1/admin/${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: await response.json() as Record<string, unknown> };
}

/** The item's stock and the order's rows, read through the service. */
export async function stateOf(url: string, id: number, item: string): Promise<{ qty: number; orders: number; shipments: number }> {
  const answer = await call(url, 'query/perform', 'crash_state', { id, item });
  const row = (answer.body['rows'] as Record<string, unknown>[] | undefined)?.[0];
  if (answer.status !== 200 || !row) throw new Error(`crash_state answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return { qty: Number(row['qty']), orders: Number(row['orders']), shipments: Number(row['shipments']) };
}

/** Waits until no run of `crash_place` is running or compensating (recovery is done); the states of those runs then. */
export async function settledRuns(url: string, timeoutMs = 60_000): Promise<{ run: string; state: string }[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    // the runs of this bundle's three-operation action: other suites' runs may share the journal
    const runs = (await admin(url, 'actions/runs?limit=500&action=crash_place')).body['runs'] as { run: string; state: string }[];
    if (!runs.some((run) => run.state === 'running' || run.state === 'compensating')) return runs;
    if (Date.now() > until) throw new Error(`runs still unfinished after ${timeoutMs} ms: ${JSON.stringify(runs.filter((run) => run.state === 'running' || run.state === 'compensating'))}`);
    await new Promise((done) => setTimeout(done, 200));
  }
}
