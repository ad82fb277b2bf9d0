/**
 * The database roles that enforce the data roles (docs/governed-execution.md), in the terms the core plans
 * them and a dialect reads and writes them. The core plans which roles hold what
 * (core/authorization/role-plan.ts); a dialect whose `capabilities.enforcesRoles` is true reads what its
 * database holds (`DialectBase.readRoles`) and writes each change (`DialectBase.roleChangeSql`).
 */

/**
 * One privilege of a role. `action` is lower-case: `select`, `insert`, `update`, `delete` as the grants
 * give them, and whatever else the database reports (`truncate`, `references`, `trigger`, `create`…), which
 * no plan holds and a sync revokes.
 */
export type RolePrivilege =
  | { kind: 'schema'; action: string; schema: string }
  | { kind: 'relation'; action: string; schema: string; relation: string }
  | { kind: 'column'; action: string; schema: string; relation: string; column: string }
  | { kind: 'sequence'; action: string; schema: string; sequence: string }
  /**
   * A function, aggregate or procedure (`execute`). In a plan `arguments` is absent: every overload of the
   * name (`RoleState.routines`); as read from the database, what tells one from another in a GRANT: the
   * identity arguments on PostgreSQL (`customer_id integer`), the kind on MySQL (`function`, `procedure`).
   */
  | { kind: 'routine'; action: string; schema: string; routine: string; arguments?: string };

/** A database role as the core wants it. */
export interface PlannedRole {
  /** The role's name, as the database spells it. */
  name: string;
  /**
   * The VDB it serves. A role the sync creates is marked with it where the database can (PostgreSQL: a
   * comment), so that a later sync may drop it once no data role of that VDB stands for it.
   */
  vdb: string;
  /**
   * The roles whose privileges it inherits: the data roles a combination role stands for (a caller with
   * several data roles runs as it); empty for the others, which hold their privileges directly.
   */
  memberOf: readonly string[];
  /**
   * Everything it holds directly in the database (sequences aside: the usage an insert needs is derived
   * from the database's `ownedSequences`); whatever else it holds on schemas and relations is revoked.
   */
  privileges: readonly RolePrivilege[];
}

/** The plan for a database without schema usage (SQL Server, Oracle): a privilege on the object is enough. */
export function withoutSchemaPrivileges<T extends PlannedRole>(roles: readonly T[]): T[] {
  return roles.map((role) => ({ ...role, privileges: role.privileges.filter((privilege) => privilege.kind !== 'schema') }));
}

/** What `DialectBase.readRoles` reads. */
export interface RoleStateRequest {
  /** The planned roles' names. */
  roles: readonly string[];
  /** The schemas of the VDBs: what PUBLIC holds there is reported, and the sequences their tables use. */
  schemas: readonly string[];
  /**
   * Take the lock that makes the syncs of several service instances run one after another, held until the
   * transaction `readRoles` runs in ends.
   */
  lock: boolean;
}

/** What the database holds for the planned roles. */
export interface RoleState {
  /** The planned roles that exist. */
  existing: readonly string[];
  /** Direct memberships of the planned roles: `role` is a member of `memberOf`. */
  memberships: readonly { role: string; memberOf: string }[];
  /** What the planned roles hold on the schemas, relations, columns and sequences of the database. */
  privileges: readonly { role: string; privilege: RolePrivilege }[];
  /** What PUBLIC (every role) holds on relations of the planned schemas: no data role can be denied it. */
  publicPrivileges: readonly RolePrivilege[];
  /** Sequences an insert into the relation takes values from (PostgreSQL `serial`): inserting needs their usage. */
  ownedSequences: readonly { schema: string; relation: string; sequenceSchema: string; sequence: string }[];
  /** The routines of the planned schemas, each overload once: a plan's `routine` privilege is held on each. */
  routines: readonly { schema: string; routine: string; arguments: string }[];
  /**
   * Roles the sync created (its mark, see `PlannedRole.vdb`), planned or not, with the VDB they served: a
   * sync drops those of the VDBs it plans that no longer stand for a data role. Empty where the database
   * keeps no mark.
   */
  marked: readonly { role: string; vdb: string }[];
  /** The login the service connects as. */
  login: {
    name: string;
    superuser: boolean;
    /** The planned roles it may switch to (superusers: all). */
    canBecome: readonly string[];
  };
}

/** One change that brings the database to the plan. */
export type RoleChange =
  | {
    kind: 'create';
    role: string;
    /** Whether the role inherits the privileges of the roles it is a member of: only combination roles do. */
    inherit: boolean;
    /** The VDB it serves: its mark (`PlannedRole.vdb`). */
    vdb: string;
  }
  /** A role the sync created for a VDB it still plans, which no data role stands for any more; its privileges are revoked first. */
  | { kind: 'drop'; role: string }
  | { kind: 'grant' | 'revoke'; role: string; privilege: RolePrivilege }
  | {
    kind: 'grantMembership' | 'revokeMembership';
    /** The member. */
    role: string;
    /** The role it becomes (or stops being) a member of. */
    memberOf: string;
    /**
     * The member is the service's login, which must be able to run as the role (PostgreSQL: a member;
     * SQL Server: `IMPERSONATE`; Oracle: a proxy); otherwise a combination role joining a data role.
     */
    login?: boolean;
  };
