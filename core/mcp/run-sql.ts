/**
 * `run_sql`: a caller's own read-only statement through the statement pipeline (render here, then
 * authorize and run as every door does), its `$n` parameters read as the SQL front door reads them, on
 * every backend. A write is refused by the analyzer, and by the database too: the statement runs read-only.
 */
import { denialError, isDenial } from '../plugin-api/denial.js';
import { ForbiddenError, InputError, InternalError } from '../plugin-api/errors.js';
import type { VirtualDatabase } from '../plugin-api/vdb.js';
import { positionalText } from '../sql-door/placeholders.js';
import { WireError } from '../sql-door/wire-errors.js';
import { driverCodeSuffix } from '../sql/driver-code.js';
import { readFailure, type CallerRead } from '../sql/read-failure.js';
import { authorizeStatement, grantsOn, runAuthorized } from '../statements/statement-pipeline.js';
import type { McpServices, ToolCaller } from './mcp-services.js';

type Arguments = Readonly<Record<string, unknown>>;

export async function runSql(services: McpServices, vdb: VirtualDatabase, args: Arguments, caller: ToolCaller): Promise<Record<string, unknown>> {
  const { sql, params = [], maxRows } = args;
  if (sql === undefined || sql === null) throw new InputError('missing_fields', 'the arguments lack needed field sql', { details: { missing: ['sql'] } });
  if (typeof sql !== 'string') throw new InputError('invalid_body', 'sql must be a string');
  if (!Array.isArray(params)) throw new InputError('invalid_body', 'params must be an array of the values of $1, $2, …');
  if (maxRows !== undefined && (typeof maxRows !== 'number' || !Number.isInteger(maxRows) || maxRows < 0)) {
    throw new InputError('invalid_body', 'maxRows must be a non-negative integer');
  }
  const handle = services.handles.lookup(vdb.name, vdb.version);
  if (typeof handle === 'string') throw new InternalError('internal_error', handle);
  const grants = grantsOn(handle, caller.principal);
  if (grants.access === 'unavailable') throw new ForbiddenError('forbidden', `the caller has no data role on VDB ${vdb.name} version ${vdb.version}`);
  const positional = readParameters(sql, handle.dialect);
  if (positional.parameterCount > params.length) {
    throw new InputError('invalid_body', `the statement takes ${positional.parameterCount} parameter${positional.parameterCount === 1 ? '' : 's'}; params has ${params.length}`);
  }
  const decision = await authorizeStatement({ handle, sql: positional.sql, bindings: positional.order.map((index) => params[index]), grants, readOnly: true });
  if (isDenial(decision)) throw denialError(decision);
  const { requestTimeoutMs: timeoutMs, maxResultBytes } = services.config.server;
  const read: CallerRead = { subject: 'the statement', datasource: decision.datasource.name, timeoutMs, maxResultBytes };
  try {
    const result = await runAuthorized(decision, { timeoutMs, maxRowBytes: maxResultBytes, signal: caller.signal }, {
      maxBytes: maxResultBytes, ...(maxRows !== undefined && { maxRows }),
    });
    return { columns: result.columns, rows: result.rows, rowCount: result.rows.length, truncated: result.truncated };
  } catch (error) {
    throw readFailure(error, read, (failure) => (failure.kind === 'invalid_value'
      ? new InputError('invalid_body', `the database refused a value of the statement${driverCodeSuffix(failure)}`)
      : new InternalError('query_failed', `the statement failed${driverCodeSuffix(failure)}`, { cause: failure.driverError })));
  }
}

/** `$n` to the dialect's placeholders; what the SQL front door refuses in a text, the tool refuses as a bad argument. */
function readParameters(sql: string, dialect: Parameters<typeof positionalText>[1]): ReturnType<typeof positionalText> {
  try {
    return positionalText(sql, dialect);
  } catch (error) {
    if (error instanceof WireError) throw new InputError('invalid_body', error.message);
    throw error;
  }
}
