/**
 * The startup step between loading the VDBs and serving (docs/governed-execution.md): on every datasource
 * whose database enforces the data roles, the database roles of the VDBs' data roles are made to hold
 * exactly their grants (`roles.sync: true`), or checked to exist (`roles.sync: false`, the operator's).
 */
import type { Logger } from 'pino';
import type { ServiceConfig } from '../config/config-types.js';
import { createHmac, randomBytes } from 'node:crypto';
import type { PlannedRole, RoleChange, RoleState } from '../plugin-api/database-roles.js';
import { messageOf, StartupError, type StartupProblem } from '../plugin-api/errors.js';
import type { Datasource, LoginHoldings, RoleLogin, RoleLoginSecretSql, SqlExecutor } from '../plugin-api/sql-dialect.js';
import type { VirtualDatabase } from '../plugin-api/vdb.js';
import { describePrivilege, describeRoleChange, roleChanges } from './role-changes.js';
import { MAX_COMBINED_DATA_ROLES, planVdbRoles, type PlannedVdbRole, type VdbRolePlan } from './role-plan.js';

export interface RoleSyncOptions {
  vdbs: readonly VirtualDatabase[];
  config: ServiceConfig;
  open: (name: string) => Promise<Datasource>;
  /** False for `validate`: nothing is written, and datasources with `roles.sync: true` are left to `start`. */
  write: boolean;
  /**
   * Whether startup will reopen this datasource's session as a non-superuser (`Datasource.restrictSession`):
   * a superuser login is then no risk. Not for a datasource handed in by a test, which stays as it was given.
   */
  restricts: (name: string) => boolean;
  logger: Logger;
}

/** A datasource whose database roles were synced or checked. */
export interface GovernedDatasource {
  name: string;
  datasource: Datasource;
  /** Every planned database role: the roles the service's session may switch to. */
  roles: string[];
}

export interface RoleSyncOutcome {
  datasources: GovernedDatasource[];
  /** Drift, a superuser login, privileges PUBLIC holds: one warning each, logged at start, printed by `validate`. */
  warnings: StartupProblem[];
}

/**
 * Syncs or checks the database roles of every datasource the VDBs use.
 * @throws StartupError naming the datasource when a sync fails, and each missing role when the operator
 *   manages them.
 */
export async function syncDatabaseRoles(options: RoleSyncOptions): Promise<RoleSyncOutcome> {
  const { vdbs, config, logger } = options;
  const problems: StartupProblem[] = [];
  const warnings: StartupProblem[] = [];
  const datasources: GovernedDatasource[] = [];
  const names = [...new Set(vdbs.flatMap((vdb) => vdb.schemas.map((schema) => schema.datasource)))];
  for (const name of names) {
    const at = (message: string, severity: 'error' | 'warning') => ({ ...config.source.problem(['datasources', name], message), severity });
    const datasource = await options.open(name);
    const { dialect } = datasource;
    const plans = vdbs.map((vdb) => planVdbRoles(vdb, name, dialect.maxRoleNameBytes)).filter((plan): plan is VdbRolePlan => plan !== undefined);
    if (!datasource.dialect.capabilities.enforcesRoles) {
      if (plans.some((plan) => plan.vdb.dataRoles !== undefined)) {
        logger.warn({ datasource: name, adapter: datasource.dialect.id }, 'the database of this datasource does not enforce the data roles yet: the SQL analyzer is the only gate');
      }
      continue;
    }
    for (const plan of plans) {
      if (new Set(plan.vdb.dataRoles?.map((role) => role.name)).size > MAX_COMBINED_DATA_ROLES) {
        logger.warn({ vdb: plan.vdb.name, version: plan.vdb.version },
          `this VDB has more than ${MAX_COMBINED_DATA_ROLES} data roles: a caller holding several of them is refused (no database role combines them)`);
      }
    }
    const roles = dialect.rolePlan(plans.flatMap((plan) => plan.roles));
    const clash = clashes(plans);
    if (clash.length > 0) {
      problems.push(...clash.map((message) => at(message, 'error')));
      continue;
    }
    const sync = config.datasources[name]?.roles.sync ?? true;
    if (sync && !options.write) continue;
    const request = { roles: roles.map((role) => role.name), schemas: [...new Set(plans.flatMap((plan) => plan.schemas))] };
    const byLogin = dialect.loginPasswordSql() !== undefined;
    if (byLogin && !sync) {
      // the users are the operator's, each data role's login a datasource of its own
      const logins = operatorLogins(plans, config, name, datasource.dialect.id);
      problems.push(...logins.problems.map((message) => at(message, 'error')));
      // validate too: a login that cannot connect is an error before any caller meets it
      const holdings = logins.problems.length === 0 ? await useLogins(datasource, logins.logins, (message) => problems.push(at(message, 'error'))) : [];
      for (const holding of holdings) warnings.push(...loginDrift(roles, holding).map((message) => at(`datasources.${name}: ${message}`, 'warning')));
      datasources.push({ name, datasource, roles: request.roles });
      continue;
    }
    let state: RoleState;
    let changes: RoleChange[];
    let logins: RoleLogin[] = [];
    try {
      ({ state, changes, logins } = sync ? await writeRoles(datasource, roles, request) : { ...(await readRoleState(datasource, roles, request)), logins });
    } catch (error) {
      problems.push(at(`datasources.${name}: cannot ${sync ? 'sync' : 'read'} the database roles of the data roles: ${messageOf(error)}`, 'error'));
      continue;
    }
    if (sync) {
      for (const change of changes.filter((candidate) => candidate.kind === 'drop')) {
        const dropped = await dropRole(datasource, change);
        if (dropped !== undefined) warnings.push(at(`datasources.${name}: ${describeRoleChange(change)} and cannot be dropped: ${dropped}`, 'warning'));
      }
      if (logins.length > 0) await useLogins(datasource, logins, (message) => problems.push(at(message, 'error')));
      logger.info({ datasource: name, roles: roles.length, changes: changes.length }, 'database roles of the data roles synced');
    } else {
      for (const finding of operatorDrift(name, datasource, roles, changes)) (finding.severity === 'error' ? problems : warnings).push(at(finding.message, finding.severity));
    }
    for (const privilege of state.publicPrivileges) {
      warnings.push(at(`datasources.${name}: PUBLIC holds ${describePrivilege(privilege)}: every database role has it, whatever the grants; revoke it`, 'warning'));
    }
    if (state.login.superuser && !(datasource.restrictSession && options.restricts(name))) {
      warnings.push(at(`datasources.${name}: the service connects as ${state.login.name}, a superuser, which may leave any role its statements run as; `
        + 'connect as a login that is a member of the data roles only (docs/governed-execution.md)', 'warning'));
    }
    datasources.push({ name, datasource, roles: request.roles });
  }
  if (problems.length > 0) throw StartupError.of(problems);
  return { datasources, warnings };
}

/**
 * With `roles.sync: false`, what separates the operator's roles from the plan: a missing role, or a login
 * that cannot switch to one, stops startup; any other difference is a warning with the statement that
 * removes it (what `validate` prints).
 */
function operatorDrift(
  name: string, datasource: Datasource, roles: readonly PlannedVdbRole[], changes: readonly RoleChange[],
): { message: string; severity: 'error' | 'warning' }[] {
  const findings: { message: string; severity: 'error' | 'warning' }[] = [];
  const missing = new Set(changes.flatMap((change) => (change.kind === 'create' ? [change.role] : [])));
  for (const change of changes) {
    const fix = datasource.dialect.roleChangeSql(change).join('; ');
    // a missing role is one problem, not one per privilege it lacks
    if (change.kind !== 'create' && (missing.has(change.role) || (change.kind === 'grantMembership' && missing.has(change.memberOf)))) continue;
    if (change.kind === 'create') {
      findings.push({
        message: `datasources.${name}.roles.sync is false and database role ${change.role} (${standsFor(roles, change.role)}) does not exist: create it (docs/governed-execution.md) or set roles.sync: true`,
        severity: 'error',
      });
    } else if (change.kind === 'grantMembership' && change.login) {
      findings.push({ message: `datasources.${name}: the login ${change.role} cannot switch to database role ${change.memberOf}: ${fix}`, severity: 'error' });
    } else {
      findings.push({ message: `datasources.${name}: ${describeRoleChange(change)}; to match the grants: ${fix}`, severity: 'warning' });
    }
  }
  return findings;
}

interface RoleRequest {
  roles: string[];
  schemas: string[];
}

/**
 * In one transaction, after the lock that serializes the syncs of several instances: read, then change.
 * Where callers run on a login per role, each planned role's password is set (derived from the dialect's
 * `roleLoginSecret`, else random; kept in memory only). Roles to drop are left to `dropRole`, one transaction each, so that one that cannot go (it still
 * owns something, or holds privileges in another database) is a warning, not a failed sync.
 */
function writeRoles(
  datasource: Datasource, planned: readonly PlannedRole[], request: RoleRequest,
): Promise<{ state: RoleState; changes: RoleChange[]; logins: RoleLogin[] }> {
  const { dialect } = datasource;
  return datasource.transaction(async (transaction) => {
    const state = await dialect.readRoles(transaction, { ...request, lock: true });
    const changes = roleChanges(planned, state);
    for (const change of changes) {
      if (change.kind === 'drop') continue;
      for (const sql of dialect.roleChangeSql(change)) await transaction.query(sql, []);
    }
    const passwordSql = dialect.loginPasswordSql();
    const logins: RoleLogin[] = [];
    if (passwordSql !== undefined) {
      const secret = dialect.roleLoginSecret && await loginSecret(transaction, dialect.roleLoginSecret);
      for (const role of planned) {
        // derived from the database's secret: every instance sets the same password, none locks another out
        const password = secret === undefined ? randomBytes(24).toString('base64url') : createHmac('sha256', secret).update(role.name).digest('base64url');
        await transaction.query(passwordSql, [role.name, password]);
        logins.push({ role: role.name, password });
      }
    }
    for (const sql of dialect.roleSyncEndSql()) await transaction.query(sql, []);
    return { state, changes, logins };
  });
}

/** The secret the logins' passwords are derived from, created once in the database. */
async function loginSecret(transaction: SqlExecutor, sql: RoleLoginSecretSql): Promise<string> {
  for (const statement of sql.setupSql) await transaction.query(statement, []);
  await transaction.query(sql.keepSql, [randomBytes(32).toString('hex')]);
  const secret = (await transaction.query(sql.secretSql, [])).rows[0]?.['secret'];
  if (typeof secret !== 'string' || secret.length < 32) throw new Error('the secret of the data roles\' logins could not be read');
  return secret;
}

/** Drops a role whose privileges the sync revoked; the database's reason when it cannot. */
async function dropRole(datasource: Datasource, change: RoleChange): Promise<string | undefined> {
  try {
    await datasource.transaction(async (transaction) => {
      for (const sql of datasource.dialect.roleChangeSql(change)) await transaction.query(sql, []);
    });
    return undefined;
  } catch (error) {
    return messageOf(error);
  }
}

async function useLogins(datasource: Datasource, logins: readonly RoleLogin[], problem: (message: string) => void): Promise<LoginHoldings[]> {
  if (!datasource.useRoleLogins) {
    problem(`datasources.${datasource.name}: its dialect runs callers on a login per role, and the datasource cannot log in as one`);
    return [];
  }
  try {
    return await datasource.useRoleLogins(logins);
  } catch (error) {
    problem(`datasources.${datasource.name}: cannot log in as the database user of a data role: ${messageOf(error)}`);
    return [];
  }
}

/**
 * What separates an operator's login from its data role's grants, on what the login can see of itself
 * (schemas, relations, columns): drift `validate` and startup report. The login of a VDB without data roles
 * is the datasource's own, which holds more by design.
 */
function loginDrift(roles: readonly PlannedVdbRole[], holding: LoginHoldings): string[] {
  const planned = roles.find((role) => role.name === holding.role);
  if (!planned || planned.dataRoles.length === 0) return [];
  const visible = planned.privileges.filter((privilege) => privilege.kind === 'schema' || privilege.kind === 'relation' || privilege.kind === 'column');
  const held = new Set(holding.privileges.map((privilege) => JSON.stringify(privilege)));
  const changes = roleChanges([{ ...planned, privileges: visible }], {
    existing: [planned.name], memberships: [], publicPrivileges: [], ownedSequences: [], routines: [], marked: [],
    privileges: holding.privileges.map((privilege) => ({ role: planned.name, privilege })),
    login: { name: '', superuser: false, canBecome: [planned.name] },
  });
  const of = `${holding.account}, the login of ${standsFor(roles, planned.name)} of VDB ${planned.vdb}`;
  return changes.flatMap((change) => {
    if (change.kind === 'revoke') return [`${of}, holds ${describePrivilege(change.privilege)} beyond its grants`];
    // a column privilege MySQL keeps beside the relation's is no drift
    if (change.kind === 'grant' && !held.has(JSON.stringify(change.privilege))) return [`${of}, lacks ${describePrivilege(change.privilege)}`];
    return [];
  });
}

/**
 * With `roles.sync: false` where callers run on a login per role: each data role's `connection` names a
 * datasource of service.yaml, of the same adapter, whose login holds exactly the role's grants. A caller
 * holding several data roles has no such login and is refused.
 */
function operatorLogins(plans: readonly VdbRolePlan[], config: ServiceConfig, name: string, adapter: string): { logins: RoleLogin[]; problems: string[] } {
  const logins: RoleLogin[] = [];
  const problems: string[] = [];
  for (const plan of plans) {
    const [everyCaller] = plan.roles;
    if (plan.vdb.dataRoles === undefined && everyCaller) {
      // every caller of a VDB without data roles may do everything: the datasource's own login serves them
      logins.push({ role: everyCaller.name, connection: config.datasources[name]?.connection ?? {} });
      continue;
    }
    for (const role of plan.vdb.dataRoles ?? []) {
      const planned = plan.roles.find((candidate) => candidate.dataRoles.length === 1 && candidate.dataRoles[0] === role.name);
      if (!planned) continue;
      const what = `data role ${role.name} of VDB ${plan.vdb.name}`;
      const connection = role.connection === undefined ? undefined : config.datasources[role.connection];
      if (role.connection === undefined) {
        problems.push(`datasources.${name}.roles.sync is false and ${what} names no connection: set dataRoles[].connection to a datasource `
          + 'that logs in as a user holding its grants (docs/governed-execution.md), or set roles.sync: true');
      } else if (!connection || connection.adapter !== adapter) {
        problems.push(`${what}: connection ${role.connection} is not a datasource of service.yaml with adapter ${adapter}`);
      } else {
        logins.push({ role: planned.name, connection: connection.connection });
      }
    }
  }
  return { logins, problems };
}

async function readRoleState(datasource: Datasource, planned: readonly PlannedRole[], request: RoleRequest): Promise<{ state: RoleState; changes: RoleChange[] }> {
  const state = await datasource.dialect.readRoles(datasource, { ...request, lock: false });
  return { state, changes: roleChanges(planned, state) };
}

/** Two data roles (of one VDB or of two) whose database roles would have the same name. */
function clashes(plans: readonly VdbRolePlan[]): string[] {
  const seen = new Map<string, string>();
  const found: string[] = [];
  for (const plan of plans) {
    for (const role of plan.roles) {
      const what = describeRole(plan.vdb, role);
      const first = seen.get(role.name);
      if (first === undefined) seen.set(role.name, what);
      else found.push(`database role ${role.name} would stand for both ${first} and ${what}: set dataRoles[].dbRole to tell them apart`);
    }
  }
  return found;
}

function standsFor(roles: readonly PlannedVdbRole[], name: string): string {
  const role = roles.find((candidate) => candidate.name === name);
  return role === undefined ? name : role.dataRoles.length === 0 ? 'every caller of its VDB' : `data role${role.dataRoles.length > 1 ? 's' : ''} ${role.dataRoles.join(', ')}`;
}

function describeRole(vdb: VirtualDatabase, role: PlannedVdbRole): string {
  const of = `VDB ${vdb.name} version ${vdb.version}`;
  return role.dataRoles.length === 0 ? of : `data role${role.dataRoles.length > 1 ? 's' : ''} ${role.dataRoles.join(', ')} of ${of}`;
}
