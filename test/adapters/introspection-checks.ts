import * as assert from 'uvu/assert';
import type { Knex } from 'knex';
import type { IntrospectionQueries } from '../../core/sql/catalog-assembly.js';

/** Schema names that would break the SQL if they were spliced into it rather than bound. */
export const HOSTILE_SCHEMAS = ["sales'; drop table x; --", 'STOCK'];

/** The column aliases core/sql/catalog-assembly.ts reads from each query. */
const ALIASES: Record<keyof IntrospectionQueries, string[]> = {
  relations: ['schema_name', 'relation_name', 'relation_kind'],
  columns: ['schema_name', 'relation_name', 'column_name', 'native_type', 'is_nullable', 'ordinal'],
  keys: ['schema_name', 'relation_name', 'constraint_name', 'constraint_type', 'column_name', 'position'],
  foreignKeys: ['schema_name', 'relation_name', 'constraint_name', 'column_name', 'position', 'ref_schema', 'ref_relation', 'ref_column'],
  functions: ['schema_name', 'function_name', 'function_kind', 'return_type'],
};

/**
 * Checks introspection queries without a server: each compiles with the dialect's knex client, binds every
 * schema name through a native placeholder (`@p0`, `:1`), never carries one in its text, and reads the
 * catalog views the dialect is expected to use.
 */
export function assertIntrospectionQueries(
  client: Knex,
  queries: IntrospectionQueries,
  nativePlaceholder: RegExp,
  views: Record<keyof IntrospectionQueries, string[]>,
): void {
  for (const [part, query] of Object.entries(queries) as [keyof IntrospectionQueries, IntrospectionQueries[keyof IntrospectionQueries]][]) {
    const native = client.raw(query.sql, [...query.bindings]).toSQL().toNative();
    for (const schema of HOSTILE_SCHEMAS) assert.not.ok(native.sql.includes(schema), `${part}: schema spliced into SQL`);
    assert.ok(query.bindings.length >= HOSTILE_SCHEMAS.length, `${part}: binds the schemas`);
    assert.equal(new Set(query.bindings), new Set(HOSTILE_SCHEMAS), `${part}: binds exactly the schemas`);
    assert.is(native.sql.match(new RegExp(nativePlaceholder.source, 'g'))?.length, query.bindings.length, `${part}: one placeholder per binding`);
    assert.equal(native.bindings, [...query.bindings], `${part}: bindings in order`);
    assert.not.ok(native.sql.includes('?'), `${part}: no placeholder left unnumbered`);
    for (const view of views[part]) assert.ok(native.sql.includes(view), `${part}: reads ${view}`);
    for (const alias of ALIASES[part]) assert.ok(query.sql.includes(alias), `${part}: returns ${alias}`);
  }
}
