import { dirname } from 'node:path';
import type { ProbedMemory } from '../support/fault-servers.js';
import { writeBundle } from '../support/test-service.js';

export const FAULT_TOKEN = 'fault-admin-token';
/** The time limit of every statement of the fault tests' services (`server.requestTimeoutMs`). */
export const REQUEST_TIMEOUT_MS = 3_000;

/**
 * A service of one datasource `db` (PostgreSQL or MariaDB at `url`) serving the VDB `faults`: the table
 * `<schema>.items` (created by the test), `fault_one` (one row by id), `fault_work` (`work`: a statement
 * that keeps the database busy for a while) and the action `fault_relabel` (one update, in a transaction), and the SQL front door on `sqlPort` when given. Returns the
 * config file and its folder.
 */
export function faultBundle(adapter: 'postgres' | 'mysql', url: string, schema: string, work: string, sqlPort?: number): { configFile: string; dir: string } {
  const configFile = writeBundle({
    ...(sqlPort === undefined ? {} : { sql: { enabled: true, host: '127.0.0.1', port: sqlPort, statementTimeoutMs: REQUEST_TIMEOUT_MS } }),
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
    grants: [{ resource: ${schema}, allow: [select, update] }]
`,
    'bundle/queries/fault_one.yaml': `---\ntype: sqlDirect\nvirtualDatabase: faults\nneededFields: [id]\nquery: select id, label from ${schema}.items where id = {{ id }}\n`,
    'bundle/actions/fault_relabel.yaml': `---\nvirtualDatabase: faults\nvirtualDatabaseVersion: "1"\nneeded:\n  fields: [id, label]\noperations:\n  - name: relabel\n    type: update\n    entity: ${schema}.items\n    valueAssignments:\n      - { field: label, value: {{ label }} }\n    filters:\n      - { field: id, operation: EQUAL, value: {{ id }} }\n`,
    'bundle/queries/fault_work.yaml': `---\ntype: sqlDirect\nvirtualDatabase: faults\nquery: ${work}\n`,
  });
  return { configFile, dir: dirname(configFile) };
}

/**
 * How much the resident set may move between two readings without a leak: the allocator keeps and returns
 * pages by the MiB (up to 7 MiB was seen on a busy machine). Beside it, the RSS bound catches a per-request
 * leak once the measure holds some thousands of requests; the bound on the heap after a full collection
 * catches a leak of JS objects even in a few hundred.
 */
export const RSS_NOISE_KIB = 8_192;

/** What a soak measured: requests answered while measuring, and what the process kept of them. */
export interface SoakResult {
  requests: number;
  /** The statuses answered while measuring, and 0 for each dropped connection in any phase. */
  statuses: Record<number, number>;
  /** Growth of the resident set after a full collection, in KiB per request. */
  rssKibPerRequest: number;
  /** Growth of the JS heap (compiled code aside) and external memory after a full collection, in KiB per request. */
  retainedKibPerRequest: number;
}

/**
 * `clients` clients posting `fault_one` one request after another: a warm-up of `requests` requests (pools,
 * caches and the JIT fill up), then a measure of twice as many; each phase ends early at its time cap only
 * to bound a stuck run: RSS growth is only meaningful per request over a full count (a machine at load 31
 * measured 2,976 requests in a 20 s cap, and the allocator's few MiB then read as 4.7 KiB per request). Memory is read after two full collections at the start and at the end of the
 * measure (the memory probe), so that garbage not yet collected is not taken for a leak.
 */
export async function soak(service: { url: string; memoryAfterCollection(): Promise<ProbedMemory> }, clients: number, requests: number, capMs: number): Promise<SoakResult> {
  let phase: 'warm' | 'measure' | 'done' = 'warm';
  let answered = 0;
  const statuses: Record<number, number> = {};
  let reached: () => void = () => undefined;
  const loops = Array.from({ length: clients }, async (_, client) => {
    const init = { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${FAULT_TOKEN}` } };
    for (let sent = 0; phase !== 'done'; sent += 1) {
      // a dropped connection is status 0, in any phase: the test fails on it, where a rejection here would end the test process
      const status = await fetch(`${service.url}/api/v1/query/perform/fault_one`, { ...init, body: `{"id":${1 + ((client * 7 + sent) % 100)}}` })
        .then(async (response) => (await response.arrayBuffer(), response.status), () => 0);
      answered += 1;
      if (phase === 'measure' || status === 0) statuses[status] = (statuses[status] ?? 0) + 1;
      if (answered === (phase === 'warm' ? requests : 2 * requests)) reached();
    }
  });
  const until = (count: number) => {
    answered = 0;
    let timer: NodeJS.Timeout | undefined;
    return new Promise<void>((done) => {
      reached = done;
      timer = setTimeout(done, count === requests ? capMs : 2 * capMs);
    }).finally(() => clearTimeout(timer));
  };
  await until(requests);
  const before = await service.memoryAfterCollection();
  phase = 'measure';
  await until(2 * requests);
  phase = 'done';
  const measured = answered;
  await Promise.all(loops);
  const after = await service.memoryAfterCollection();
  const perRequest = (bytes: number) => bytes / 1024 / measured;
  const retained = (memory: ProbedMemory) => memory.heapUsed - memory.code + memory.external;
  return { requests: measured, statuses, rssKibPerRequest: perRequest(after.rss - before.rss), retainedKibPerRequest: perRequest(retained(after) - retained(before)) };
}
