import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { effectiveGrants } from '../../../core/authorization/grants.js';
import { roleChanges } from '../../../core/authorization/role-changes.js';
import { callerRole, planVdbRoles } from '../../../core/authorization/role-plan.js';
import type { RoleState } from '../../../core/plugin-api/database-roles.js';
import type { DataRole, VirtualDatabase } from '../../../core/plugin-api/vdb.js';
import { openRetailVdb, principal, retailVdb } from './authorization-fixtures.js';

const plan = suite('role plan: one database role per data role, holding exactly its grants');

const rolesOf = (vdb: VirtualDatabase) => planVdbRoles(vdb, 'retail_db')?.roles ?? [];
const privilegesOf = (vdb: VirtualDatabase, name: string) => rolesOf(vdb).find((role) => role.name === name)?.privileges
  .map((privilege) => [
    privilege.kind, privilege.action, privilege.schema, 'relation' in privilege ? privilege.relation : '', 'routine' in privilege ? privilege.routine : '',
    'column' in privilege ? privilege.column : '',
  ].filter((part) => part !== '').join(' '));

plan('names: vdb_<vdb>_v<version>_<role>, lower case, other characters as _, a combination per role set', () => {
  assert.equal(rolesOf(retailVdb).map((role) => [role.name, role.memberOf]), [
    ['vdb_retail_v1_analyst', []],
    ['vdb_retail_v1_clerk', []],
    ['vdb_retail_v1_analyst_and_clerk', ['vdb_retail_v1_analyst', 'vdb_retail_v1_clerk']],
  ]);
  const odd: VirtualDatabase = { ...retailVdb, name: 'Retail-EU', version: '2.1', dataRoles: [{ name: 'Field Sales', grants: [] }] };
  assert.equal(rolesOf(odd).map((role) => role.name), ['vdb_retail_eu_v2_1_field_sales']);
  assert.equal(rolesOf(openRetailVdb).map((role) => role.name), ['vdb_retail_open_v1']);
});

plan('a name over 63 bytes is cut and suffixed with a hash, so two long names stay apart; dbRole is taken as written', () => {
  const long = (role: string): VirtualDatabase => ({ ...retailVdb, name: 'x'.repeat(40), dataRoles: [{ name: role, grants: [] }] });
  const [first] = rolesOf(long('regional_analyst_north'));
  const [second] = rolesOf(long('regional_analyst_south'));
  assert.is(Buffer.byteLength(first?.name ?? ''), 63);
  assert.match(first?.name ?? '', /^vdb_x{40}_v1_region_[0-9a-f]{8}$/);
  assert.is.not(first?.name, second?.name);
  const custom: VirtualDatabase = { ...retailVdb, dataRoles: [{ name: 'analyst', dbRole: 'Reporting_Reader', grants: [] }] };
  assert.equal(rolesOf(custom).map((role) => role.name), ['Reporting_Reader']);
});

plan('privileges follow grants.ts: columns where the grant names them, whole relations otherwise, usage on every schema', () => {
  assert.equal(privilegesOf(retailVdb, 'vdb_retail_v1_analyst'), [
    'schema usage sales', 'schema usage hr',
    'column select sales customers id', 'column select sales customers region',
    'relation select sales orders',
    'relation select sales customer_totals',
  ]);
  assert.equal(privilegesOf(retailVdb, 'vdb_retail_v1_clerk')?.filter((line) => line.includes('orders')),
    ['relation select sales orders', 'relation insert sales orders', 'relation update sales orders', 'relation delete sales orders']);
  assert.equal(privilegesOf(retailVdb, 'vdb_retail_v1_analyst_and_clerk'), [], 'a combination inherits, holding nothing itself');
  assert.is(privilegesOf(openRetailVdb, 'vdb_retail_open_v1')?.filter((line) => line.startsWith('relation')).length, 5 * 4);
});

plan('column resources, schema grants with columns, delete on columns, unknown names: as the analyzer reads them', () => {
  const roles: DataRole[] = [{
    name: 'auditor',
    grants: [
      { resource: 'sales.customers.email', allow: ['select', 'update'] },
      { resource: 'sales.orders.total', allow: ['select'], columns: ['status'] },
      { resource: 'hr', allow: ['select', 'delete'], columns: ['amount', 'nowhere'] },
      { resource: 'sales.discount', allow: ['select'] },
      { resource: 'sales.missing', allow: ['select'] },
    ],
  }];
  assert.equal(privilegesOf({ ...retailVdb, dataRoles: roles }, 'vdb_retail_v1_auditor'), [
    'schema usage sales', 'schema usage hr',
    'column select sales customers email', 'column update sales customers email',
    'column select hr salaries amount',
    'routine execute sales discount', 'routine execute hr bonus',
  ]);
});

plan('combinations: every subset of two or more, up to 5 data roles; with more, none and a caller of several roles has no role', () => {
  const many = (count: number): VirtualDatabase => ({
    ...retailVdb, dataRoles: Array.from({ length: count }, (_, index) => ({ name: `r${index}`, grants: [] })),
  });
  assert.is(rolesOf(many(5)).length, 5 + 26);
  assert.is(rolesOf(many(6)).length, 6);
  assert.is(callerRole(many(5), effectiveGrants(many(5), principal('r3', 'r1'))), 'vdb_retail_v1_r1_and_r3');
  const six = many(6);
  assert.is(callerRole(six, effectiveGrants(six, principal('r1'))), 'vdb_retail_v1_r1');
  assert.is(callerRole(six, effectiveGrants(six, principal('r1', 'r2'))), undefined);
});

plan('the caller\'s role: by their data roles, the VDB\'s role without dataRoles, none without a data role', () => {
  assert.is(callerRole(retailVdb, effectiveGrants(retailVdb, principal('analyst'))), 'vdb_retail_v1_analyst');
  assert.is(callerRole(retailVdb, effectiveGrants(retailVdb, principal('clerk', 'analyst', 'admin'))), 'vdb_retail_v1_analyst_and_clerk');
  assert.is(callerRole(openRetailVdb, effectiveGrants(openRetailVdb, principal())), 'vdb_retail_open_v1');
  assert.is(callerRole(retailVdb, effectiveGrants(retailVdb, principal('visitor'))), undefined);
  assert.is(planVdbRoles({ ...retailVdb, dataRoles: [] }, 'retail_db'), undefined);
  assert.is(planVdbRoles(retailVdb, 'other_db'), undefined);
});

plan.run();

const changes = suite('role changes: what separates the database from the plan');

const EMPTY: RoleState = {
  existing: [], memberships: [], privileges: [], publicPrivileges: [], ownedSequences: [], routines: [], marked: [],
  login: { name: 'service', superuser: true, canBecome: [] },
};
const lines = (state: RoleState, vdb: VirtualDatabase = retailVdb) => roleChanges(rolesOf(vdb), state).map((change) => {
  switch (change.kind) {
    case 'create': return `create ${change.role}${change.inherit ? ' inherit' : ''}`;
    case 'grantMembership': case 'revokeMembership': return `${change.kind} ${change.role} -> ${change.memberOf}`;
    case 'drop': return `drop ${change.role}`;
    default: return `${change.kind} ${change.role} ${change.privilege.kind} ${change.privilege.action} ${'column' in change.privilege ? change.privilege.column : ''}`.trim();
  }
});

changes('a new database: roles created (combinations inheriting), memberships granted, privileges granted', () => {
  const all = lines(EMPTY);
  assert.equal(all.slice(0, 5), [
    'create vdb_retail_v1_analyst', 'create vdb_retail_v1_clerk', 'create vdb_retail_v1_analyst_and_clerk inherit',
    'grantMembership vdb_retail_v1_analyst_and_clerk -> vdb_retail_v1_analyst', 'grantMembership vdb_retail_v1_analyst_and_clerk -> vdb_retail_v1_clerk',
  ]);
  assert.ok(all.includes('grant vdb_retail_v1_analyst column select id'));
  assert.not.ok(all.some((line) => line.startsWith('revoke')));
});

changes('in sync: nothing to do; beyond the grants: revoked, and columns a revoked relation privilege took are granted again', () => {
  const planned = rolesOf(retailVdb);
  const synced: RoleState = {
    ...EMPTY,
    existing: planned.map((role) => role.name),
    memberships: planned.flatMap((role) => role.memberOf.map((memberOf) => ({ role: role.name, memberOf }))),
    // a routine's privilege as the database reports it: on each overload
    privileges: planned.flatMap((role) => role.privileges.map((privilege) => ({
      role: role.name, privilege: privilege.kind === 'routine' ? { ...privilege, arguments: 'amount numeric' } : privilege,
    }))),
    routines: [{ schema: 'sales', routine: 'discount', arguments: 'amount numeric' }, { schema: 'hr', routine: 'bonus', arguments: 'amount numeric' }],
  };
  assert.equal(lines(synced), []);
  const drifted: RoleState = {
    ...synced,
    memberships: [...synced.memberships, { role: 'vdb_retail_v1_analyst', memberOf: 'pg_read_all_data' }],
    privileges: [
      ...synced.privileges,
      { role: 'vdb_retail_v1_analyst', privilege: { kind: 'relation', action: 'select', schema: 'sales', relation: 'customers' } },
      { role: 'vdb_retail_v1_analyst', privilege: { kind: 'column', action: 'select', schema: 'sales', relation: 'customers', column: 'email' } },
      { role: 'vdb_retail_v1_analyst_and_clerk', privilege: { kind: 'relation', action: 'truncate', schema: 'sales', relation: 'orders' } },
    ],
  };
  assert.equal(lines(drifted), [
    'revoke vdb_retail_v1_analyst relation select',
    'revoke vdb_retail_v1_analyst column select email',
    'revoke vdb_retail_v1_analyst_and_clerk relation truncate',
    'grant vdb_retail_v1_analyst column select id',
    'grant vdb_retail_v1_analyst column select region',
    'revokeMembership vdb_retail_v1_analyst -> pg_read_all_data',
  ]);
});

changes('inserting needs the usage of the sequences that fill the relation; a login that is no superuser joins each role', () => {
  const state: RoleState = {
    ...EMPTY,
    ownedSequences: [{ schema: 'sales', relation: 'orders', sequenceSchema: 'sales', sequence: 'orders_id_seq' }],
    login: { name: 'authenticator', superuser: false, canBecome: ['vdb_retail_v1_analyst'] },
  };
  const all = lines(state);
  assert.ok(all.includes('grant vdb_retail_v1_clerk sequence usage'));
  assert.not.ok(all.some((line) => line.startsWith('grant vdb_retail_v1_analyst sequence')), 'the analyst only reads orders');
  assert.equal(all.filter((line) => line.startsWith('grantMembership authenticator')), [
    'grantMembership authenticator -> vdb_retail_v1_clerk', 'grantMembership authenticator -> vdb_retail_v1_analyst_and_clerk',
  ]);
});

changes('a function the grants allow is granted on each overload; roles the sync made for a data role gone are revoked and dropped, others kept', () => {
  const clerk = 'vdb_retail_v1_clerk';
  const state: RoleState = {
    ...EMPTY,
    routines: [
      { schema: 'sales', routine: 'discount', arguments: 'amount numeric' },
      { schema: 'sales', routine: 'discount', arguments: 'amount numeric, rate numeric' },
    ],
    marked: [
      { role: clerk, vdb: 'retail' },
      { role: 'vdb_retail_v0_clerk', vdb: 'retail' },
      { role: 'vdb_other_v1_reader', vdb: 'other' },
    ],
    privileges: [
      { role: 'vdb_retail_v0_clerk', privilege: { kind: 'relation', action: 'select', schema: 'sales', relation: 'orders' } },
      { role: 'vdb_other_v1_reader', privilege: { kind: 'relation', action: 'select', schema: 'sales', relation: 'orders' } },
      { role: 'vdb_retail_v1_analyst', privilege: { kind: 'routine', action: 'execute', schema: 'sales', routine: 'discount', arguments: 'amount numeric' } },
    ],
  };
  const all = roleChanges(rolesOf(retailVdb), state);
  const routineGrants = all.flatMap((change) => (change.kind === 'grant' && change.privilege.kind === 'routine' && change.role === clerk ? [change.privilege.arguments] : []));
  assert.equal(routineGrants, ['amount numeric', 'amount numeric, rate numeric']);
  assert.ok(all.some((change) => change.kind === 'revoke' && change.role === 'vdb_retail_v1_analyst' && change.privilege.kind === 'routine'),
    'the analyst has no grant on sales.discount');
  assert.equal(lines(state).filter((line) => /v0_clerk|other/.test(line)), ['revoke vdb_retail_v0_clerk relation select', 'drop vdb_retail_v0_clerk']);
  assert.is(lines(state).at(-1), 'drop vdb_retail_v0_clerk', 'dropped last, after every revoke');
});

changes.run();
