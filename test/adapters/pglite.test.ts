import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PgliteDialect } from '../../adapters/pglite/pglite-dialect.js';
import { postgresCodec, postgresLogicalType } from '../../adapters/postgres/postgres-types.js';
import { UnavailableError } from '../../core/plugin-api/errors.js';
import type { DatasourceSettings } from '../../core/plugin-api/sql-dialect.js';
import { runtimeOver } from '../../core/sql/datasource-runtime.js';

test('postgres native types map like the other dialects (pglite shares the mapping)', () => {
  const cases: [string, string][] = [
    ['character varying(120)', 'string'], ['text', 'string'], ['character(1)', 'string'], ['integer', 'integer'],
    ['int4', 'integer'], ['smallint', 'integer'], ['bigint', 'bigint'], ['int8', 'bigint'], ['numeric(18,2)', 'decimal'],
    ['numeric', 'decimal'], ['real', 'float'], ['double precision', 'float'], ['boolean', 'boolean'], ['date', 'date'],
    ['time(3) without time zone', 'time'], ['time with time zone', 'string'], ['timestamp(3) without time zone', 'timestamp'],
    ['timestamp with time zone', 'timestamp'], ['timestamptz', 'timestamp'], ['json', 'json'], ['jsonb', 'json'],
    ['uuid', 'uuid'], ['bytea', 'binary'], ['integer[]', 'json'], ['interval', 'string'], ['my_enum', 'string'],
  ];
  for (const [native, logical] of cases) assert.is(postgresLogicalType(native), logical, native);
  assert.equal(postgresCodec(1184), { logicalType: 'timestamp', withTimeZone: true });
  assert.equal(postgresCodec(1114), { logicalType: 'timestamp', withTimeZone: false });
  assert.equal(postgresCodec(1007), { logicalType: 'json' });
  assert.equal(postgresCodec(999_999), { logicalType: 'string' });
});

test('a file-backed pglite runs its init scripts once, when its data folder is new', async () => {
  const baseDir = mkdtempSync(join(tmpdir(), 'vdb-pglite-'));
  try {
    const script = join(baseDir, 'seed.sql');
    writeFileSync(script, 'create table seeded (id integer);\ninsert into seeded values (1);\n');
    const settings: DatasourceSettings = {
      name: 'file_db', adapter: 'pglite', connection: { dataDir: 'data' }, pool: {}, init: [script], baseDir,
    };
    const dialect = new PgliteDialect('pglite');
    const count = 'select count(*)::integer as n from seeded';

    const first = runtimeOver(await dialect.open(settings));
    assert.equal((await first.query(count, [])).rows, [{ n: 1 }]);
    await first.close();
    await first.close();
    const refused = await first.query(count, []).then(() => undefined, (e: unknown) => e);
    assert.instance(refused, UnavailableError);

    // Had the script run again, `create table` would fail, or the count would be 2.
    const second = runtimeOver(await dialect.open(settings));
    assert.equal((await second.query(count, [])).rows, [{ n: 1 }]);
    await second.close();
  } finally {
    rmSync(baseDir, { recursive: true, force: true });
  }
});

test.run();
