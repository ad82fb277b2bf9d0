import { Writable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { formatProblem, StartupError } from '../../../core/plugin-api/errors.js';
import { prepareService } from '../../../core/service.js';
import { sharedPglite } from '../../support/shared-pglite.js';
import { demoConfig, writeBundle } from '../../support/test-service.js';

const VDB = 'name: shop\nversion: "1"\ndatasource: retail_db\nschemas: [{ name: sales }]\n';
const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });

/** Prepares the service over a bundle of definitions; returns its problems as `file:line: message` lines. */
async function problemsOf(definitions: Record<string, string>): Promise<{ errors: string[]; warnings: string[] }> {
  const configFile = writeBundle(demoConfig({ descriptors: './bundle' }), { 'bundle/vdbs/shop.yaml': VDB, ...prefixed(definitions) });
  const folder = configFile.slice(0, -'service.yaml'.length);
  const relative = (line: string) => line.replace(/^.*?bundle\//, 'bundle/').replace(folder, '');
  try {
    const service = await prepareService({ configFile, env: {}, logDestination: quiet, datasources: { retail_db: await sharedPglite() } });
    await service.close();
    return { errors: [], warnings: service.endpointWarnings.map((problem) => relative(formatProblem(problem))) };
  } catch (error) {
    if (!(error instanceof StartupError)) throw error;
    return { errors: error.problems.map((problem) => relative(formatProblem(problem))), warnings: [] };
  }
}

function prefixed(definitions: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(definitions).map(([path, text]) => [`bundle/${path}`, text]));
}

const QUERY = (sql: string, extra = '') => `---\ntype: sqlDirect\nvirtualDatabase: shop\n${extra}query: ${sql}\n`;
const checks = suite('endpoint definitions: checked at startup, every problem as file:line: message');

checks('valid definitions load, and each | raw is a warning with its line', async () => {
  const result = await problemsOf({
    'queries/ok.yaml': QUERY('select id from sales.customers where id = {{ id }}'),
    'queries/trusted.yaml': `{% set order = 'name' %}\n---\ntype: sqlDirect\nvirtualDatabase: shop\nquery: select id from sales.customers order by {{ order | raw }}\n`,
  });
  assert.equal(result.errors, []);
  assert.equal(result.warnings, ['bundle/queries/trusted.yaml:5: | raw splices text unchecked: it must never carry request data']);
});

checks('template syntax, body schema, unused needed fields and quoted placeholders are each reported', async () => {
  const { errors } = await problemsOf({
    'queries/syntax.yaml': '---\ntype: sqlDirect\nvirtualDatabase: shop\nquery: |\n  {% if x %}\n  select 1\n',
    'queries/schema.yaml': '---\ntype: sqlFancy\nvirtualDatabase: shop\nquery: select 1\ncolour: red\n',
    'queries/needed.yaml': QUERY('select id from sales.customers where id = {{ id }}', 'neededFields: [id, region]\n'),
    'queries/quoted.yaml': `---\ntype: sqlDirect\nvirtualDatabase: shop\nquery: |\n  select id from sales.customers\n  where name = '{{ name }}'\n`,
  });
  assert.equal(errors, [
    'bundle/queries/needed.yaml:4: needed field region is never used by the template',
    "bundle/queries/quoted.yaml:6: quoted placeholder: bind the value, drop the quotes (a {{ }} inside a string literal is not a bound value; write a = {{ x }}, not a = '{{ x }}')",
    'bundle/queries/schema.yaml:5: body: unknown key "colour"',
    'bundle/queries/schema.yaml:2: type: must be equal to constant',
    'bundle/queries/syntax.yaml:7: Unexpected token "end of template" of value "null" ("end of statement block" expected).',
  ], errors.join('\n'));
});

checks('names are checked against the catalog: VDB, relations and columns of queries and actions', async () => {
  const { errors } = await problemsOf({
    'queries/relation.yaml': QUERY('select id from sales.nope'),
    'queries/column.yaml': QUERY('select shoe_size from sales.customers'),
    'queries/vdb.yaml': '---\ntype: sqlDirect\nvirtualDatabase: warehouse\nquery: select 1\n',
    'actions/entity.yaml': '---\nvirtualDatabase: shop\noperations:\n  - { name: a, type: insert, entity: sales.nope, valueAssignments: [{ field: id, value: 1 }] }\n',
    'actions/field.yaml': '---\nvirtualDatabase: shop\noperations:\n  - { name: a, type: delete, entity: sales.orders, filters: [{ field: colour, operation: EQUAL, value: 1 }] }\n',
    'actions/dynamic.yaml': '---\nvirtualDatabase: shop\noperations:\n  - { name: a, type: delete, entity: "{{ table }}", filters: [{ field: id, operation: EQUAL, value: 1 }] }\n',
    'actions/unfiltered.yaml': '---\nvirtualDatabase: shop\noperations:\n  - { name: a, type: delete, entity: sales.orders }\n',
  });
  const byFile = (file: string) => errors.filter((line) => line.startsWith(`bundle/${file}`)).map((line) => line.replace(/^[^ ]+ /, ''));
  assert.match(byFile('queries/relation.yaml')[0] ?? '', /sales\.nope/);
  assert.match(byFile('queries/column.yaml')[0] ?? '', /shoe_size/);
  assert.equal(byFile('queries/vdb.yaml'), ['virtualDatabase warehouse is not loaded']);
  assert.equal(byFile('actions/entity.yaml'), ['operations[0] (a): entity sales.nope is not a relation of VDB shop (write <schema>.<relation>)']);
  assert.equal(byFile('actions/field.yaml'), ['operations[0] (a).filters[0]: colour is not a column of sales.orders']);
  assert.equal(byFile('actions/dynamic.yaml'), ['operations[0].entity: must be written literally in the definition, not come from a request value']);
  assert.equal(byFile('actions/unfiltered.yaml'), ['operations[0]: missing "filters"']);
});

const LOOPING_ACTION = `{# Every problem below must be reported at the line that holds it. #}
{% set reference = uuid() %}
---
virtualDatabase: shop
before:
  - name: customer_exists
    entity: sales.customers
    filters:
      - { field: idd, operation: EQUAL, value: {{ customerId }} }
    assertThat: exists
    message: "no such customer"
operations:
  - name: insert_order
    type: insert
    entity: sales.orders
    valueAssignments:
      - { field: customer_id, value: {{ customerId }} }
      - { field: colour, value: red }
    waitUntilEffective:
      maxSeconds: 5
      checkEverySeconds: 1
      byGetting:
        fields: [id, shade]
        usingFilterFieldValuePairs: { reference: {{ reference }} }
{% for line in fromYamlArrayToIterable(lines) %}
  - name: insert_line_{{ loop.index }}
    type: insert
    entity: sales.order_lines
    valueAssignments:
      - { field: order_id, value: 1 }
{% endfor %}
  - name: set_total
    type: update
    entity: sales.orderz
    valueAssignments:
      - { field: total, value: 1 }
    filters:
      - { field: id, operation: EQUAL, value: 1 }
`;

checks('every action definition problem names its file line, past loops and header lines', async () => {
  const { errors } = await problemsOf({
    'actions/looping.yaml': LOOPING_ACTION,
    'actions/shape.yaml': LOOPING_ACTION.replace('    filters:\n      - { field: id, operation: EQUAL, value: 1 }\n', '').replace('assertThat: exists', 'assertThat: maybe'),
  });
  assert.equal(errors, [
    'bundle/actions/looping.yaml:9: before[0] (customer_exists).filters[0]: idd is not a column of sales.customers',
    'bundle/actions/looping.yaml:18: operations[0] (insert_order).valueAssignments[1]: colour is not a column of sales.orders',
    'bundle/actions/looping.yaml:23: operations[0] (insert_order).waitUntilEffective.byGetting: shade is not a column of sales.orders',
    'bundle/actions/looping.yaml:34: operations[1] (set_total): entity sales.orderz is not a relation of VDB shop (write <schema>.<relation>)',
    'bundle/actions/shape.yaml:10: before[0].assertThat: must be one of exists, does_not_exist',
    'bundle/actions/shape.yaml:32: operations[1]: missing "filters"',
  ], errors.join('\n'));
});

checks('the demo bundle validates', async () => {
  const { demoDescriptors } = await import('../../support/test-service.js');
  const configFile = writeBundle(demoConfig({ descriptors: demoDescriptors }));
  const service = await prepareService({ configFile, env: {}, logDestination: quiet, datasources: { retail_db: await sharedPglite() } });
  await service.close();
  assert.equal(service.endpointWarnings, []);
});

checks.run();
