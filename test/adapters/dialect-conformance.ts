import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { CatalogRelation } from '../../core/plugin-api/catalog.js';
import { UnavailableError } from '../../core/plugin-api/errors.js';
import type { Datasource } from '../../core/plugin-api/sql-dialect.js';
import { ALL_TYPES_COLUMNS, EXPECTED_ROW, NULL_ROW, SCHEMA, fixtureFor, type ConformanceFixture } from './conformance-fixtures.js';

/**
 * The one conformance suite of sqlDialect adapters (Hono's router cases, Kysely's per-dialect setup): every
 * adapter runs the same tests against the same expected literals, so a logical value encodes to identical
 * JSON whatever the backend.
 */
export interface DialectConformanceTarget {
  /** Suite label, e.g. `postgres`. */
  name: string;
  /** Opens the datasource under test, guarded as the core guards it. */
  open: () => Promise<Datasource>;
  /** Why the suite cannot run here (no server URL): every test is then registered as skipped. */
  skip?: string | undefined;
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

  ['introspection lists tables and views of the schema, sorted', async (datasource) => {
    const catalog = await datasource.introspect([SCHEMA]);
    assert.equal(catalog.schemas, [SCHEMA]);
    assert.equal(
      catalog.relations.map((r) => [r.schema, r.name, r.kind]),
      [[SCHEMA, 'all_types', 'table'], [SCHEMA, 'child', 'table'], [SCHEMA, 'child_view', 'view'], [SCHEMA, 'parent', 'table']],
    );
  }],

  ['introspection gives columns in order with native type, logical type and nullability', async (datasource) => {
    const catalog = await datasource.introspect([SCHEMA]);
    const allTypes = relation(catalog.relations, 'all_types');
    assert.equal(allTypes.columns.map((c) => [c.name, c.logicalType]), ALL_TYPES_COLUMNS.map(([n, t]) => [n, t]));
    assert.equal(allTypes.columns.filter((c) => c.withTimeZone === true).map((c) => c.name), ['c_timestamptz'], 'the timestamp holding an instant');
    for (const column of allTypes.columns) {
      assert.ok(column.nativeType.trim() !== '', `native type of ${column.name}`);
      assert.is(column.logicalType, datasource.dialect.logicalType(column.nativeType), `dialect maps ${column.nativeType}`);
      assert.is(column.nullable, column.name !== 'id', `nullability of ${column.name}`);
    }
    const parent = relation(catalog.relations, 'parent');
    assert.equal(parent.columns.map((c) => [c.name, c.logicalType, c.nullable]),
      [['id', 'integer', false], ['code', 'string', false], ['name', 'string', true]]);
    const view = relation(catalog.relations, 'child_view');
    assert.equal(view.columns.map((c) => [c.name, c.logicalType]),
      [['parent_id', 'integer'], ['code', 'string'], ['line_no', 'integer'], ['note', 'string']]);
    assert.equal(view.primaryKey, []);
  }],

  ['introspection gives primary, unique and foreign keys', async (datasource) => {
    const catalog = await datasource.introspect([SCHEMA]);
    const parent = relation(catalog.relations, 'parent');
    assert.equal(parent.primaryKey, ['id']);
    assert.equal(parent.uniqueKeys, [['code']]);
    assert.equal(parent.foreignKeys, []);
    const child = relation(catalog.relations, 'child');
    assert.equal(child.primaryKey, ['parent_id', 'line_no']);
    assert.equal(child.uniqueKeys, []);
    assert.equal(child.foreignKeys, [{
      name: 'child_parent_fk', columns: ['parent_id'],
      referencedSchema: SCHEMA, referencedRelation: 'parent', referencedColumns: ['id'],
    }]);
  }],

  ['introspection lists the schema\'s user functions', async (datasource) => {
    const catalog = await datasource.introspect([SCHEMA]);
    assert.equal(catalog.functions.map((f) => [f.schema, f.name, f.kind]), [[SCHEMA, 'add_one', 'function']]);
    assert.ok(catalog.functions[0]?.returnType.toLowerCase().startsWith('int'), 'return type');
  }],

  ['introspection of no schema, or an unknown one, is empty', async (datasource) => {
    assert.equal(await datasource.introspect([]), { schemas: [], relations: [], functions: [] });
    const unknown = await datasource.introspect(['no_such_schema_here']);
    assert.equal([unknown.relations, unknown.functions], [[], []]);
  }],

  ['every logical type encodes to the same JSON', async (datasource, fixture) => {
    const inserted = await datasource.query(ALL_TYPES_INSERT, fixture.allTypesValues);
    assert.equal([inserted.columns, inserted.rowCount], [[], 1]);
    await datasource.query(`insert into ${SCHEMA}.all_types (id) values (?)`, [2]);
    const result = await datasource.query(`select * from ${SCHEMA}.all_types order by id`, []);
    assert.equal(result.columns, ALL_TYPES_COLUMNS.map(([name, logicalType]) => ({ name, logicalType })));
    // the column holding an instant is named (the SQL door sends it as timestamptz)
    assert.equal(result.withTimeZone, ['c_timestamptz']);
    assert.equal(result.rows, [EXPECTED_ROW, NULL_ROW]);
    assert.equal([result.rowCount, result.truncated], [2, false]);
  }],

  ['maxRows cuts the result and says so; DML counts affected rows', async (datasource) => {
    for (const [id, code] of [[1, 'a'], [2, 'b'], [3, 'c']] as const) {
      await datasource.query(`insert into ${SCHEMA}.parent (id, code) values (?, ?)`, [id, code]);
    }
    const sql = `select id, code from ${SCHEMA}.parent order by id`;
    const cut = await datasource.query(sql, [], { maxRows: 2 });
    assert.equal([cut.rows, cut.rowCount, cut.truncated], [[{ id: 1, code: 'a' }, { id: 2, code: 'b' }], 2, true]);
    assert.is((await datasource.query(sql, [], { maxRows: 3 })).truncated, false);
    assert.is((await datasource.query(sql, [])).rowCount, 3);
    const updated = await datasource.query(`update ${SCHEMA}.parent set name = ? where id > ?`, ['n', 1]);
    assert.equal([updated.rowCount, updated.rows, updated.truncated], [2, [], false]);
  }],

  ['bound values stay data and cannot inject', async (datasource) => {
    const payload = `'; drop table ${SCHEMA}.parent; --`;
    const echoed = await datasource.query('select ? as v', [payload]);
    assert.equal(echoed.rows, [{ v: payload }]);
    await datasource.query(`insert into ${SCHEMA}.child (parent_id, line_no, note) values (?, ?, ?)`, [1, 1, payload]);
    const read = await datasource.query(`select note from ${SCHEMA}.child_view where note = ?`, [payload]);
    assert.equal(read.rows, [{ note: payload }]);
    const none = await datasource.query(`select id from ${SCHEMA}.parent where code = ?`, [`x' or '1'='1`]);
    assert.equal(none.rows, []);
    assert.is((await datasource.query(`select count(*) as n from ${SCHEMA}.parent`, [])).rows.length, 1);
  }],
];

export function runDialectConformance(target: DialectConformanceTarget): void {
  const test = suite<{ datasource?: Datasource; fixture?: ConformanceFixture }>(`dialect conformance: ${target.name}`, {});
  const closable = target.closable ?? true;

  if (target.skip === undefined) {
    test.before(async (context) => {
      const datasource = await target.open();
      const fixture = fixtureFor(datasource.dialect.family);
      for (const statement of fixture.setup) await datasource.query(statement, []);
      context.datasource = datasource;
      context.fixture = fixture;
    });
    test.after(async ({ datasource, fixture }) => {
      if (!datasource || !fixture) return;
      if (closable) {
        // The close test closed it: clean up through a fresh one.
        const cleaner = await target.open();
        await cleaner.query(fixture.teardown, []);
        await cleaner.close();
      } else {
        await datasource.query(fixture.teardown, []);
      }
    });
  }

  const register = (name: string, run: (context: { datasource?: Datasource; fixture?: ConformanceFixture }) => Promise<void>) => {
    if (target.skip !== undefined) test.skip(`${name} (skipped: ${target.skip})`);
    else test(name, run);
  };

  for (const [name, run] of cases) {
    register(name, async ({ datasource, fixture }) => {
      if (!datasource || !fixture) throw new Error('setup failed');
      await run(datasource, fixture);
    });
  }

  if (closable) {
    register('close twice is safe; calls after close are refused', async ({ datasource }) => {
      if (!datasource) throw new Error('setup failed');
      await datasource.close();
      await datasource.close();
      const error = await datasource.query('select 1', []).then(() => undefined, (e: unknown) => e);
      assert.instance(error, UnavailableError);
      assert.is((error as UnavailableError).code, 'datasource_unavailable');
    });
  }

  const { unreachable } = target;
  if (unreachable) {
    // Needs no server: runs even when the rest is skipped.
    test('an unreachable server fails with datasource_unavailable, naming the datasource, not the password', async () => {
      const error = await unreachable.open().then(
        async (opened) => {
          await opened.close();
          return undefined;
        },
        (e: unknown) => e,
      );
      assert.instance(error, UnavailableError);
      const unavailable = error as UnavailableError;
      assert.is(unavailable.code, 'datasource_unavailable');
      assert.match(unavailable.message, /datasource "unreachable"/);
      assert.not.match(unavailable.message, unreachable.password);
      assert.not.match(JSON.stringify(unavailable.details ?? {}), unreachable.password);
    });
  }

  test.run();
}
