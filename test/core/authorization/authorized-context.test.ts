import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { authorizedContext } from '../../../core/authorization/authorized-context.js';
import { effectiveGrants, type CallerGrants } from '../../../core/authorization/grants.js';
import { ANALYST, ANYONE, CLERK, openRetailVdb, principal, retailVdb } from './authorization-fixtures.js';

const context = suite('authorizedContext: the catalog a caller may plan with');

const shape = (grants: CallerGrants, vdb = retailVdb) => {
  const derived = authorizedContext(vdb, grants);
  return {
    access: derived.access,
    relations: Object.fromEntries(derived.relations.map((relation) => [
      `${relation.schema}.${relation.name}`,
      { columns: relation.columns.map((column) => column.name), primaryKey: relation.primaryKey, foreignKeys: relation.foreignKeys.map((key) => key.name) },
    ])),
    functions: derived.functions.map((fn) => `${fn.schema}.${fn.name}`),
  };
};

context('complete access shows the whole catalog, identified by VDB and catalog revision', () => {
  const derived = authorizedContext(openRetailVdb, ANYONE);
  assert.equal({ vdb: derived.vdb, catalogRevision: derived.catalogRevision, access: derived.access }, {
    vdb: { name: 'retail-open', version: '1' }, catalogRevision: 'sha256:retail-catalog-1', access: 'complete',
  });
  assert.equal(derived.relations.map((relation) => `${relation.schema}.${relation.name}`), [
    'sales.customers', 'sales.orders', 'sales.order_lines', 'sales.customer_totals', 'hr.salaries',
  ]);
  assert.equal(derived.relations[0], {
    schema: 'sales', name: 'customers', kind: 'table', primaryKey: ['id'], foreignKeys: [],
    columns: [
      { name: 'id', logicalType: 'integer', nullable: false },
      { name: 'email', logicalType: 'string', nullable: false },
      { name: 'name', logicalType: 'string', nullable: false },
      { name: 'region', logicalType: 'string', nullable: true },
    ],
    datasource: 'retail_db',
  });
  assert.equal(derived.functions, [
    { schema: 'sales', name: 'discount', kind: 'function', returnType: 'numeric' },
    { schema: 'hr', name: 'bonus', kind: 'function', returnType: 'numeric' },
  ]);
});

context('restricted access shows only selectable relations and columns; keys only when both ends are visible', () => {
  assert.equal(shape(ANALYST), {
    access: 'restricted',
    relations: {
      'sales.customers': { columns: ['id', 'region'], primaryKey: ['id'], foreignKeys: [] },
      'sales.orders': { columns: ['id', 'customer_id', 'total', 'status'], primaryKey: ['id'], foreignKeys: ['orders_customer_fk'] },
      'sales.customer_totals': { columns: ['customer_id', 'region', 'total'], primaryKey: [], foreignKeys: [] },
    },
    functions: [],
  });
  assert.equal(shape(CLERK).relations['sales.order_lines'], {
    columns: ['order_id', 'line_no', 'product', 'quantity'], primaryKey: ['order_id', 'line_no'], foreignKeys: ['order_lines_order_fk'],
  });
  assert.equal(shape(CLERK).functions, ['sales.discount']);
});

context('a key with a hidden column is left out, and so is a foreign key to it', () => {
  const grants: CallerGrants = {
    access: 'restricted',
    roles: ['marketing'],
    grants: [{ resource: 'sales.customers', allow: ['select'], columns: ['email', 'region'] }, { resource: 'sales.orders', allow: ['select'] }],
  };
  const derived = shape(grants);
  assert.equal(derived.relations['sales.customers'], { columns: ['email', 'region'], primaryKey: [], foreignKeys: [] });
  assert.equal(derived.relations['sales.orders']?.foreignKeys, []);
});

context('data roles whose grants select every column of every relation are complete; one column less is restricted', () => {
  const everything: CallerGrants = {
    access: 'restricted',
    roles: ['auditor'],
    grants: [{ resource: 'sales', allow: ['select'] }, { resource: 'hr.salaries', allow: ['select'] }],
  };
  assert.is(authorizedContext(retailVdb, everything).access, 'complete');
  const columns = retailVdb.catalog.relations.find((relation) => relation.schema === 'hr' && relation.name === 'salaries')?.columns.map((column) => column.name) ?? [];
  const allButOne: CallerGrants = {
    ...everything,
    grants: [{ resource: 'sales', allow: ['select'] }, { resource: 'hr.salaries', allow: ['select'], columns: columns.slice(1) }],
  };
  assert.is(authorizedContext(retailVdb, allButOne).access, 'restricted');
  const writesOnly: CallerGrants = { ...everything, grants: [{ resource: 'sales', allow: ['select'] }, { resource: 'hr', allow: ['insert', 'update'] }] };
  assert.is(authorizedContext(retailVdb, writesOnly).access, 'restricted');
  // the clerk may write sales but not read hr: restricted
  assert.is(shape(CLERK).access, 'restricted');
});

context('unavailable access shows nothing', () => {
  assert.equal(shape(effectiveGrants(retailVdb, principal('auditor'))), { access: 'unavailable', relations: {}, functions: [] });
});

context('the context holds no credential or identity and is derived once, frozen', () => {
  const grants = effectiveGrants(retailVdb, { subject: 'alice@example.com', roles: ['analyst'], scheme: 'bearer' });
  const derived = authorizedContext(retailVdb, grants);
  assert.equal(Object.keys(derived), ['vdb', 'catalogRevision', 'access', 'relations', 'functions']);
  const text = JSON.stringify(derived);
  for (const secret of ['alice', 'bearer', 'analyst']) assert.not.ok(text.includes(secret), `the context mentions ${secret}`);
  assert.is(authorizedContext(retailVdb, grants), derived);
  assert.ok(Object.isFrozen(derived.relations[0]?.columns));
});

context.run();
