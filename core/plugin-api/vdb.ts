import type { Catalog, CatalogRelation } from './catalog.js';

/** What a data grant allows. */
export type DataAction = 'select' | 'insert' | 'update' | 'delete';

/** One privilege of a data role on a schema, relation or column. */
export interface DataGrant {
  /** A schema, `schema.relation` or `schema.relation.column`. */
  resource: string;
  allow: DataAction[];
  /** When present, the grant covers only these columns of the relation. */
  columns?: string[];
}

/** A role of a VDB, with the grants the database enforces for its callers. */
export interface DataRole {
  name: string;
  grants: DataGrant[];
  /**
   * The database role that holds this data role's grants (docs/governed-execution.md); by default
   * `vdb_<vdb>_v<version>_<name>`.
   */
  dbRole?: string;
  /**
   * Where the database runs a caller on a login per role (MySQL, MariaDB) and the service does not create
   * the users (`datasources.<id>.roles.sync: false`): the datasource of service.yaml whose login holds
   * exactly this data role's grants (docs/governed-execution.md).
   */
  connection?: string;
}

/** How a VDB refers to its semantic model (docs/vdb-file.md); checked by semantic activation. */
export interface SemanticReference {
  enabled: boolean;
  activationFailurePolicy?: 'isolate' | 'blockStartup';
  /** The schema of the model's sources that name none; overrides the manifest's `defaultSchema`. */
  defaultSchema?: string;
  /** Names a three-part source may give a datasource of the VDB (`TPCDS` in `TPCDS.PUBLIC.STORE_SALES`): alias -> datasource. */
  databaseAliases?: Record<string, string>;
  module?: { uri: string; name: string; version: string; sha256: string };
  provider?: { id: string; uri: string; mediaType?: string; version?: string; sha256: string };
}

/** A schema of a VDB and the datasource holding it. */
export interface VdbSchema {
  name: string;
  /** The datasource holding this schema (the VDB's default unless overridden). */
  datasource: string;
  /** Relations exposed from the schema; absent means all. */
  include?: string[];
}

/** One VDB file of `descriptors/vdbs/`, as written. */
export interface VdbDefinition {
  name: string;
  version: string;
  description?: string;
  datasource: string;
  schemas: VdbSchema[];
  semantic?: SemanticReference;
  /** Built-in functions statements may call beyond the dialect's allow-list, e.g. `pg_size_pretty`. */
  allowFunctions?: string[];
  dataRoles?: DataRole[];
}

/** A relation of a VDB's catalog, with the datasource it lives in. */
export interface VdbRelation extends CatalogRelation {
  datasource: string;
}

/** The catalog of a VDB's schemas, each relation with its datasource. */
export interface VdbCatalog extends Omit<Catalog, 'relations'> {
  relations: VdbRelation[];
}

/** A loaded, introspected VDB. */
export interface VirtualDatabase extends VdbDefinition {
  /** Absolute path of its file. */
  file: string;
  catalog: VdbCatalog;
  /** sha256 of the introspected catalog, so consumers can tell which revision they planned against. */
  catalogRevision: string;
}
