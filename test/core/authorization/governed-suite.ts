import { Writable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { callerExecutor, type CallerExecutor } from '../../../core/statements/statement-pipeline.js';
import { effectiveGrants } from '../../../core/authorization/grants.js';
import { callerRole, planVdbRoles } from '../../../core/authorization/role-plan.js';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { prepareService } from '../../../core/service.js';
import { coreTokens } from '../../../core/service-tokens.js';
import { databaseDenialError } from '../../../core/sql/read-failure.js';
import { statementFailure } from '../../../core/sql/statement-failure.js';
import { dropSyncedRoles } from '../../support/synced-roles.js';
import { ADMIN_TOKEN, ANALYST_TOKEN, demoConfig, startTestService, writeBundle, type TestService } from '../../support/test-service.js';
import { skippedHere } from '../../support/backends.js';
import {
  ACTIONS, ATTACKS, AUDITOR_DB_ROLE, AUTHENTICATOR, EMAIL, governedVdb, HANDMADE_ROLE, QUERIES, SCHEMA, SCHEMA_SETUP, VDB,
} from './governed-fixtures.js';

export interface GovernedBackend {
  name: string;
  /** Why the backend is not available here; the suite is skipped. */
  skip?: string | undefined;
  /** A datasource whose login may create roles and schemas (a superuser). */
  open(): Promise<Datasource>;
  /** Close the datasource after the suite (not the process's shared PGlite). */
  closeAfter: boolean;
  /** The `datasources.retail_db` config of a service connecting as another login (a server's least-privilege setup). */
  connectingAs?(login: string): Record<string, unknown>;
}

const AUDITOR_TOKEN = 'governed-auditor-token';
/** A data role that comes and goes, and the database role the sync makes for it. */
const TEMP = `  - name: temp\n    grants: [{ resource: ${SCHEMA}.orders, allow: [select] }]\n`;
const TEMP_ROLE = 'vdb_governed_v1_temp';
const ANALYST_AUDITOR_TOKEN = 'governed-analyst-auditor-token';
const TASKS = `/api/v1/capabilities/answer/vdbs/${VDB}/versions/1/tasks`;

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

interface Snapshot {
  state: string;
  stop: { reason: string; detail: string };
  artifacts: { kind: string; content: { contentType: string; data: string } }[];
}

function bundle(analystColumns?: readonly string[], extraRoles?: string): Record<string, string> {
  const files: Record<string, string> = { 'bundle/vdbs/governed.yaml': governedVdb(analystColumns, VDB, extraRoles) };
  for (const [name, text] of Object.entries(QUERIES)) files[`bundle/queries/${name}.yaml`] = text;
  for (const [name, text] of Object.entries(ACTIONS)) files[`bundle/actions/${name}.yaml`] = text;
  return files;
}

function config(datasource?: Record<string, unknown>): Record<string, unknown> {
  const base = demoConfig({ descriptors: './bundle' });
  const auth = base['auth'] as { tokens: unknown[] };
  auth.tokens.push({ token: AUDITOR_TOKEN, subject: 'auditor', roles: ['auditor'] }, { token: ANALYST_AUDITOR_TOKEN, subject: 'both', roles: ['analyst', 'auditor'] });
  return datasource ? { ...base, datasources: { retail_db: datasource } } : base;
}

async function post(service: TestService, path: string, body: unknown, token: string): Promise<Reply> {
  const response = await service.request(path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, token });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function task(service: TestService, goal: string, token: string): Promise<{ snapshot: Snapshot; text: string; answer: string }> {
  const reply = await post(service, TASKS, { goal }, token);
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  const snapshot = reply.body as unknown as Snapshot;
  const decoded = (kind: string) => snapshot.artifacts.filter((artifact) => artifact.kind === kind)
    .map((artifact) => Buffer.from(artifact.content.data, 'base64').toString('utf8')).join('\n');
  return { snapshot, text: `${JSON.stringify(snapshot)}\n${decoded('answer')}\n${decoded('table')}`, answer: decoded('answer') };
}

/** The executor the routes use, for the given data roles: the second gate alone, without the analyzer. */
async function asCaller(service: TestService, roles: string[], readOnly: boolean): Promise<CallerExecutor> {
  const vdb = service.container.resolve(coreTokens.vdbs).find(VDB, '1');
  if (!vdb) throw new Error(`VDB ${VDB} is not loaded`);
  const datasource = await service.container.resolve(coreTokens.datasources).open('retail_db');
  return callerExecutor(datasource, vdb, effectiveGrants(vdb, { subject: roles.join('+'), roles, scheme: 'bearer' }), { readOnly, timeoutMs: 10_000 });
}

const failure = (work: Promise<unknown>): Promise<{ code?: unknown } | undefined> => work.then(() => undefined, (error: unknown) => error as { code?: unknown });

/**
 * Governed execution on one backend, through the real service: the analyzer's gaps of the issue (column
 * lists of join aliases, whole rows, functional notation, field selection, nested, inferred) refused by the
 * database as the analyst's role, through the Task API, a query endpoint and the executor alone.
 */
export function runGovernedSuite(backend: GovernedBackend): void {
  const test = suite<{ raw: Datasource; service: TestService }>(`${backend.name}: governed execution, the database as the authoritative gate`);
  if (skippedHere(test, backend)) return;

  test.before(async (context) => {
    context.raw = await backend.open();
    for (const statement of SCHEMA_SETUP) await context.raw.query(statement, []);
    context.service = await startTestService({ config: config(), files: bundle(), datasources: { retail_db: context.raw } });
  });
  test.after(async ({ raw, service }) => {
    await service?.close();
    if (!raw) return;
    await dropSyncedRoles(service, raw, [AUTHENTICATOR, HANDMADE_ROLE, TEMP_ROLE]);
    await raw.query(`drop schema if exists ${SCHEMA} cascade`, []);
    if (backend.closeAfter) await raw.close();
  });

  test('startup syncs a database role per data role, one per pair of them, the auditor\'s under its dbRole; a second start changes nothing', async ({ raw, service }) => {
    const roles = (await raw.query(`select rolname, rolinherit, rolcanlogin from pg_catalog.pg_roles where rolname like 'vdb\\_governed\\_v1%' or rolname = ? order by rolname`, [AUDITOR_DB_ROLE])).rows;
    assert.equal(roles.map((role) => [role['rolname'], role['rolinherit'], role['rolcanlogin']]), [
      [AUDITOR_DB_ROLE, false, false],
      ['vdb_governed_v1_analyst', false, false],
      ['vdb_governed_v1_analyst_and_auditor', true, false],
      ['vdb_governed_v1_analyst_and_auditor_and_clerk', true, false],
      ['vdb_governed_v1_analyst_and_clerk', true, false],
      ['vdb_governed_v1_auditor_and_clerk', true, false],
      ['vdb_governed_v1_clerk', false, false],
    ]);
    const vdb = service.container.resolve(coreTokens.vdbs).find(VDB, '1');
    assert.is(vdb && callerRole(vdb, effectiveGrants(vdb, { subject: 'a', roles: ['auditor'], scheme: 'bearer' })), AUDITOR_DB_ROLE);
    const again = await startTestService({ config: config(), files: bundle(), datasources: { retail_db: raw } });
    await again.close();
    const synced = again.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line['msg'] === 'database roles of the data roles synced');
    assert.equal(synced.map((line) => line['changes']), [0]);
    assert.ok(service.logs.some((line) => /"level":40.*superuser/.test(line)), 'a superuser login is warned about');
  });

  test('Task API as the analyst: every attack form is denied and no email comes back', async ({ service }) => {
    for (const { form, sql } of ATTACKS) {
      const { snapshot, text, answer } = await task(service, sql, ANALYST_TOKEN);
      assert.equal([snapshot.state, snapshot.stop.reason], ['failed', 'runtime_failed'], `${form}: ${JSON.stringify(snapshot.stop)}`);
      assert.match(answer, /\(denied, (forbidden|not_read_only|function_not_allowed)\)/, form);
      assert.not.match(text, EMAIL, form);
    }
    const served = await task(service, `select id, region from ${SCHEMA}.customers order by id`, ANALYST_TOKEN);
    assert.is(served.snapshot.state, 'completed', 'within the grants the analyst is served');
  });

  test('query endpoints: the analyzer lets the renamed column through, the database refuses it with 403 forbidden', async ({ service }) => {
    const regions = await post(service, '/api/v1/query/perform/governed_regions', {}, ANALYST_TOKEN);
    assert.equal([regions.status, (regions.body['rows'] as unknown[]).length], [200, 3]);
    for (const [query, body] of [['governed_leak', {}], ['governed_probe', { prefix: 'a%' }]] as const) {
      const denied = await post(service, `/api/v1/query/perform/${query}`, body, ANALYST_TOKEN);
      assert.equal([denied.status, denied.body['code'], (denied.body['details'] as Record<string, unknown>)['denial']], [403, 'forbidden', 'forbidden'], query);
      assert.not.match(JSON.stringify(denied.body), EMAIL);
    }
    const clerk = await post(service, '/api/v1/query/perform/governed_leak', {}, ADMIN_TOKEN);
    assert.is(clerk.status, 200, 'the clerk may read the emails: the database refuses no more than the grants');
    assert.match(JSON.stringify(clerk.body), EMAIL);
  });

  test('the second gate alone: the database refuses every attack run as the analyst\'s role, answered like the analyzer\'s denials', async ({ service }) => {
    const analyst = await asCaller(service, ['analyst'], true);
    for (const { form, sql } of ATTACKS) {
      const error = await failure(analyst.query(sql, []));
      assert.is(error?.code, '42501', form);
      const answered = databaseDenialError(statementFailure(error));
      assert.equal([answered.code, answered.details], ['forbidden', { denial: 'forbidden' }], form);
    }
    const clerk = await asCaller(service, ['clerk'], true);
    for (const { form, sql } of ATTACKS) assert.ok((await clerk.query(sql, [])).rowCount > 0, `${form}: the clerk's role runs it`);
  });

  test('read-only routes: the database refuses writes even to a role that may write', async ({ service }) => {
    const clerk = await asCaller(service, ['clerk'], true);
    for (const sql of [
      `insert into ${SCHEMA}.orders (customer_id, total) values (1, 1)`,
      `with gone as (delete from ${SCHEMA}.orders where id = 1 returning id) select id from gone`,
      `select id from ${SCHEMA}.orders for update`,
    ]) {
      const error = await failure(clerk.query(sql, []));
      assert.is(error?.code, '25006', sql);
      assert.equal(databaseDenialError(statementFailure(error)).details, { denial: 'not_read_only' });
    }
  });

  test('writes: the clerk\'s action inserts (with the serial\'s sequence), the analyst is refused, and its role cannot write', async ({ service }) => {
    const clerk = await post(service, '/api/v1/actions/run/governed_add_order', { customerId: 2, total: '3.50' }, ADMIN_TOKEN);
    assert.equal([clerk.status, clerk.body['status']], [200, 'completed'], JSON.stringify(clerk.body));
    const analyst = await post(service, '/api/v1/actions/run/governed_add_order', { customerId: 2, total: '3.50' }, ANALYST_TOKEN);
    assert.equal([analyst.status, analyst.body['code']], [403, 'forbidden']);
    const writer = await asCaller(service, ['analyst'], false);
    const error = await failure(writer.transaction((transaction) => transaction.query(`insert into ${SCHEMA}.orders (customer_id, total) values (1, 1)`, [])));
    assert.is(error?.code, '42501');
  });

  test('a caller with several data roles runs as their combination: the auditor\'s emails with the analyst\'s orders', async ({ service }) => {
    const both = await task(service, `select c.email, o.total from ${SCHEMA}.orders o join ${SCHEMA}.customers c on c.id = o.customer_id order by o.id`, ANALYST_AUDITOR_TOKEN);
    assert.is(both.snapshot.state, 'completed', both.snapshot.stop.detail);
    assert.match(both.text, EMAIL);
    const auditor = await task(service, `select total from ${SCHEMA}.orders`, AUDITOR_TOKEN);
    assert.is(auditor.snapshot.state, 'failed', 'the auditor alone has no orders');
  });

  test('grants narrowed: the next sync revokes; drift of roles the operator manages is reported by validate, a sync undoes it', async ({ raw, service }) => {
    const analyst = await asCaller(service, ['analyst'], true);
    await raw.query(`grant select (email) on ${SCHEMA}.customers to vdb_governed_v1_analyst`, []);
    const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
    const checked = await prepareService({
      configFile: writeBundle(config({ adapter: 'pglite', roles: { sync: false } }), bundle()), datasources: { retail_db: raw }, env: {}, checkOnly: true, logDestination: sink,
    });
    await checked.close();
    assert.equal(checked.roleWarnings.filter((warning) => !/superuser|PUBLIC holds execute/.test(warning.message)).map((warning) => warning.message), [
      `datasources.retail_db: role vdb_governed_v1_analyst holds select on column ${SCHEMA}.customers.email beyond its grants; to match the grants: `
      + `revoke select ("email") on table "${SCHEMA}"."customers" from "vdb_governed_v1_analyst"`,
    ]);
    assert.is((await analyst.query(`select email from ${SCHEMA}.customers`, [])).rowCount, 3, 'validate changed nothing');

    const narrowed = await startTestService({ config: config(), files: bundle(['id']), datasources: { retail_db: raw } });
    await narrowed.close();
    assert.is((await failure(analyst.query(`select email from ${SCHEMA}.customers`, [])))?.code, '42501');
    assert.is((await failure(analyst.query(`select region from ${SCHEMA}.customers`, [])))?.code, '42501');
    const restored = await startTestService({ config: config(), files: bundle(), datasources: { retail_db: raw } });
    await restored.close();
    assert.is((await analyst.query(`select id, region from ${SCHEMA}.customers`, [])).rowCount, 3);
  });

  test('functions: EXECUTE on every overload for the roles whose grants allow it; PUBLIC\'s is warned about, and once revoked the database refuses the others', async ({ raw, service }) => {
    const acl = async (role: string) => (await raw.query(`select pg_catalog.pg_get_function_identity_arguments(p.oid) as args
from pg_catalog.pg_proc p cross join lateral pg_catalog.aclexplode(p.proacl) a join pg_catalog.pg_roles g on g.oid = a.grantee
where p.pronamespace = ?::regnamespace and p.proname = 'discounted' and g.rolname = ? order by 1`, [SCHEMA, role])).rows.map((row) => row['args']);
    assert.equal(await acl('vdb_governed_v1_clerk'), ['amount numeric', 'amount numeric, rate numeric']);
    assert.equal(await acl('vdb_governed_v1_analyst'), []);
    assert.ok(service.logs.some((line) => line.includes(`PUBLIC holds execute on function ${SCHEMA}.discounted(amount numeric, rate numeric)`)), 'PUBLIC\'s EXECUTE is warned about');
    await raw.query(`revoke execute on function ${SCHEMA}.discounted(numeric), ${SCHEMA}.discounted(numeric, numeric) from public`, []);
    const analyst = await asCaller(service, ['analyst'], true);
    for (const sql of [`select ${SCHEMA}.discounted(10)`, `select ${SCHEMA}.discounted(total, 0.5) from ${SCHEMA}.orders`]) {
      assert.is((await failure(analyst.query(sql, [])))?.code, '42501', sql);
    }
    const clerk = await asCaller(service, ['clerk'], true);
    assert.ok((await clerk.query(`select ${SCHEMA}.discounted(total, 0.5) as d from ${SCHEMA}.orders`, [])).rowCount >= 3);
  });

  test('a data role removed: the sync revokes and drops the roles it made for it; one of the same name it did not make stays; one that owns something is a warning', async ({ raw }) => {
    const exists = async (role: string) => (await raw.query('select 1 from pg_catalog.pg_roles where rolname = ?', [role])).rowCount === 1;
    await raw.query(`create role "${HANDMADE_ROLE}" nologin`, []);
    const withTemp = await startTestService({ config: config(), files: bundle(undefined, TEMP), datasources: { retail_db: raw } });
    await withTemp.close();
    assert.ok(await exists(TEMP_ROLE));
    assert.ok(await exists('vdb_governed_v1_clerk_and_temp'));
    const without = await startTestService({ config: config(), files: bundle(), datasources: { retail_db: raw } });
    await without.close();
    assert.equal([await exists(TEMP_ROLE), await exists('vdb_governed_v1_clerk_and_temp')], [false, false], 'dropped with their combinations');
    assert.ok(await exists(HANDMADE_ROLE), 'a role the sync did not make is never dropped');

    const again = await startTestService({ config: config(), files: bundle(undefined, TEMP), datasources: { retail_db: raw } });
    await again.close();
    await raw.query(`create table ${SCHEMA}.temp_owned (id integer)`, []);
    await raw.query(`alter table ${SCHEMA}.temp_owned owner to "${TEMP_ROLE}"`, []);
    try {
      const kept = await startTestService({ config: config(), files: bundle(), datasources: { retail_db: raw } });
      await kept.close();
      assert.ok(kept.logs.some((line) => /"level":40/.test(line) && line.includes(`role ${TEMP_ROLE} was created for a data role that no longer exists and cannot be dropped`)),
        'a role that still owns something is a warning, not a failed start');
      assert.ok(await exists(TEMP_ROLE));
      const held = await raw.query(`select 1 from pg_catalog.pg_class c cross join lateral pg_catalog.aclexplode(c.relacl) a
where c.oid = ?::regclass and a.grantee = ?::regrole`, [`${SCHEMA}.orders`, TEMP_ROLE]);
      assert.is(held.rowCount, 0, 'its privileges were revoked all the same');
    } finally {
      await raw.query(`drop table ${SCHEMA}.temp_owned`, []);
    }
    const cleaned = await startTestService({ config: config(), files: bundle(), datasources: { retail_db: raw } });
    await cleaned.close();
    assert.not.ok(await exists(TEMP_ROLE));
  });

  test('roles.sync false: startup stops when a role is missing, naming it', async ({ raw }) => {
    const files = { 'bundle/vdbs/missing.yaml': governedVdb(['id'], 'governed_missing') };
    const started = await startTestService({ config: config({ adapter: 'pglite', roles: { sync: false } }), files, datasources: { retail_db: raw } })
      .then(async (service) => { await service.close(); return undefined; }, (error: unknown) => error as Error);
    assert.match(started?.message ?? '', /roles\.sync is false and database role vdb_governed_missing_v1_analyst \(data role analyst\) does not exist/);
  });

  const connectingAs = backend.connectingAs;
  if (connectingAs) {
    test('least privilege: a NOINHERIT login, member of the data roles, with roles.sync false: served, attacks refused, no superuser warning', async ({ raw, service }) => {
      const vdb = service.container.resolve(coreTokens.vdbs).find(VDB, '1');
      const roles = (vdb && planVdbRoles(vdb, 'retail_db')?.roles.map((role) => role.name)) ?? [];
      await raw.query(`create role "${AUTHENTICATOR}" login noinherit`, []);
      for (const role of roles) await raw.query(`grant "${role}" to "${AUTHENTICATOR}"`, []);
      const limited = await startTestService({ config: config({ ...connectingAs(AUTHENTICATOR), roles: { sync: false } }), files: bundle(), datasources: {} });
      try {
        const regions = await post(limited, '/api/v1/query/perform/governed_regions', {}, ANALYST_TOKEN);
        assert.is(regions.status, 200, JSON.stringify(regions.body));
        const leak = await post(limited, '/api/v1/query/perform/governed_leak', {}, ANALYST_TOKEN);
        assert.equal([leak.status, leak.body['code']], [403, 'forbidden']);
        const attack = await task(limited, ATTACKS[0]?.sql ?? '', ANALYST_TOKEN);
        assert.not.match(attack.text, EMAIL);
        assert.not.ok(limited.logs.some((line) => /superuser|could not plan/.test(line)), 'no superuser, and the queries are planned as the data roles');
      } finally {
        await limited.close();
      }
    });
  }

  test.run();
}
