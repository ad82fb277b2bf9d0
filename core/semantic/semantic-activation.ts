import type { Logger } from 'pino';
import type { DependencyContainer } from 'tsyringe';
import type { ServiceConfig } from '../config/config-types.js';
import { coreTokens } from '../service-tokens.js';
import type { VirtualDatabase } from '../plugin-api/vdb.js';
import type { SqlDialect } from '../plugin-api/sql-dialect.js';
import { SemanticRegistry } from './semantic-registry.js';
import type { VdbActivation } from './semantic-types.js';
import { activateVdb } from './vdb-activation.js';
import { federationDialectOf, postgresqlTextOf } from '../vdb/vdb-handles.js';

/** The activation a process does at startup; there is no reload (docs/semantic.md). */
const STARTUP_GENERATION = 1;

/**
 * Activates the semantic model of every VDB, once, at startup. A failed model never stops this function:
 * its VDB is `invalid` or `compileFailed`, and whether the service then serves or gates its routes is the
 * registry's `startupBlocked`. Needs the semantic providers (plugins) and the open datasources.
 */
export async function activateSemantics(
  vdbs: readonly VirtualDatabase[],
  config: ServiceConfig,
  container: DependencyContainer,
  logger: Logger,
): Promise<SemanticRegistry> {
  const providers = container.resolve(coreTokens.extensions).semanticProviders;
  const datasources = container.resolve(coreTokens.datasources);
  const dialects = new Map<string, SqlDialect>();
  for (const name of new Set(vdbs.flatMap((vdb) => [vdb.datasource, ...vdb.schemas.map((schema) => schema.datasource)]))) {
    dialects.set(name, (await datasources.open(name)).dialect);
  }
  const dialectOf = (name: string): SqlDialect => {
    const dialect = dialects.get(name);
    if (!dialect) throw new Error(`datasource ${name} is not open`);
    return dialect;
  };
  // as the VDB's handle chooses it
  const postgresqlText = postgresqlTextOf(container.resolve(coreTokens.extensions).sqlDialects.values());
  const activations = await Promise.all(vdbs.map((vdb) => activateVdb(vdb, {
    descriptors: config.descriptors,
    provider: (id) => providers.get(id),
    defaultPolicy: config.semantic.activationFailurePolicy,
    dialectOf,
    federationDialectOf: (vdb: VirtualDatabase) => federationDialectOf(dialectOf(vdb.datasource), postgresqlText),
    databaseOf: (name) => databaseNameOf(config.datasources[name]?.connection),
    generation: STARTUP_GENERATION,
  })));
  for (const activation of activations) logActivation(activation, logger);
  return new SemanticRegistry(activations, STARTUP_GENERATION);
}

/**
 * The database a datasource's connection names, as `database` or as the path of its connection URL
 * (`postgres://host/tpcds`, `mysql://host/tpcds`); undefined for an embedded one.
 */
function databaseNameOf(connection: Record<string, unknown> | undefined): string | undefined {
  if (typeof connection?.['database'] === 'string') return connection['database'];
  const url = connection?.['connectionString'] ?? connection?.['url'];
  if (typeof url !== 'string' || !URL.canParse(url)) return undefined;
  const path = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  return path === '' ? undefined : path;
}

function logActivation(activation: VdbActivation, logger: Logger): void {
  const facts = { vdb: activation.name, version: activation.version, state: activation.state, policy: activation.activationFailurePolicy };
  if (activation.state === 'active') {
    logger.info({ ...facts, packageDigest: activation.package?.digest, warnings: activation.diagnostics.filter((d) => d.severity === 'warning').length }, 'semantic model active');
    return;
  }
  if (activation.state === 'catalogOnly') {
    logger.info(facts, 'no semantic model: catalog only');
    return;
  }
  const cause = activation.diagnostics.find((diagnostic) => diagnostic.severity === 'error');
  const entry = { ...facts, cause: cause && { code: cause.code, at: `${cause.document}:${cause.location.line}:${cause.location.column}`, message: cause.message } };
  if (activation.activationFailurePolicy === 'blockStartup') {
    logger.error(entry, 'semantic model failed; policy blockStartup: only health and the admin API answer');
  } else {
    logger.warn(entry, 'semantic model failed; policy isolate: the VDB serves its catalog only');
  }
}
