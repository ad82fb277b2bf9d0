import { hostname } from 'node:os';
import { dirname, isAbsolute, resolve } from 'node:path';
import { StartupError, type StartupProblem } from '../plugin-api/errors.js';
import { configSchema } from './config-schema.js';
import type { TaskBudgets } from '../plugin-api/task-documents.js';
import type { DatasourceConfig, ExtraPluginReference, RuntimeConfig, ServiceConfig } from './config-types.js';
import { dotted, schemaProblems } from './schema-validation.js';
import { readYamlFile, type YamlSource } from './yaml-source.js';

export const DEFAULT_CONFIG_FILE = 'service.yaml';

/** `--config FILE` wins over `VDB_CONFIG`, which wins over ./service.yaml. */
export function configFileFrom(argv: readonly string[], env: NodeJS.ProcessEnv): string {
  const flag = argv.indexOf('--config');
  if (flag >= 0) {
    const file = argv[flag + 1];
    if (!file || file.startsWith('--')) throw new StartupError('--config needs a file path');
    return resolve(file);
  }
  const inline = argv.find((arg) => arg.startsWith('--config='));
  if (inline) return resolve(inline.slice('--config='.length));
  return resolve(env['VDB_CONFIG'] || DEFAULT_CONFIG_FILE);
}

const ENV_REFERENCE = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Replaces `${env:NAME}` (or `${env:NAME:-default}`) in every string; an unset variable is a problem. */
function substituteEnv(value: unknown, env: NodeJS.ProcessEnv, source: YamlSource, path: (string | number)[], problems: StartupProblem[]): unknown {
  if (typeof value === 'string') {
    return value.replace(ENV_REFERENCE, (_match, name: string, fallback: string | undefined) => {
      const found = env[name] ?? fallback;
      if (found === undefined) {
        problems.push(source.problem(path, `${dotted(path)}: environment variable ${name} is not set`));
        return '';
      }
      return found;
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => substituteEnv(item, env, source, [...path, index], problems));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, substituteEnv(item, env, source, [...path, key], problems)]),
    );
  }
  return value;
}

interface RawConfig {
  instanceId?: string;
  server: ServiceConfig['server'];
  descriptors: string;
  plugins: (string | { path?: string; package?: string; config: Record<string, unknown> })[];
  datasources: Record<string, DatasourceConfig>;
  auth: { scheme: string; adminRoles: string[] } & Record<string, unknown>;
  semantic: ServiceConfig['semantic'];
  sql: Omit<ServiceConfig['sql'], 'statementTimeoutMs'> & { statementTimeoutMs?: number };
  federation: ServiceConfig['federation'];
  runtime: Omit<RuntimeConfig, 'budgets'> & { budgets: Partial<TaskBudgets> };
  capabilities: { name: string; description?: string; budgets?: Partial<TaskBudgets> }[];
  logging: ServiceConfig['logging'];
  observe: ServiceConfig['observe'];
  actions: ServiceConfig['actions'];
  mcp: ServiceConfig['mcp'];
}

/** The budgets of a task unless `runtime.budgets` or a capability says otherwise (docs/configuration.md). */
export const DEFAULT_BUDGETS: TaskBudgets = {
  maxSteps: 8, maxServiceActions: 16, maxObservationRows: 5000, maxObservationBytes: 2_097_152,
  maxModelCalls: 16, maxInputTokens: 200_000, maxOutputTokens: 20_000, maxDurationSeconds: 120,
};

function runtimeProblems(raw: RawConfig, source: YamlSource): StartupProblem[] {
  const problems: StartupProblem[] = [];
  if (raw.runtime.enabled && raw.runtime.transport === 'http' && raw.runtime.baseURL === undefined) {
    problems.push(source.problem(['runtime', 'transport'], 'runtime.baseURL: required when runtime.transport is http'));
  }
  const names = raw.capabilities.map((capability) => capability.name);
  names.forEach((name, index) => {
    if (names.indexOf(name) !== index) problems.push(source.problem(['capabilities', index, 'name'], `capabilities[${index}].name: "${name}" is defined twice`));
  });
  return problems;
}

function pluginReference(entry: RawConfig['plugins'][number], baseDir: string): ExtraPluginReference {
  if (typeof entry === 'string') {
    const isPath = entry.startsWith('.') || isAbsolute(entry);
    return { source: isPath ? resolve(baseDir, entry) : entry, kind: isPath ? 'path' : 'package', config: {} };
  }
  if (entry.path !== undefined) return { source: resolve(baseDir, entry.path), kind: 'path', config: entry.config };
  return { source: entry.package as string, kind: 'package', config: entry.config };
}

/**
 * Reads, substitutes and validates a config file. Every problem is reported at once, each as
 * `file:line: key: message`, in one StartupError.
 */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  const source = readYamlFile(file);
  const problems: StartupProblem[] = [];
  const value = substituteEnv(source.value ?? {}, env, source, [], problems);
  problems.push(...schemaProblems(configSchema, value, source));
  if (problems.length > 0) {
    throw StartupError.of(problems);
  }
  const raw = value as RawConfig;
  problems.push(...runtimeProblems(raw, source));
  if (problems.length > 0) throw StartupError.of(problems);
  const baseDir = dirname(file);
  const budgets = { ...DEFAULT_BUDGETS, ...raw.runtime.budgets };
  const { scheme, adminRoles, ...authSettings } = raw.auth;
  return {
    file,
    baseDir,
    source,
    instanceId: raw.instanceId ?? `${hostname()}:${raw.server.port}`,
    server: raw.server,
    descriptors: resolve(baseDir, raw.descriptors),
    plugins: raw.plugins.map((entry) => pluginReference(entry, baseDir)),
    datasources: raw.datasources,
    auth: { scheme, adminRoles, settings: authSettings },
    semantic: raw.semantic,
    sql: {
      ...raw.sql,
      statementTimeoutMs: raw.sql.statementTimeoutMs ?? raw.server.requestTimeoutMs,
      ...(raw.sql.tls && { tls: { cert: resolve(baseDir, raw.sql.tls.cert), key: resolve(baseDir, raw.sql.tls.key) } }),
    },
    federation: raw.federation,
    runtime: { ...raw.runtime, budgets },
    capabilities: raw.capabilities.map((capability) => ({
      name: capability.name,
      description: capability.description ?? '',
      budgets: { ...budgets, ...capability.budgets },
    })),
    logging: raw.logging,
    observe: raw.observe,
    actions: raw.actions,
    mcp: raw.mcp,
  };
}
