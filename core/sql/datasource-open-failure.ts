import type { ServiceConfig } from '../config/config-types.js';
import { messageOf, StartupError } from '../plugin-api/errors.js';
import { connectionFailureReason } from './statement-failure.js';

/** Driver codes that say the database named in the connection does not exist on that server. */
const NO_SUCH_DATABASE = new Set(['3D000', 'ER_BAD_DB_ERROR']);

/**
 * A datasource that could not be opened, as a problem at its `connection` in the config file, where the fix
 * goes: `database "x" does not exist on host:port (3D000)`, `cannot reach the server at host:port: connection
 * refused (ECONNREFUSED)`. The address comes from the config, never the password.
 */
export function datasourceOpenFailure(config: ServiceConfig, name: string, error: unknown): StartupError {
  const connection = config.datasources[name]?.connection ?? {};
  const target = targetOf(connection);
  const code = driverCode(error);
  const at = target.address === undefined ? '' : ` on ${target.address}`;
  let reason: string;
  if (code !== undefined && NO_SUCH_DATABASE.has(code)) {
    reason = `database ${JSON.stringify(target.database ?? '?')} does not exist${at} (${code})`;
  } else {
    const unreachable = connectionFailureReason(error);
    const server = `the server${target.address === undefined ? '' : ` at ${target.address}`}`;
    if (unreachable === undefined) reason = `cannot open it: ${messageOf(error)}`;
    else if (unreachable.startsWith('authentication failed') && target.user !== undefined) reason = `${server} refused user ${JSON.stringify(target.user)}: ${unreachable}`;
    else reason = `cannot connect to ${server}: ${unreachable}`;
  }
  const problem = config.source.problem(['datasources', name, 'connection'], `datasources.${name}.connection: ${reason}`);
  return new StartupError(`${problem.file}:${problem.line}: ${problem.message}`, [problem], { cause: error });
}

interface Target {
  /** `host:port` as configured (or from the connection string). */
  address?: string;
  database?: string;
  user?: string;
}

/** Where the connection points, from the keys the adapters read: never the password. */
function targetOf(connection: Record<string, unknown>): Target {
  const text = (key: string) => (typeof connection[key] === 'string' || typeof connection[key] === 'number' ? String(connection[key]) : undefined);
  const url = text('connectionString');
  if (url !== undefined) {
    try {
      const parsed = new URL(url);
      return compact({ address: parsed.host || undefined, database: decodeURIComponent(parsed.pathname.replace(/^\//, '')) || undefined, user: decodeURIComponent(parsed.username) || undefined });
    } catch {
      return {};
    }
  }
  const host = text('host') ?? text('server');
  const port = text('port');
  const address = host === undefined ? text('connectString') : port === undefined ? host : `${host}:${port}`;
  return compact({ address, database: text('database'), user: text('user') });
}

function compact(target: { address: string | undefined; database: string | undefined; user: string | undefined }): Target {
  return Object.fromEntries(Object.entries(target).filter(([, value]) => value !== undefined));
}

/** The first short driver code along the error and its causes, e.g. `3D000`. */
function driverCode(error: unknown, depth = 0): string | undefined {
  if (!(error instanceof Error) || depth > 4) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^([0-9A-Z]{5}|ER_[A-Z_]+)$/.test(code)) return code;
  return driverCode(error.cause, depth + 1);
}
