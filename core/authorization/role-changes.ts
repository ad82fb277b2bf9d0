/**
 * What separates the database from the planned roles: the changes a sync makes, the drift `validate` reports
 * (docs/governed-execution.md). Pure: the dialect reads the state and writes each change.
 */
import type { PlannedRole, RoleChange, RolePrivilege, RoleState } from '../plugin-api/database-roles.js';

/**
 * The changes, in the order they must run: roles created, memberships granted, privileges revoked, then
 * granted (revoking a relation's privilege also revokes that privilege on its columns, so the columns the
 * plan keeps are granted again), memberships revoked, and last the roles dropped: those the sync created
 * (`RoleState.marked`) for a VDB it plans that no planned role is any more, once their privileges are revoked.
 */
export function roleChanges(planned: readonly PlannedRole[], state: RoleState): RoleChange[] {
  const existing = new Set(state.existing);
  const creates: RoleChange[] = planned
    .filter((role) => !existing.has(role.name))
    .map((role) => ({ kind: 'create', role: role.name, inherit: role.memberOf.length > 0, vdb: role.vdb }));
  const plannedNames = new Set(planned.map((role) => role.name));
  const plannedVdbs = new Set(planned.map((role) => role.vdb));
  const stale = [...new Set(state.marked.filter((mark) => plannedVdbs.has(mark.vdb) && !plannedNames.has(mark.role)).map((mark) => mark.role))];
  const staleRevokes: RoleChange[] = stale.flatMap((role) => state.privileges
    .filter((entry) => entry.role === role)
    .map(({ privilege }): RoleChange => ({ kind: 'revoke', role, privilege })));
  const drops: RoleChange[] = stale.map((role) => ({ kind: 'drop', role }));

  const memberships = new Set(state.memberships.map(({ role, memberOf }) => pairKey(role, memberOf)));
  const wantedMemberships = new Set(planned.flatMap((role) => role.memberOf.map((memberOf) => pairKey(role.name, memberOf))));
  const grantsOfMembership: RoleChange[] = planned.flatMap((role) => role.memberOf
    .filter((memberOf) => !memberships.has(pairKey(role.name, memberOf)))
    .map((memberOf): RoleChange => ({ kind: 'grantMembership', role: role.name, memberOf })));
  // a login that is no superuser can switch only to the roles it is a member of
  if (!state.login.superuser) {
    const reachable = new Set(state.login.canBecome);
    for (const role of planned) {
      if (!reachable.has(role.name)) grantsOfMembership.push({ kind: 'grantMembership', role: state.login.name, memberOf: role.name, login: true });
    }
  }
  const revokesOfMembership: RoleChange[] = state.memberships
    .filter(({ role, memberOf }) => plannedNames.has(role) && !wantedMemberships.has(pairKey(role, memberOf)))
    .map(({ role, memberOf }) => ({ kind: 'revokeMembership', role, memberOf }));

  const revokes: RoleChange[] = [];
  const grants: RoleChange[] = [];
  for (const role of planned) {
    const wanted = new Map(wantedPrivileges(role, state).map((privilege) => [privilegeKey(privilege), privilege]));
    const held = new Map(state.privileges.filter((entry) => entry.role === role.name).map(({ privilege }) => [privilegeKey(privilege), privilege]));
    const revokedWhole = new Set<string>();
    for (const [key, privilege] of held) {
      if (wanted.has(key)) continue;
      revokes.push({ kind: 'revoke', role: role.name, privilege });
      if (privilege.kind === 'relation') revokedWhole.add(`${privilege.action}\u0000${privilege.schema}\u0000${privilege.relation}`);
    }
    for (const [key, privilege] of wanted) {
      const lostWithRelation = privilege.kind === 'column' && revokedWhole.has(`${privilege.action}\u0000${privilege.schema}\u0000${privilege.relation}`);
      if (!held.has(key) || lostWithRelation) grants.push({ kind: 'grant', role: role.name, privilege });
    }
  }
  return [...creates, ...grantsOfMembership, ...revokes, ...staleRevokes, ...grants, ...revokesOfMembership, ...drops];
}

/** A sentence for one change, as drift: what the database lacks or holds beyond the grants. */
export function describeRoleChange(change: RoleChange): string {
  switch (change.kind) {
    case 'create':
      return `database role ${change.role} does not exist`;
    case 'grantMembership':
      return `role ${change.role} is not a member of ${change.memberOf}`;
    case 'revokeMembership':
      return `role ${change.role} is a member of ${change.memberOf}, which its plan does not hold`;
    case 'grant':
      return `role ${change.role} lacks ${describePrivilege(change.privilege)}`;
    case 'revoke':
      return `role ${change.role} holds ${describePrivilege(change.privilege)} beyond its grants`;
    case 'drop':
      return `role ${change.role} was created for a data role that no longer exists`;
  }
}

export function describePrivilege(privilege: RolePrivilege): string {
  switch (privilege.kind) {
    case 'schema':
      return `${privilege.action} on schema ${privilege.schema}`;
    case 'relation':
      return `${privilege.action} on ${privilege.schema}.${privilege.relation}`;
    case 'column':
      return `${privilege.action} on column ${privilege.schema}.${privilege.relation}.${privilege.column}`;
    case 'sequence':
      return `${privilege.action} on sequence ${privilege.schema}.${privilege.sequence}`;
    case 'routine':
      return `${privilege.action} on function ${privilege.schema}.${privilege.routine}${privilege.arguments === undefined ? '' : `(${privilege.arguments})`}`;
  }
}

/**
 * The plan's privileges, a routine's on each of its overloads, plus the usage of the sequences that fill the
 * columns of the relations it may insert into.
 */
function wantedPrivileges(role: PlannedRole, state: RoleState): RolePrivilege[] {
  const privileges = role.privileges.flatMap((privilege): RolePrivilege[] => (privilege.kind !== 'routine' || privilege.arguments !== undefined
    ? [privilege]
    : state.routines
      .filter((routine) => routine.schema === privilege.schema && routine.routine === privilege.routine)
      .map((routine) => ({ ...privilege, arguments: routine.arguments }))));
  const inserts = new Set<string>();
  for (const privilege of role.privileges) {
    if ((privilege.kind === 'relation' || privilege.kind === 'column') && privilege.action === 'insert') inserts.add(pairKey(privilege.schema, privilege.relation));
  }
  const sequences = state.ownedSequences
    .filter((owned) => inserts.has(pairKey(owned.schema, owned.relation)))
    .map((owned): RolePrivilege => ({ kind: 'sequence', action: 'usage', schema: owned.sequenceSchema, sequence: owned.sequence }));
  return [...privileges, ...sequences];
}

function privilegeKey(privilege: RolePrivilege): string {
  switch (privilege.kind) {
    case 'schema':
      return ['schema', privilege.action, privilege.schema].join('\u0000');
    case 'relation':
      return ['relation', privilege.action, privilege.schema, privilege.relation].join('\u0000');
    case 'column':
      return ['column', privilege.action, privilege.schema, privilege.relation, privilege.column].join('\u0000');
    case 'sequence':
      return ['sequence', privilege.action, privilege.schema, privilege.sequence].join('\u0000');
    case 'routine':
      return ['routine', privilege.action, privilege.schema, privilege.routine, privilege.arguments ?? ''].join('\u0000');
  }
}

function pairKey(first: string, second: string): string {
  return `${first}\u0000${second}`;
}
