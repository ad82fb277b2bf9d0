import type { FederationConfig, SqlConfig } from '../config/config-types.js';
import { InputError } from '../plugin-api/errors.js';
import type { Datasource, SqlDialect } from '../plugin-api/sql-dialect.js';
import type { VdbRegistry } from './vdb-registry.js';
import type { VdbRelation, VirtualDatabase } from '../plugin-api/vdb.js';
import type { RenderContext, RequestContext } from '../plugin-api/template-engine.js';

/** A VDB a definition names, with the datasources its statements run on. */
export interface VdbHandle {
  vdb: VirtualDatabase;
  /** The VDB's default datasource. */
  datasource: Datasource;
  /** The default datasource's dialect: statements of the VDB are written, scanned and authorized in it. */
  dialect: SqlDialect;
  /**
   * The dialect a statement over several of its datasources is authorized in: PostgreSQL's text
   * (`capabilities.postgresqlText`), the default's own when it is, else an installed dialect whose text it is;
   * the default's when none is installed (docs/federation.md#doors).
   */
  federationDialect: SqlDialect;
  /** The datasource holding a relation of the VDB. */
  datasourceOf(relation: VdbRelation): Datasource;
  /**
   * Where a statement reading these relations runs: their datasource, or the VDB's default when it reads
   * none. Undefined when they live in two datasources: the statement is federated (core/federation/).
   */
  datasourceFor(relations: readonly { datasource: string }[]): Datasource | undefined;
  /** The relation `<schema>.<name>`; undefined when the catalog has none. */
  relation(entity: string): VdbRelation | undefined;
  /** The service's bounds on the statements run for the VDB (`sql` of service.yaml), which the authorizer applies. */
  sqlBounds: SqlConfig;
  /** How its statements over several datasources run (`federation` of service.yaml). */
  federation: FederationConfig;
  /** The render context of a request: `_context` plus the `| identifier` check against this catalog. */
  renderContext(context: RequestContext): RenderContext;
}

/**
 * Finds the VDB a definition or a task names (`virtualDatabase` + optional `virtualDatabaseVersion`): without
 * a version, the one version of that name; several make the reference ambiguous. Each handle is made once
 * per name and version.
 */
export class VdbHandles {
  private readonly made = new Map<string, VdbHandle | string>();

  private constructor(
    private readonly vdbs: VdbRegistry,
    private readonly datasources: ReadonlyMap<string, Datasource>,
    private readonly sqlBounds: SqlConfig,
    private readonly federation: FederationConfig,
    private readonly postgresqlText: SqlDialect | undefined,
  ) {}

  /**
   * Opens (or reuses) the datasources of every VDB so that a lookup is synchronous. `dialects`: the installed
   * ones, of which one whose text is PostgreSQL's authorizes statements over several datasources.
   */
  static async create(
    vdbs: VdbRegistry, open: (name: string) => Promise<Datasource>, sqlBounds: SqlConfig, federation: FederationConfig, dialects: readonly SqlDialect[],
  ): Promise<VdbHandles> {
    const names = new Set(vdbs.list().flatMap((vdb) => [vdb.datasource, ...vdb.schemas.map((schema) => schema.datasource)]));
    const entries = await Promise.all([...names].map(async (name) => [name, await open(name)] as const));
    return new VdbHandles(vdbs, new Map(entries), sqlBounds, federation, postgresqlTextOf(dialects));
  }

  /** The VDB's handle, or why there is none (a sentence for a definition problem). */
  lookup(name: string, version: string | number | undefined): VdbHandle | string {
    const key = `${name}\u0000${version ?? ''}`;
    let handle = this.made.get(key);
    if (handle === undefined) this.made.set(key, (handle = this.lookupNew(name, version === undefined ? undefined : String(version))));
    return handle;
  }

  private lookupNew(name: string, version: string | undefined): VdbHandle | string {
    let vdb: VirtualDatabase | undefined;
    if (version !== undefined) {
      vdb = this.vdbs.find(name, version);
      if (!vdb) return `virtualDatabase ${name} version ${version} is not loaded`;
    } else {
      const versions = this.vdbs.versionsOf(name);
      if (versions.length === 0) return `virtualDatabase ${name} is not loaded`;
      if (versions.length > 1) {
        return `virtualDatabase ${name} has ${versions.length} versions (${versions.map((candidate) => candidate.version).join(', ')}): set virtualDatabaseVersion`;
      }
      vdb = versions[0] as VirtualDatabase;
    }
    return openHandle(vdb, this.sqlBounds, this.federation, this.postgresqlText, (datasource) => {
      const open = this.datasources.get(datasource);
      if (!open) throw new Error(`datasource ${datasource} was not opened`);
      return open;
    });
  }
}

/** The installed dialect whose text is PostgreSQL's (`capabilities.postgresqlText`), if any. */
export function postgresqlTextOf(installed: Iterable<SqlDialect>): SqlDialect | undefined {
  return [...installed].find((dialect) => dialect.capabilities.postgresqlText === true);
}

/**
 * The dialect a statement over several datasources of a VDB is written in: its default datasource's `own`
 * where that is PostgreSQL's text, else `postgresqlText` (undefined: none is installed).
 */
export function federationDialectOf(own: SqlDialect, postgresqlText: SqlDialect | undefined): SqlDialect | undefined {
  return own.capabilities.postgresqlText === true ? own : postgresqlText;
}

function openHandle(
  vdb: VirtualDatabase, sqlBounds: SqlConfig, federation: FederationConfig, postgresqlText: SqlDialect | undefined, datasourceNamed: (name: string) => Datasource,
): VdbHandle {
  const datasource = datasourceNamed(vdb.datasource);
  const relations = relationIndex(vdb.catalog.relations);
  const identifiers = identifierIndex(vdb.catalog.relations);
  const quote = (name: string) => name.split('.').map((part) => datasource.dialect.quoteIdentifier(part)).join('.');
  const identifier = (name: string): string => {
    if (!identifiers.has(name)) {
      throw new InputError('unknown_identifier', `"${name}" is not a relation or column of VDB ${vdb.name}`, { details: { identifier: name } });
    }
    return quote(name);
  };
  return {
    vdb,
    datasource,
    dialect: datasource.dialect,
    federationDialect: federationDialectOf(datasource.dialect, postgresqlText) ?? datasource.dialect,
    datasourceOf: (relation) => datasourceNamed(relation.datasource),
    datasourceFor: (relations) => {
      const names = new Set(relations.map((relation) => relation.datasource));
      if (names.size > 1) return undefined;
      const [name] = names;
      return name === undefined ? datasource : datasourceNamed(name);
    },
    relation: (entity) => relations.get(entity) ?? relations.get(entity.toLowerCase()),
    sqlBounds,
    federation,
    renderContext: (context) => ({ _context: context, identifier }),
  };
}

/** By `schema.name` as written, and lower-cased when that is unambiguous (`sales.ORDERS`). */
function relationIndex(relations: readonly VdbRelation[]): Map<string, VdbRelation> {
  const index = new Map<string, VdbRelation>();
  const folded = new Map<string, VdbRelation[]>();
  for (const relation of relations) {
    const key = `${relation.schema}.${relation.name}`;
    index.set(key, relation);
    folded.set(key.toLowerCase(), [...(folded.get(key.toLowerCase()) ?? []), relation]);
  }
  for (const [key, candidates] of folded) if (candidates.length === 1 && !index.has(key)) index.set(key, candidates[0] as VdbRelation);
  return index;
}

/** What `| identifier` accepts: a relation (bare or schema-qualified) or a column of one. */
function identifierIndex(relations: readonly VdbRelation[]): Set<string> {
  const names = new Set<string>();
  for (const relation of relations) {
    names.add(relation.name).add(`${relation.schema}.${relation.name}`);
    for (const column of relation.columns) names.add(column.name).add(`${relation.name}.${column.name}`);
  }
  return names;
}
