// Render cost of one endpoint definition: compile once, then render + toSql per request, as the query
// endpoint does. Runs on the compiled output: `npm run build && node bench/template-render.mjs [N]`.
import { PostgresDialect } from '../dist/adapters/postgres/postgres-dialect.js';
import { toSql } from '../dist/core/endpoints/bound-text.js';
import { createTwingTemplateEngine } from '../dist/plugins/template-twing/twing-template-engine.js';

const iterations = Number(process.argv[2] ?? 20_000);
const source = `{% set notFirst = false %}
---
type: sqlDirect
virtualDatabase: retail
neededFields: [customerId, tables]
query: >-
  {% for t in tables %}{{ ' UNION ALL ' | filterValWhenVarFalse('notFirst', true) }}select id, total from {{ t | identifier }} where customer_id = {{ customerId }} and status = {{ status }}{% endfor %}
`;
const dialect = new PostgresDialect('postgres');
const definition = createTwingTemplateEngine('twing').compile({ name: 'orders', file: 'bench/orders.yaml', source }, []);
const context = {
  _context: { vdb: 'retail', requestId: 'bench', caller: { subject: 'bench' }, now: new Date() },
  identifier: (name) => `"${name}"`,
};

const renderOnce = (i) => {
  const rendered = definition.render({ customerId: i, status: 'open', tables: ['orders', 'archived_orders'] }, context);
  return toSql(rendered.document.query, rendered.values, { dialect, origin: rendered.origin });
};

for (let i = 0; i < 2_000; i++) renderOnce(i); // warm up the JIT and the parse caches
const started = process.hrtime.bigint();
for (let i = 0; i < iterations; i++) renderOnce(i);
const elapsedUs = Number(process.hrtime.bigint() - started) / 1_000;
console.log(`template render + toSql: ${(elapsedUs / iterations).toFixed(1)} µs per request (${iterations} renders)`);
