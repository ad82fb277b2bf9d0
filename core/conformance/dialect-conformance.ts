import assert from 'node:assert/strict';
import type { CatalogRelation } from '../plugin-api/catalog.js';
import { UnavailableError } from '../plugin-api/errors.js';
import type { Datasource, TableStatement } from '../plugin-api/sql-dialect.js';
import { runtimeOver } from '../sql/datasource-runtime.js';
import type { ConformanceCase } from './conformance-case.js';
import { ALL_TYPES_COLUMNS, EXPECTED_ROW, NULL_ROW, SCHEMA, fixtureFor, type ConformanceFixture } from './dialect-fixtures.js';

export { runConformance, type ConformanceCase, type ConformanceFailure } from './conformance-case.js';
export { ALL_TYPES_COLUMNS, EXPECTED_ROW, NULL_ROW, SCHEMA, type ConformanceFixture } from './dialect-fixtures.js';

/**
 * The conformance suite of `sqlDialect` adapters (`vdb-service/adapter-kit/conformance`; Hono's router
 * cases, Kysely's per-dialect setup): every adapter runs the same cases against the same expected literals,
 * so a logical value encodes to identical JSON whatever the backend.
 */
export interface DialectConformanceTarget {
  /** Opens the datasource under test (`dialect.open(settings)`); the suite wraps it in the runtime as the core does. */
  open: () => Promise<Datasource>;
  /**
   * The statements that build and drop the conformance schema on this server; the built-in families
   * (postgres, mysql) have theirs. See `ConformanceFixture` for what they must create.
   */
  fixture?: ConformanceFixture;
  /** False for a datasource shared with other suites: it is neither closed nor close-tested here. */
  closable?: boolean;
  /** Opens the same dialect against a server that does not answer, with `password` in its settings. */
  unreachable?: { open: () => Promise<Datasource>; password: string };
}

type Case = (datasource: Datasource, fixture: ConformanceFixture) => Promise<void>;

const ALL_TYPES_INSERT = `insert into ${SCHEMA}.all_types values (${ALL_TYPES_COLUMNS.map(() => '?').join(', ')})`;

function relation(relations: readonly CatalogRelation[], name: string): CatalogRelation {
  const found = relations.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`relation ${name} not introspected`);
  return found;
}

const cases: [string, Case][] = [
  ['ping answers', async (datasource) => {
    await datasource.ping();
  }],

  ['buildStatement builds statements the datasource runs: insert, update, first, exists, delete', async (datasource) => {
    const table = { schema: SCHEMA, name: 'parent' };
    const key = [{ column: 'id', operation: 'EQUAL' as const, value: 9001 }];
    const run = (statement: TableStatement) => {
      const built = datasource.buildStatement(statement);
      return datasource.query(built.sql, built.bindings);
    };
    try {
      await run({ kind: 'insert', table, values: { id: 9001, code: 'conformance', name: 'before' } });
      await run({ kind: 'update', table, values: { name: 'after' }, filters: key });
      const first = await run({ kind: 'first', table, columns: ['name'], filters: [...key, { column: 'code', operation: 'IN', value: ['conformance', 'other'] }] });
      assert.deepEqual(first.rows, [{ name: 'after' }]);
      const named = await run({ kind: 'exists', table, filters: [...key, { column: 'name', operation: 'IS_NOT_NULL' }] });
      assert.equal(named.rows.length, 1);
    } finally {
      await run({ kind: 'delete', table, filters: key });
    }
    assert.equal((await run({ kind: 'exists', table, filters: key })).rows.length, 0);
  }],

  ['introspection lists tables and views of the schema, sorted', async (datasource) => {
    const catalog = await datasource.introspect([SCHEMA]);
    assert.deepEqual(catalog.schemas, [SCHEMA]);
    assert.deepEqual(
      catalog.relations.map((r) => [r.schema, r.name, r.kind]),
      [[SCHEMA, 'all_types', 'table'], [SCHEMA, 'child', 'table'], [SCHEMA, 'child_view', 'view'], [SCHEMA, 'parent', 'table']],
    );
  }],

  ['introspection gives columns in order with native type, logical type and nullability', async (datasource) => {
    const catalog = await datasource.introspect([SCHEMA]);
    const allTypes = relation(catalog.relations, 'all_types');
    assert.deepEqual(allTypes.columns.map((c) => [c.name, c.logicalType]), ALL_TYPES_COLUMNS.map(([n, t]) => [n, t]));
    assert.deepEqual(allTypes.columns.filter((c) => c.withTimeZone === true).map((c) => c.name), ['c_timestamptz'], 'the timestamp holding an instant');
    for (const column of allTypes.columns) {
      assert.ok(column.nativeType.trim() !== '', `native type of ${column.name}`);
      assert.equal(column.logicalType, datasource.dialect.logicalType(column.nativeType), `dialect maps ${column.nativeType}`);
      assert.equal(column.nullable, column.name !== 'id', `nullability of ${column.name}`);
    }
    const parent = relation(catalog.relations, 'parent');
    assert.deepEqual(parent.columns.map((c) => [c.name, c.logicalType, c.nullable]),
      [['id', 'integer', false], ['code', 'string', false], ['name', 'string', true]]);
    const view = relation(catalog.relations, 'child_view');
    assert.deepEqual(view.columns.map((c) => [c.name, c.logicalType]),
      [['parent_id', 'integer'], ['code', 'string'], ['line_no', 'integer'], ['note', 'string']]);
    assert.deepEqual(view.primaryKey, []);
  }],

  ['introspection gives primary, unique and foreign keys', async (datasource) => {
    const catalog = await datasource.introspect([SCHEMA]);
    const parent = relation(catalog.relations, 'parent');
    assert.deepEqual(parent.primaryKey, ['id']);
    assert.deepEqual(parent.uniqueKeys, [['code']]);
    assert.deepEqual(parent.foreignKeys, []);
    const child = relation(catalog.relations, 'child');
    assert.deepEqual(child.primaryKey, ['parent_id', 'line_no']);
    assert.deepEqual(child.uniqueKeys, []);
    assert.deepEqual(child.foreignKeys, [{
      name: 'child_parent_fk', columns: ['parent_id'],
      referencedSchema: SCHEMA, referencedRelation: 'parent', referencedColumns: ['id'],
    }]);
  }],

  ['introspection lists the schema\'s user functions', async (datasource) => {
    const catalog = await datasource.introspect([SCHEMA]);
    assert.deepEqual(catalog.functions.map((f) => [f.schema, f.name, f.kind]), [[SCHEMA, 'add_one', 'function']]);
    assert.ok(catalog.functions[0]?.returnType.toLowerCase().startsWith('int'), 'return type');
  }],

  ['introspection of no schema, or an unknown one, is empty', async (datasource) => {
    assert.deepEqual(await datasource.introspect([]), { schemas: [], relations: [], functions: [] });
    const unknown = await datasource.introspect(['no_such_schema_here']);
    assert.deepEqual([unknown.relations, unknown.functions], [[], []]);
  }],

  ['every logical type encodes to the same JSON', async (datasource, fixture) => {
    const inserted = await datasource.query(ALL_TYPES_INSERT, fixture.allTypesValues);
    assert.deepEqual([inserted.columns, inserted.rowCount], [[], 1]);
    await datasource.query(`insert into ${SCHEMA}.all_types (id) values (?)`, [2]);
    const result = await datasource.query(`select * from ${SCHEMA}.all_types order by id`, []);
    assert.deepEqual(result.columns, ALL_TYPES_COLUMNS.map(([name, logicalType]) => ({ name, logicalType })));
    // the column holding an instant is named (the SQL door sends it as timestamptz)
    assert.deepEqual(result.withTimeZone, ['c_timestamptz']);
    assert.deepEqual(result.rows, [EXPECTED_ROW, NULL_ROW]);
    assert.deepEqual([result.rowCount, result.truncated], [2, false]);
  }],

  ['maxRows cuts the result and says so; DML counts affected rows', async (datasource) => {
    for (const [id, code] of [[1, 'a'], [2, 'b'], [3, 'c']] as const) {
      await datasource.query(`insert into ${SCHEMA}.parent (id, code) values (?, ?)`, [id, code]);
    }
    const sql = `select id, code from ${SCHEMA}.parent order by id`;
    const cut = await datasource.query(sql, [], { maxRows: 2 });
    assert.deepEqual([cut.rows, cut.rowCount, cut.truncated], [[{ id: 1, code: 'a' }, { id: 2, code: 'b' }], 2, true]);
    assert.equal((await datasource.query(sql, [], { maxRows: 3 })).truncated, false);
    assert.equal((await datasource.query(sql, [])).rowCount, 3);
    const updated = await datasource.query(`update ${SCHEMA}.parent set name = ? where id > ?`, ['n', 1]);
    assert.deepEqual([updated.rowCount, updated.rows, updated.truncated], [2, [], false]);
  }],

  ['bound values stay data and cannot inject', async (datasource) => {
    const payload = `'; drop table ${SCHEMA}.parent; --`;
    const echoed = await datasource.query('select ? as v', [payload]);
    assert.deepEqual(echoed.rows, [{ v: payload }]);
    await datasource.query(`insert into ${SCHEMA}.child (parent_id, line_no, note) values (?, ?, ?)`, [1, 1, payload]);
    const read = await datasource.query(`select note from ${SCHEMA}.child_view where note = ?`, [payload]);
    assert.deepEqual(read.rows, [{ note: payload }]);
    const none = await datasource.query(`select id from ${SCHEMA}.parent where code = ?`, [`x' or '1'='1`]);
    assert.deepEqual(none.rows, []);
    assert.equal((await datasource.query(`select count(*) as n from ${SCHEMA}.parent`, [])).rows.length, 1);
  }],
];

/**
 * The cases of the dialect suite, in order: the first opens the datasource and builds the conformance
 * schema, the last drops it again. Run them in order with any test runner; `serverCases` needs a server
 * that answers, `unreachableCase` (when the target names one) does not.
 */
export function dialectConformance(target: DialectConformanceTarget): { serverCases: ConformanceCase[]; unreachableCase: ConformanceCase | undefined } {
  const closable = target.closable ?? true;
  let opening: Promise<{ datasource: Datasource; fixture: ConformanceFixture }> | undefined;
  const prepared = () => (opening ??= (async () => {
    const datasource = runtimeOver(await target.open());
    const fixture = target.fixture ?? fixtureFor(datasource.dialect.family);
    for (const statement of fixture.setup) await datasource.query(statement, []);
    return { datasource, fixture };
  })());

  const serverCases: ConformanceCase[] = cases.map(([name, run]) => ({ name, run: async () => {
    const { datasource, fixture } = await prepared();
    await run(datasource, fixture);
  } }));
  if (closable) {
    serverCases.push({ name: 'close twice is safe; calls after close are refused', run: async () => {
      const { datasource } = await prepared();
      await datasource.close();
      await datasource.close();
      const error = await datasource.query('select 1', []).then(() => undefined, (e: unknown) => e);
      assert.ok(error instanceof UnavailableError, `expected UnavailableError, got ${String(error)}`);
      assert.equal(error.code, 'datasource_unavailable');
    } });
  }
  serverCases.push({ name: 'the conformance schema is dropped again', run: async () => {
    const { datasource, fixture } = await prepared();
    // The close case closed it: clean up through a fresh one.
    const cleaner = closable ? runtimeOver(await target.open()) : datasource;
    await cleaner.query(fixture.teardown, []);
    if (closable) await cleaner.close();
  } });

  const { unreachable } = target;
  const unreachableCase: ConformanceCase | undefined = unreachable && {
    name: 'an unreachable server fails with datasource_unavailable, naming the datasource, not the password',
    run: async () => {
      const error = await unreachable.open().then(
        async (opened) => {
          await opened.close();
          return undefined;
        },
        (e: unknown) => e,
      );
      assert.ok(error instanceof UnavailableError, `expected UnavailableError, got ${String(error)}`);
      assert.equal(error.code, 'datasource_unavailable');
      assert.match(error.message, /datasource "unreachable"/);
      assert.ok(!error.message.includes(unreachable.password), 'the message holds the password');
      assert.ok(!JSON.stringify(error.details ?? {}).includes(unreachable.password), 'the details hold the password');
    },
  };
  return { serverCases, unreachableCase };
}
