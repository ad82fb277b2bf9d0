import { resolve } from 'node:path';
import type { ServiceConfig } from '../config/config-types.js';
import { schemaProblems } from '../config/schema-validation.js';
import { StartupError, type StartupProblem } from '../plugin-api/errors.js';
import type { ExtensionRegistry } from '../plugins/extension-registry.js';
import type { PluginManifest } from '../plugin-api/plugin-manifest.js';
import type { Datasource, DatasourceSettings, SqlDialect } from '../plugin-api/sql-dialect.js';
import { datasourceOpenFailure } from './datasource-open-failure.js';
import { runtimeOver, observeStatements } from './datasource-runtime.js';
import type { StatementObserver } from './statement-outcome.js';

/** How long closing one datasource may take at shutdown. */
const CLOSE_LIMIT_MS = 5_000;

/**
 * The datasources of service.yaml. Each is opened on first use (a VDB that needs it) and only once;
 * `closeAll` closes what was opened. Tests may hand in already-open datasources by name.
 */
export class DatasourceRegistry {
  private readonly opening = new Map<string, Promise<Datasource>>();
  private readonly settings = new Map<string, { dialect: SqlDialect; settings: DatasourceSettings }>();

  constructor(
    private readonly config: ServiceConfig,
    dialects: ExtensionRegistry<SqlDialect>,
    dialectManifests: ReadonlyMap<string, PluginManifest>,
    private readonly overrides: Readonly<Record<string, Datasource>> = {},
    /** Told about every statement run on the datasources handed out (the service's metrics). */
    private readonly observer?: StatementObserver,
  ) {
    const problems: StartupProblem[] = [];
    for (const [name, datasource] of Object.entries(config.datasources)) {
      const dialect = dialects.get(datasource.adapter);
      if (!dialect) {
        problems.push(config.source.problem(['datasources', name, 'adapter'],
          `datasources.${name}.adapter: unknown adapter "${datasource.adapter}" (installed: ${dialects.ids().join(', ')})`));
        continue;
      }
      const schema = dialectManifests.get(datasource.adapter)?.configSchema;
      if (schema) problems.push(...schemaProblems(schema, datasource.connection, config.source, ['datasources', name, 'connection']));
      this.settings.set(name, {
        dialect,
        settings: {
          name,
          adapter: datasource.adapter,
          connection: datasource.connection,
          pool: datasource.pool,
          init: datasource.init.map((script) => resolve(config.descriptors, script)),
          baseDir: config.baseDir,
        },
      });
    }
    if (problems.length > 0) throw StartupError.of(problems);
  }

  names(): ReadonlySet<string> {
    return new Set(this.settings.keys());
  }

  /** Opens the datasource once; later calls share the same promise. A failure is a StartupError at its `connection`. */
  open(name: string): Promise<Datasource> {
    let opening = this.opening.get(name);
    if (!opening) {
      opening = this.openNew(name).then((datasource) => (this.observer ? observeStatements(name, datasource, this.observer) : datasource));
      this.opening.set(name, opening);
    }
    return opening;
  }

  private async openNew(name: string): Promise<Datasource> {
    const given = this.overrides[name];
    if (given) return given;
    const entry = this.settings.get(name);
    if (!entry) throw new StartupError(`unknown datasource "${name}"`);
    try {
      return runtimeOver(await entry.dialect.open(entry.settings));
    } catch (error) {
      throw datasourceOpenFailure(this.config, name, error);
    }
  }

  /** The datasources opened so far (those that failed to open are not), by name. */
  async opened(): Promise<(readonly [string, Datasource])[]> {
    const settled = await Promise.allSettled([...this.opening.entries()].map(async ([name, opening]) => [name, await opening] as const));
    return settled.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
  }

  /** Whether the datasource was handed in (tests): it belongs to its owner, who closes it. */
  isHandedIn(name: string): boolean {
    return this.overrides[name] !== undefined;
  }

  /**
   * Closes every datasource this pool opened (not the ones handed in), each given at most CLOSE_LIMIT_MS:
   * ending a pool waits for its connections to say goodbye, which a server that stopped answering never
   * does, and the process must still end.
   */
  async closeAll(): Promise<void> {
    const opened = [...this.opening.entries()].filter(([name]) => !this.overrides[name]);
    await Promise.allSettled(opened.map(async ([, opening]) => {
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<void>((done) => (timer = setTimeout(done, CLOSE_LIMIT_MS)));
      await Promise.race([opening.then((datasource) => datasource.close()), limit]);
      clearTimeout(timer);
    }));
  }
}
