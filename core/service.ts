import { SemanticQueries } from './semantic-query/semantic-query-service.js';
import 'reflect-metadata';
import type { DestinationStream, Logger } from 'pino';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import type { AuthScheme } from './plugin-api/auth-scheme.js';
import { loadConfig } from './config/config-loader.js';
import { displayPath } from './config/yaml-source.js';
import type { ServiceConfig } from './config/config-types.js';
import { schemaProblems } from './config/schema-validation.js';
import { messageOf, StartupError, type StartupProblem } from './plugin-api/errors.js';
import { createLogger } from './logging.js';
import { ExtensionRegistries } from './plugins/extension-registry.js';
import { discoverBuiltIns, loadPlugins, locateExtra, type LoadedPlugin } from './plugins/plugin-loader.js';
import type { PluginManifest } from './plugin-api/plugin-manifest.js';
import { HttpListeners } from './server/http-server.js';
import { ListenFailure, listenFailureMessage } from './server/listen-failure.js';
import { routeModules } from './server/routes/route-modules.js';
import { mcpRoutes } from './mcp/mcp-routes.js';
import { DatasourceRegistry } from './sql/datasource-registry.js';
import type { Datasource } from './plugin-api/sql-dialect.js';
import { coreTokens } from './service-tokens.js';
import { loadVdbs } from './vdb/vdb-loader.js';
import { syncDatabaseRoles } from './authorization/role-sync.js';
import type { VirtualDatabase } from './plugin-api/vdb.js';
import { VdbRegistry } from './vdb/vdb-registry.js';
import { activateSemantics } from './semantic/semantic-activation.js';
import { loadEndpoints } from './endpoints/endpoint-loader.js';
import { ActionJournals, type ActionRunObserver } from './endpoints/actions/action-journal.js';
import { startRecovery } from './endpoints/actions/action-recovery.js';
import type { TemplateEngine } from './plugin-api/template-engine.js';
import { VdbHandles } from './vdb/vdb-handles.js';
import type { RuntimeTransport } from './plugin-api/runtime-transport.js';
import { TaskOrchestrator } from './tasks/task-orchestrator.js';
import { ServiceMetrics } from './observe/service-metrics.js';
import { DatasourceReadiness } from './observe/datasource-readiness.js';
import { SqlDoor } from './sql-door/sql-door.js';
import { createCatalogResponder } from './sql-door/catalog/index.js';
import { keepWebAssemblyOnBaseline } from './wasm-tiers.js';

export interface ServiceOptions {
  configFile: string;
  env?: NodeJS.ProcessEnv;
  /** Where JSON logs go; stdout by default. */
  logDestination?: DestinationStream;
  /** Already-open datasources to use instead of opening the configured ones (tests share one PGlite). */
  datasources?: Record<string, Datasource>;
  /** Listen on this port instead of `server.port` (tests use 0). */
  port?: number;
  /**
   * Prepare for `validate`: nothing is written to a database; the database roles the operator manages
   * (`roles.sync: false`) are checked, the others left to `start`.
   */
  checkOnly?: boolean;
  /** What gave `port` (`--port 9000`, `PORT=9000`), so a port that is taken names it instead of `server.port`. */
  portSetBy?: string;
  /** Listen for SQL clients on this port instead of `sql.port`, when `sql.enabled` (tests use 0). */
  sqlPort?: number;
}

/** Everything built before the server listens: what `validate` checks and `start` serves. */
export interface PreparedService {
  config: ServiceConfig;
  logger: Logger;
  container: DependencyContainer;
  plugins: LoadedPlugin[];
  /** Warnings of the endpoint definitions (each `| raw`), which `validate` prints. */
  endpointWarnings: StartupProblem[];
  /** Warnings of the database roles (drift, a superuser login), which `validate` prints. */
  roleWarnings: StartupProblem[];
  /** Closes the datasources opened so far. */
  close(): Promise<void>;
}

export interface RunningService extends PreparedService {
  /** Base URL of the main listener. */
  url: string;
  adminUrl: string | undefined;
  /** Where the SQL front door listens, when `sql.enabled`. */
  sqlAddress: { host: string; port: number } | undefined;
}

/** How long in-flight requests may take to finish after SIGTERM before their connections are dropped. */
const DRAIN_MS = 10_000;

function manifestsOfKind(plugins: LoadedPlugin[], kind: PluginManifest['kind']): Map<string, PluginManifest> {
  return new Map(plugins.filter((plugin) => plugin.manifest.kind === kind).map((plugin) => [plugin.manifest.id, plugin.manifest]));
}

async function createAuthScheme(config: ServiceConfig, extensions: ExtensionRegistries, plugins: LoadedPlugin[]): Promise<AuthScheme> {
  const factories = extensions.authSchemes;
  const factory = factories.get(config.auth.scheme);
  if (!factory) {
    throw StartupError.of([config.source.problem(['auth', 'scheme'], `auth.scheme: unknown scheme "${config.auth.scheme}" (installed: ${factories.ids().join(', ')})`)]);
  }
  const schema = manifestsOfKind(plugins, 'authScheme').get(config.auth.scheme)?.configSchema;
  const problems = schema ? schemaProblems(schema, config.auth.settings, config.source, ['auth']) : [];
  if (problems.length > 0) throw StartupError.of(problems);
  return factory.create(config.auth.settings, config.baseDir);
}

/** Loads config, plugins, auth, datasources and VDBs (with their catalogs). Nothing listens yet. */
export async function prepareService(options: ServiceOptions): Promise<PreparedService> {
  // before the parser and PGlite run: the process's memory bounds hold on Node 24 too
  keepWebAssemblyOnBaseline();
  const config = loadConfig(options.configFile, options.env ?? process.env);
  const logger = createLogger(config.logging.level, options.logDestination);
  const container = rootContainer.createChildContainer();
  container.register(coreTokens.config, { useValue: config });
  container.register(coreTokens.logger, { useValue: logger });
  const extensions = new ExtensionRegistries();
  container.register(coreTokens.extensions, { useValue: extensions });
  const metrics = new ServiceMetrics();
  container.register(coreTokens.metrics, { useValue: metrics });

  const discovered = [...discoverBuiltIns(), ...config.plugins.map((reference) => locateExtra(reference, config.baseDir))];
  const plugins = await loadPlugins(extensions, logger, discovered);
  extensions.lock();
  container.register(coreTokens.authScheme, { useValue: await createAuthScheme(config, extensions, plugins) });

  let endpointWarnings: StartupProblem[] = [];
  let roleWarnings: StartupProblem[] = [];
  let transport: RuntimeTransport | undefined;
  const datasources = new DatasourceRegistry(config, extensions.sqlDialects, manifestsOfKind(plugins, 'sqlDialect'), options.datasources, metrics);
  container.register(coreTokens.datasources, { useValue: datasources });
  const readiness = new DatasourceReadiness(() => datasources.opened());
  container.register(coreTokens.readiness, { useValue: readiness });
  metrics.watchDatasources(() => readiness.check());
  try {
    const vdbs = await loadVdbs(config.descriptors, datasources.names(), (name) => datasources.open(name));
    const governance = await governDatasources(vdbs, config, datasources, logger, metrics, options.checkOnly ?? false);
    roleWarnings = governance.warnings;
    container.register(coreTokens.actionJournals, { useValue: governance.journals });
    container.register(coreTokens.vdbs, { useValue: new VdbRegistry(vdbs) });
    container.register(coreTokens.semantic, { useValue: await activateSemantics(vdbs, config, container, logger) });
    const handles = await VdbHandles.create(container.resolve(coreTokens.vdbs), (name) => datasources.open(name), config.sql, config.federation, extensions.sqlDialects.values());
    container.register(coreTokens.vdbHandles, { useValue: handles });
    container.register(coreTokens.semanticQueries, { useValue: new SemanticQueries(container.resolve(coreTokens.semantic), datasources, handles) });
    const endpoints = await loadEndpoints({
      descriptors: config.descriptors,
      engine: templateEngine(extensions),
      functions: extensions.templateFunctions.values(),
      handles,
      governed: governance.governed,
      journals: governance.journals,
      logger,
    });
    const errors = endpoints.problems.filter((problem) => problem.severity !== 'warning');
    if (errors.length > 0) throw StartupError.of(errors);
    endpointWarnings = endpoints.problems.filter((problem) => problem.severity === 'warning');
    for (const warning of endpointWarnings) logger.warn({ file: warning.file, line: warning.line }, warning.message);
    container.register(coreTokens.endpoints, { useValue: endpoints.registry });
    transport = runtimeTransport(config, extensions);
    container.register(coreTokens.tasks, {
      useValue: new TaskOrchestrator({
        config, vdbs: container.resolve(coreTokens.vdbs), handles, semantic: container.resolve(coreTokens.semantic), semanticQueries: container.resolve(coreTokens.semanticQueries), transport, logger, observer: metrics,
      }),
    });
  } catch (error) {
    await datasources.closeAll();
    throw error;
  }
  const close = async () => {
    await transport?.close?.();
    await datasources.closeAll();
  };
  return { config, logger, container, plugins, endpointWarnings, roleWarnings, close };
}

/**
 * Syncs (or checks) the database roles of the data roles, then reopens the session of each embedded
 * database the service opened as a login that can only become those roles. Handed-in datasources (tests)
 * belong to their owner: their session stays as it is. Returns the warnings, already logged, and the
 * datasources whose roles are in place.
 */
async function governDatasources(
  vdbs: readonly VirtualDatabase[], config: ServiceConfig, datasources: DatasourceRegistry, logger: Logger, metrics: ServiceMetrics, checkOnly: boolean,
): Promise<{ warnings: StartupProblem[]; governed: ReadonlySet<Datasource>; journals: ActionJournals }> {
  const restricts = (name: string) => !datasources.isHandedIn(name);
  const outcome = await syncDatabaseRoles({ vdbs, config, open: (name) => datasources.open(name), write: !checkOnly, restricts, logger });
  for (const warning of outcome.warnings) logger.warn({ file: warning.file, line: warning.line }, warning.message);
  const governed = new Set(outcome.datasources.map((entry) => entry.datasource));
  if (checkOnly) return { warnings: outcome.warnings, governed, journals: ActionJournals.empty() };
  // the journal is set up by the service's own login, before an embedded database's session is restricted
  const journals = await prepareJournals(config, datasources, outcome.datasources, metrics, logger);
  for (const { name, datasource, roles } of outcome.datasources) {
    if (typeof datasource.restrictSession === 'function' && restricts(name)) await datasource.restrictSession(roles);
  }
  return { warnings: outcome.warnings, governed, journals };
}

/**
 * The journals of action runs (docs/actions.md#the-journal): on `actions.journal.datasource`, which must
 * take one, or on each governed datasource, where one that cannot is a warning and its actions run unjournaled.
 * Each data role's login may call the journal where the sync made it; the operator grants it otherwise.
 */
async function prepareJournals(
  config: ServiceConfig, datasources: DatasourceRegistry, governed: readonly { name: string; datasource: Datasource; roles: string[] }[],
  observer: ActionRunObserver, logger: Logger,
): Promise<ActionJournals> {
  const { actions, instanceId, server } = config;
  const home = actions.journal.datasource;
  const settings = { instance: instanceId, leaseSeconds: actions.leaseSeconds, idempotencyTtlSeconds: actions.idempotencyTtlSeconds, timeoutMs: server.requestTimeoutMs, observer };
  // where callers run on logins the operator made (roles.sync false), the service cannot let them call the
  // journal: their steps are then written by the service's login, before and after each operation
  const synced = governed.map((entry) => {
    const operators = config.datasources[entry.name]?.roles.sync === false;
    return { ...entry, roles: operators ? [] : entry.roles, callable: !(operators && entry.datasource.dialect.loginPasswordSql() !== undefined) };
  });
  if (home === undefined) {
    return ActionJournals.prepare(synced, settings, undefined, (name, error) => {
      logger.warn({ datasource: name, reason: messageOf(error) }, 'the journal of action runs cannot be set up on this datasource: its actions run unjournaled, without recovery or Idempotency-Key');
    });
  }
  const problem = (message: string) => StartupError.of([config.source.problem(['actions', 'journal', 'datasource'], `actions.journal.datasource: ${message}`)]);
  if (!datasources.names().has(home)) throw problem(`${home} is not a datasource of this service (${[...datasources.names()].join(', ')})`);
  const datasource = await datasources.open(home);
  if (!datasource.dialect.actionJournal) throw problem(`the ${datasource.dialect.id} adapter of ${home} keeps no journal of action runs`);
  const entry = synced.find((candidate) => candidate.name === home) ?? { roles: [], callable: false };
  return ActionJournals.prepare([{ name: home, datasource, roles: entry.roles, callable: entry.callable }], settings, home, (_name, error) => {
    throw problem(`cannot set up the journal of action runs on ${home}: ${messageOf(error)}`);
  });
}

/** The configured runtime transport, when the runtime is enabled. */
function runtimeTransport(config: ServiceConfig, extensions: ExtensionRegistries): RuntimeTransport | undefined {
  if (!config.runtime.enabled) return undefined;
  const factories = extensions.runtimeTransports;
  const factory = factories.get(config.runtime.transport);
  if (!factory) {
    throw StartupError.of([config.source.problem(['runtime', 'transport'],
      `runtime.transport: unknown transport "${config.runtime.transport}" (installed: ${factories.ids().join(', ') || 'none'})`)]);
  }
  return factory.create({ baseURL: config.runtime.baseURL, timeoutMs: config.runtime.timeoutMs, bearerToken: config.runtime.bearerToken });
}

/** The `twing` engine, or the only one installed. */
function templateEngine(extensions: ExtensionRegistries): TemplateEngine {
  const engines = extensions.templateEngines;
  const engine = engines.get('twing') ?? (engines.ids().length === 1 ? engines.values()[0] : undefined);
  if (!engine) throw new StartupError(`no template engine: install the twing plugin (installed: ${engines.ids().join(', ') || 'none'})`);
  return engine;
}

/** Prepares the service and starts its listeners. `close()` drains requests, then closes the pools. */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const prepared = await prepareService(options);
  const { config, container, logger } = prepared;
  const datasources = container.resolve(coreTokens.datasources);
  // runs a killed process left unfinished are undone before the first request is served
  const journals = container.resolve(coreTokens.actionJournals);
  const recovery = startRecovery({
    journals,
    datasource: async (name) => journals.named(name)?.datasource ?? (datasources.names().has(name) ? datasources.open(name) : undefined),
    timeoutMs: config.server.requestTimeoutMs,
    logger,
  }, config.actions.recoveryIntervalSeconds);
  await recovery.first;
  const serverConfig = options.port === undefined ? config.server : { ...config.server, port: options.port };
  const listeners = HttpListeners.build(serverConfig, config.mcp.enabled ? [...routeModules, mcpRoutes] : routeModules, container, logger);
  try {
    await listeners.listen(serverConfig);
  } catch (error) {
    // the main listener may be up when the admin one fails: an open server would keep the process alive
    await listeners.close(0);
    await recovery.stop();
    await prepared.close();
    if (!(error instanceof ListenFailure)) throw error;
    throw new StartupError(listenFailureMessage(error, { configFile: displayPath(config.file), overriddenBy: options.portSetBy }), [], { cause: error });
  }
  let door: SqlDoor | undefined;
  try {
    door = config.sql.enabled ? await startSqlDoor(config, container, logger, options.sqlPort) : undefined;
  } catch (error) {
    await listeners.close(0);
    await recovery.stop();
    await prepared.close();
    throw error;
  }
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= Promise.all([listeners.close(DRAIN_MS), door?.close(), recovery.stop()]).then(() => prepared.close());
    return closing;
  };
  return { ...prepared, url: listeners.url, adminUrl: listeners.adminUrl, sqlAddress: door?.address, close };
}

/** The SQL front door on `sql.host`:`sql.port` (docs/sql.md); a port that is taken stops startup, naming it. */
async function startSqlDoor(config: ServiceConfig, container: DependencyContainer, logger: Logger, port: number | undefined): Promise<SqlDoor> {
  const sql = port === undefined ? config.sql : { ...config.sql, port };
  try {
    return await SqlDoor.start({ config: sql, maxResultBytes: config.server.maxResultBytes, catalog: await createCatalogResponder(), scheme: container.resolve(coreTokens.authScheme), handles: container.resolve(coreTokens.vdbHandles), logger });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== 'EADDRINUSE' && code !== 'EACCES' && code !== 'EADDRNOTAVAIL') throw error;
    throw new StartupError(`sql.port: the SQL front door cannot listen on ${sql.host}:${sql.port} (${String(code)}); set sql.port in ${displayPath(config.file)}`, [], { cause: error });
  }
}
