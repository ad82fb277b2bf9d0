/**
 * The governed-execution suites' own schema and VDB: an analyst granted only `id, region` of the customers
 * (as in the issue that found the analyzer's gaps), a clerk granted everything, an auditor with a database
 * role of its own name, and the statements that read the customers' emails through names the analyzer
 * does not resolve as PostgreSQL does.
 */
export const SCHEMA = 'governed_test';
export const VDB = 'governed';

/** Names of database roles the suites create themselves; cluster-wide on PostgreSQL, so dropped after. */
export const AUDITOR_DB_ROLE = 'governed_test_auditor_reader';
export const AUTHENTICATOR = 'governed_test_authenticator';
/** A role of the service's naming scheme that the operator made: no sync may drop it. */
export const HANDMADE_ROLE = 'vdb_governed_v1_handmade';

export const SCHEMA_SETUP: string[] = [
  `drop schema if exists ${SCHEMA} cascade`,
  `create schema ${SCHEMA}`,
  `create table ${SCHEMA}.customers (id serial primary key, email text not null, name text not null, region text not null)`,
  `create table ${SCHEMA}.orders (id serial primary key, customer_id integer not null references ${SCHEMA}.customers (id), total numeric(10, 2) not null)`,
  `insert into ${SCHEMA}.customers (email, name, region) values
     ('ada@example.com', 'Ada', 'North'), ('ben@example.com', 'Ben', 'South'), ('chloe@example.com', 'Chloe', 'North')`,
  `insert into ${SCHEMA}.orders (customer_id, total) values (1, 10.50), (2, 20.00), (3, 7.25)`,
  // a VDB function with two overloads: the clerk's schema grant covers it, the analyst's grants do not
  `create function ${SCHEMA}.discounted(amount numeric) returns numeric language sql immutable as 'select amount * 0.9'`,
  `create function ${SCHEMA}.discounted(amount numeric, rate numeric) returns numeric language sql immutable as 'select amount * (1 - rate)'`,
];

/** Every email of the seed: none may come back to the analyst. */
export const EMAIL = /@example\.com/;

/** `extraRoles`: more `dataRoles` entries, as YAML list items. */
export function governedVdb(analystColumns: readonly string[] = ['id', 'region'], name = VDB, extraRoles = ''): string {
  return `name: ${name}
version: "1"
datasource: retail_db
schemas: [{ name: ${SCHEMA} }]
dataRoles:
  - name: analyst
    grants:
      - { resource: ${SCHEMA}.orders, allow: [select] }
      - { resource: ${SCHEMA}.customers, allow: [select], columns: [${analystColumns.join(', ')}] }
  - name: clerk
    grants: [{ resource: ${SCHEMA}, allow: [select, insert, update, delete] }]
  - name: auditor
    dbRole: ${AUDITOR_DB_ROLE}
    grants: [{ resource: ${SCHEMA}.customers, allow: [select], columns: [id, email] }]
${extraRoles}`;
}

const header = `type: sqlDirect\nvirtualDatabase: ${VDB}\n`;

/** The customers' join with a column list: `a` is the id, `b` the email. */
const JOINED = `(${SCHEMA}.customers c cross join (select 1) s)`;
const RENAMED = `${JOINED} as j(a, b)`;

export const QUERIES: Record<string, string> = {
  governed_regions: `---\n${header}query: select id, region from ${SCHEMA}.customers order by id\n`,
  governed_leak: `---\n${header}query: select a as id, b as region from ${RENAMED} order by a\n`,
  governed_probe: `---\n${header}neededFields: [prefix]\nquery: select a as id from ${RENAMED} where b like {{ prefix }} order by a\n`,
};

export const ACTIONS: Record<string, string> = {
  governed_add_order: `---
virtualDatabase: ${VDB}
needed:
  fields: [customerId, total]
before:
  - name: customer_exists
    entity: ${SCHEMA}.customers
    filters: [{ field: id, operation: EQUAL, value: {{ customerId }} }]
    assertThat: exists
    message: "Customer {{ customerId }} does not exist"
operations:
  - name: insert_order
    type: insert
    entity: ${SCHEMA}.orders
    valueAssignments:
      - { field: customer_id, value: {{ customerId }}, dataType: integer }
      - { field: total, value: {{ total }}, dataType: decimal }
`,
};

/**
 * Statements that read the emails (or infer them) as the analyst. The first ones go through names the
 * analyzer does not trace to `customers.email`; the last ones it refuses itself, and the database must too.
 */
export const ATTACKS: { form: string; sql: string }[] = [
  { form: 'a join alias column list renames the columns', sql: `select b from ${RENAMED}` },
  { form: 'the renamed column, aliased as a granted one', sql: `select b as region from ${RENAMED}` },
  { form: 'the whole row of the alias, to_jsonb(j)', sql: `select to_jsonb(j) from ${RENAMED}` },
  { form: 'the whole row of the alias, row_to_json(j)', sql: `select row_to_json(j) from ${RENAMED}` },
  { form: 'the whole row of a join alias without a column list', sql: `select to_jsonb(j) from ${JOINED} as j` },
  { form: 'functional notation, email(j)', sql: `select email(j) from ${JOINED} as j` },
  { form: 'field selection, (j).email', sql: `select (j).email from ${JOINED} as j` },
  { form: 'field selection of a renamed column, (j).b', sql: `select (j).b from ${RENAMED}` },
  { form: 'inside a subquery in FROM', sql: `select * from (select b from ${RENAMED}) x` },
  { form: 'inside a scalar subquery', sql: `select (select b from ${RENAMED} order by a limit 1) as first_email` },
  { form: 'inside a CTE', sql: `with x as (select b from ${RENAMED}) select * from x` },
  { form: 'functional notation inside a CTE', sql: `with x as (select email(j) as e from ${JOINED} as j) select e from x` },
  { form: 'inside a LATERAL subquery', sql: `select l.b from ${SCHEMA}.orders o cross join lateral (select j.b from ${RENAMED} where j.a = o.customer_id) l` },
  { form: 'filtering on the renamed column', sql: `select a from ${RENAMED} where b like 'a%'` },
  { form: 'count(*) FILTER inferring the column', sql: `select count(*) filter (where b like 'a%') from ${RENAMED}` },
  { form: 'EXISTS inferring the column', sql: `select exists (select 1 from ${RENAMED} where b like 'a%') as found` },
  { form: 'ordering by the renamed column', sql: `select a from ${RENAMED} order by b` },
  { form: 'the column by its name', sql: `select email from ${SCHEMA}.customers` },
  { form: 'the whole row of the table', sql: `select to_jsonb(c) from ${SCHEMA}.customers c` },
];
