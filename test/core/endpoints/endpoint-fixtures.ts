import type { SqlFamily } from '../../../core/plugin-api/sql-dialect.js';

/**
 * The endpoint suites' own schema `endpoint_test`, created on every backend before the service starts (the
 * demo's `sales` schema stays untouched): customers, products, orders with a generated id, order lines,
 * jobs for waits, and a view no one can write to.
 */
export const TEST_SCHEMA = 'endpoint_test';

export function schemaSetup(family: Extract<SqlFamily, 'postgres' | 'mysql'>): string[] {
  const s = TEST_SCHEMA;
  const pg = family === 'postgres';
  return [
    pg ? `drop schema if exists ${s} cascade` : `drop database if exists ${s}`,
    pg ? `create schema ${s}` : `create database ${s} character set utf8mb4 collate utf8mb4_bin`,
    `create table ${s}.customers (id integer primary key, name varchar(80) not null, region varchar(20) not null)`,
    `create table ${s}.products (id integer primary key, name varchar(80) not null, stock integer not null, active boolean not null, price decimal(10, 2) not null, note varchar(40) null)`,
    `create table ${s}.orders (
       id ${pg ? 'serial primary key' : 'integer auto_increment primary key'},
       customer_id integer not null references ${s}.customers (id),
       reference varchar(36) not null unique,
       status varchar(20) not null,
       total decimal(12, 2) not null default 0 check (total >= 0),
       notes ${pg ? 'jsonb' : 'json'} null)`,
    `create table ${s}.order_lines (
       order_id integer not null references ${s}.orders (id),
       line_no integer not null,
       product_id integer not null references ${s}.products (id),
       quantity integer not null check (quantity > 0),
       primary key (order_id, line_no))`,
    `create table ${s}.jobs (reference varchar(36) primary key, state varchar(20) not null, payload ${pg ? 'jsonb' : 'json'} null)`,
    `create table ${s}.echoes (id ${pg ? 'serial primary key' : 'integer auto_increment primary key'}, label varchar(40) not null, text_value ${pg ? 'text' : 'mediumtext'} null, json_value ${pg ? 'jsonb' : 'json'} null)`,
    `create view ${s}.product_totals as select category_stub.region, count(*) as n from ${s}.customers category_stub group by category_stub.region`,
    `insert into ${s}.customers (id, name, region) values (1, 'Ada', 'North'), (2, 'Ben', 'South'), (3, 'Chloe', 'North'), (4, 'Dan', 'East')`,
    `insert into ${s}.products (id, name, stock, active, price, note) values
       (1, 'Tea', 10, true, 4.25, null), (2, 'Coffee', 0, true, 7.50, 'seasonal'), (3, 'Cocoa', 5, false, 3.10, null), (4, 'Water', 100, true, 1.20, null)`,
  ];
}

/** The VDB over the test schema, with data roles: `clerk` may do everything, `analyst` may read products only. */
export const SHOP_VDB = `
name: shop
version: "1"
datasource: retail_db
schemas:
  - { name: ${TEST_SCHEMA} }
dataRoles:
  - name: clerk
    grants: [{ resource: ${TEST_SCHEMA}, allow: [select, insert, update, delete] }]
  - name: analyst
    grants: [{ resource: ${TEST_SCHEMA}.products, allow: [select] }]
`;

const header = 'virtualDatabase: shop\n';

/** Query definitions by name. */
export function queryDefinitions(family: SqlFamily): Record<string, string> {
  const text = family === 'postgres' ? 'text' : 'char';
  return {
    products_by_ids: `{% set notFirst = false %}
---
type: sqlDirect
${header}neededFields: [ids]
query: |
  select id, name, stock from ${TEST_SCHEMA}.products
  where id in (
  {%- for id in fromYamlArrayToIterable(ids) -%}
    {{ ', ' | filterValWhenVarFalse('notFirst', true) }}{{ id }}
  {%- endfor -%}
  )
  order by id
`,
    products_cheaper_than: `---
type: sqlDirect
${header}neededFields: [maxPrice]
query: select id, name, price from ${TEST_SCHEMA}.products where price < {{ maxPrice }} order by id
`,
    relation_counts: `{% set notFirst = false %}
---
type: sqlDirect
${header}neededFields: [relations]
query: |
  {% for relation in fromYamlArrayToIterable(relations) %}
    {{- ' union all ' | filterValWhenVarFalse('notFirst', true) }}select cast({{ relation }} as ${text}) as relation, count(*) as row_count from ${TEST_SCHEMA}.{{ relation | identifier }}
  {% endfor %}
`,
    echo: `---
type: sqlDirect
${header}query: select cast({{ value }} as ${text}) as echoed
`,
    functions: `---
type: sqlDirect
${header}query: select cast({{ strings__slugify(title) }} as ${text}) as slug, cast({{ greeting__greet(name) }} as ${text}) as greeting, cast({{ uuid() }} as ${text}) as id
`,
    echo_rows: `---
type: sqlDirect
${header}neededFields: [label]
query: select text_value, json_value from ${TEST_SCHEMA}.echoes where label = {{ label }}
`,
    orders_of_customer: `---
type: sqlDirect
${header}neededFields: [customerId]
query: select id, status, total from ${TEST_SCHEMA}.orders where customer_id = {{ customerId }} order by id
`,
  };
}

/** An action whose one assertion uses `operation` on products (and `id` when given); its only operation is skipped. */
function filterAction(field: string, operation: string): string {
  return `---
${header}before:
  - name: probe
    entity: ${TEST_SCHEMA}.products
    filters:
      - { field: ${field}, operation: ${operation}, value: {{ value }} }
{% if id is not null %}
      - { field: id, operation: EQUAL, value: {{ id }} }
{% endif %}
    assertThat: exists
    message: "no product where ${field} ${operation} {{ value }}"
operations:
  - { name: nothing, type: delete, entity: ${TEST_SCHEMA}.jobs, skipWhenTrue: true, filters: [{ field: reference, operation: EQUAL, value: none }] }
`;
}

/** Each filter operation with a request that finds a product and one that finds none. */
export const FILTER_CASES: { operation: string; field: string; matching: Probe; missing: Probe }[] = [
  { operation: 'EQUAL', field: 'name', matching: { value: 'Tea' }, missing: { value: 'Juice' } },
  { operation: 'NOT_EQUAL', field: 'stock', matching: { value: 0 }, missing: { value: 0, id: 2 } },
  { operation: 'GREATER_THAN', field: 'stock', matching: { value: 99 }, missing: { value: 100 } },
  { operation: 'GREATER_THAN_OR_EQUAL', field: 'stock', matching: { value: 100 }, missing: { value: 101 } },
  { operation: 'LESS_THAN', field: 'price', matching: { value: '1.21' }, missing: { value: '1.20' } },
  { operation: 'LESS_THAN_OR_EQUAL', field: 'price', matching: { value: '1.20' }, missing: { value: '1.19' } },
  { operation: 'IN', field: 'name', matching: { value: ['Juice', 'Cocoa'] }, missing: { value: ['Juice', 'Milk'] } },
  { operation: 'NOT_IN', field: 'id', matching: { value: [1, 2, 3] }, missing: { value: [1, 2, 3, 4] } },
  { operation: 'LIKE', field: 'name', matching: { value: 'Co%' }, missing: { value: 'Zz%' } },
  { operation: 'IS_NULL', field: 'note', matching: { id: 1 }, missing: { id: 2 } },
  { operation: 'IS_NOT_NULL', field: 'note', matching: { id: 2 }, missing: { id: 1 } },
];

export interface Probe {
  value?: unknown;
  id?: number;
}

const ORDER_OPERATION = `  - name: insert_order
    type: insert
    entity: ${TEST_SCHEMA}.orders
    valueAssignments:
      - { field: customer_id, value: {{ customerId }}, dataType: integer }
      - { field: reference, value: {{ reference }}, dataType: string }
      - { field: status, value: pending }
      - { field: notes, value: {{ notes }}, dataType: json }
    waitUntilEffective:
      maxSeconds: 3
      checkEverySeconds: 1
      byGetting:
        fields: [id, reference]
        usingFilterFieldValuePairs: { reference: {{ reference }} }
        putInContextVar: order
    rollback:
      type: delete
      filters: [{ field: reference, operation: EQUAL, value: {{ reference }} }]
`;

/** Action definitions by name. */
export function actionDefinitions(): Record<string, string> {
  const filters = Object.fromEntries(FILTER_CASES.map(({ operation, field }) => [`filter_${operation.toLowerCase()}`, filterAction(field, operation)]));
  return {
    ...filters,
    place_order: `{% set reference = uuid() %}
---
${header}needed:
  fields: [customerId, lines]
before:
  - name: customer_exists
    entity: ${TEST_SCHEMA}.customers
    filters: [{ field: id, operation: EQUAL, value: {{ customerId }} }]
    assertThat: exists
    message: "Customer {{ customerId }} does not exist"
{% for line in fromYamlArrayToIterable(lines) %}
  - name: product_{{ loop.index }}_in_stock
    entity: ${TEST_SCHEMA}.products
    filters:
      - { field: id, operation: EQUAL, value: {{ line.productId }} }
      - { field: stock, operation: GREATER_THAN_OR_EQUAL, value: {{ line.quantity }} }
    assertThat: exists
    message: "Product {{ line.productId }} lacks stock"
{% endfor %}
operations:
${ORDER_OPERATION}{% for line in fromYamlArrayToIterable(lines) %}
  - name: insert_line_{{ loop.index }}
    type: insert
    entity: ${TEST_SCHEMA}.order_lines
    valueAssignments:
      - { field: order_id, value: {{ deferValueProcessing(contextVar='order.id') }}, dataType: integer }
      - { field: line_no, value: {{ loop.index }}, dataType: integer }
      - { field: product_id, value: {{ line.productId }}, dataType: integer }
      - { field: quantity, value: {{ line.quantity }}, dataType: integer }
    rollback:
      type: delete
      filters:
        - { field: order_id, operation: EQUAL, value: {{ deferValueProcessing(contextVar='order.id') }} }
        - { field: line_no, operation: EQUAL, value: {{ loop.index }} }
{% endfor %}
{% if total is not null %}
  - name: set_total
    type: update
    entity: ${TEST_SCHEMA}.orders
    valueAssignments: [{ field: total, value: {{ total }}, dataType: decimal }]
    filters: [{ field: id, operation: EQUAL, value: {{ deferValueProcessing(contextVar='order.id') }} }]
{% endif %}
`,
    await_job: `---
${header}needed:
  fields: [reference]
operations:
  - name: submit_job
    type: insert
    entity: ${TEST_SCHEMA}.jobs
    valueAssignments:
      - { field: reference, value: {{ reference }} }
      - { field: state, value: submitted }
    waitUntilEffective:
      maxSeconds: 2
      checkEverySeconds: 1
      byGetting:
        fields: [reference, state]
        usingFilterFieldValuePairs: { reference: {{ reference }}, state: done }
        putInContextVar: job
    rollback:
      type: delete
      filters: [{ field: reference, operation: EQUAL, value: {{ reference }} }]
`,
    submit_job: `---
${header}needed:
  fields: [reference]
operations:
  - name: submit_job
    type: insert
    entity: ${TEST_SCHEMA}.jobs
    valueAssignments:
      - { field: reference, value: {{ reference }} }
      - { field: state, value: submitted }
      - { field: payload, value: {{ payload }}, dataType: json }
    waitUntilEffective:
      maxSeconds: 2
      checkEverySeconds: 1
      byGetting:
        fields: [state, payload]
        usingFilterFields: [reference]
        putInContextVar: job
`,
    record_echo: `---
${header}needed:
  fields: [label]
operations:
  - name: insert_echo
    type: insert
    entity: ${TEST_SCHEMA}.echoes
    valueAssignments:
      - { field: label, value: {{ label }} }
      - { field: text_value, value: {{ text }}, dataType: string }
      - { field: json_value, value: {{ json }}, dataType: json }
`,
    write_view: `---
${header}operations:
  - name: insert_into_view
    type: insert
    entity: ${TEST_SCHEMA}.product_totals
    valueAssignments: [{ field: region, value: North }]
`,
    restock: `---
${header}needed:
  fields: [productId, stock]
operations:
  - name: set_stock
    type: update
    entity: ${TEST_SCHEMA}.products
    skipWhenTrue: {{ dryRun ?? false }}
    valueAssignments: [{ field: stock, value: {{ stock }}, dataType: integer }]
    filters: [{ field: id, operation: EQUAL, value: {{ productId }} }]
`,
  };
}
