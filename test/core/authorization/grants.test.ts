import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { allows, effectiveGrants, type CallerGrants } from '../../../core/authorization/grants.js';
import type { VirtualDatabase } from '../../../core/plugin-api/vdb.js';
import { ANALYST, CLERK, openRetailVdb, principal, retailVdb } from './authorization-fixtures.js';

const matching = suite('effectiveGrants: a principal matched to the VDB data roles');

matching('a VDB without dataRoles gives every authenticated caller complete access', () => {
  const grants = effectiveGrants(openRetailVdb, principal());
  assert.is(grants.access, 'complete');
  assert.equal(allows(grants, 'delete', { schema: 'hr', relation: 'salaries' }), { allowed: true });
});

matching('a caller with one matching role gets that role grants, restricted', () => {
  assert.equal(effectiveGrants(retailVdb, principal('analyst', 'admin')), {
    access: 'restricted',
    roles: ['analyst'],
    grants: retailVdb.dataRoles![0]!.grants,
  });
});

matching('several matching roles give the union of their grants', () => {
  const grants = effectiveGrants(retailVdb, principal('clerk', 'analyst'));
  assert.equal(grants.roles, ['analyst', 'clerk']);
  assert.is(grants.grants.length, 4);
  assert.equal(allows(grants, 'insert', { schema: 'sales', relation: 'orders', columns: ['status'] }), { allowed: true });
});

matching('no matching role (or an empty dataRoles list) leaves access unavailable: nothing is allowed', () => {
  const noRole = effectiveGrants(retailVdb, principal('auditor'));
  assert.equal({ access: noRole.access, grants: noRole.grants }, { access: 'unavailable', grants: [] });
  const emptyRoles: VirtualDatabase = { ...retailVdb, dataRoles: [] };
  assert.is(effectiveGrants(emptyRoles, principal('analyst')).access, 'unavailable');
  assert.equal(allows(noRole, 'select', { schema: 'sales', relation: 'orders' }), {
    allowed: false, resource: 'sales.orders', reason: 'the caller has no data role on this VDB',
  });
});

matching('the same roles on the same VDB give the same object, so its index is built once', () => {
  assert.is(effectiveGrants(retailVdb, principal('analyst')), effectiveGrants(retailVdb, principal('analyst', 'guest')));
});

matching.run();

const checks = suite('allows: the fast check for code that builds its own SQL');

const grantsOf = (grants: CallerGrants['grants']): CallerGrants => ({ access: 'restricted', roles: ['test'], grants });

checks('a schema grant covers every relation and column of the schema, for the actions it lists', () => {
  assert.equal(allows(CLERK, 'update', { schema: 'sales', relation: 'customers', columns: ['email'] }), { allowed: true });
  assert.equal(allows(CLERK, 'select', { schema: 'hr', relation: 'salaries' }), {
    allowed: false, resource: 'hr.salaries', reason: 'select on hr.salaries is not granted',
  });
});

checks('a relation grant with columns covers only those columns and names the first column refused', () => {
  assert.equal(allows(ANALYST, 'select', { schema: 'sales', relation: 'customers', columns: ['id', 'region'] }), { allowed: true });
  assert.equal(allows(ANALYST, 'select', { schema: 'sales', relation: 'customers', columns: ['region', 'email', 'name'] }), {
    allowed: false, resource: 'sales.customers.email', reason: 'select on column email of sales.customers is not granted',
  });
});

checks('without columns, any grant of the action on the relation is enough (as count(*) needs)', () => {
  assert.equal(allows(ANALYST, 'select', { schema: 'sales', relation: 'customers' }), { allowed: true });
  assert.equal(allows(ANALYST, 'insert', { schema: 'sales', relation: 'customers' }), {
    allowed: false, resource: 'sales.customers', reason: 'insert on sales.customers is not granted',
  });
});

checks('a column resource grants that one column', () => {
  const grants = grantsOf([{ resource: 'sales.customers.region', allow: ['select', 'update'] }]);
  assert.equal(allows(grants, 'update', { schema: 'sales', relation: 'customers', columns: ['region'] }), { allowed: true });
  assert.equal(allows(grants, 'update', { schema: 'sales', relation: 'customers', columns: ['name'] }).allowed, false);
});

checks('delete removes whole rows: a grant on some columns does not allow it', () => {
  const grants = grantsOf([{ resource: 'sales.orders', allow: ['select', 'delete'], columns: ['id'] }]);
  assert.equal(allows(grants, 'delete', { schema: 'sales', relation: 'orders' }), {
    allowed: false, resource: 'sales.orders', reason: 'delete on sales.orders needs a grant on the whole relation, not on some columns',
  });
});

checks('a function is granted like a relation of its schema', () => {
  assert.equal(allows(CLERK, 'select', { schema: 'sales', relation: 'discount' }), { allowed: true });
  assert.equal(allows(ANALYST, 'select', { schema: 'sales', relation: 'discount' }).allowed, false);
});

checks('a grant whose resource has another shape grants nothing', () => {
  const grants = grantsOf([{ resource: 'sales.orders.id.extra', allow: ['select'] }, { resource: 'sales..orders', allow: ['select'] }]);
  assert.equal(allows(grants, 'select', { schema: 'sales', relation: 'orders', columns: ['id'] }).allowed, false);
});

checks.run();
