/**
 * The start of a connection of the SQL front door, up to the first ReadyForQuery: the startup message
 * (refused 53300 on a connection over `sql.maxConnections`), the cleartext password request, and the password
 * (the caller's bearer token or JWT) checked as door-authentication.ts says, within the authentication timeout.
 */
import type { State } from 'pg-gateway';
import type { AuthScheme } from '../plugin-api/auth-scheme.js';
import type { VdbHandles } from '../vdb/vdb-handles.js';
import { authenticateCaller, type DoorCaller } from './door-authentication.js';
import { REPORTED_SETTINGS } from './session-commands.js';
import type { MessageReader, WireConnection } from './wire-connection.js';
import { WireError } from './wire-errors.js';
import { FRONTEND, messageType } from './wire-messages.js';

/** How long a connection may take, from its first byte, to send its startup message and password (PostgreSQL's authentication_timeout). */
export const AUTHENTICATION_TIMEOUT_MS = 60_000;

/**
 * Answers the startup message: 53300 and the end when the connection is one too many, else the password
 * request, its parameters kept in `parameters` (names in lower case). False when the connection ends.
 */
export function answerStartup(connection: WireConnection, state: State, overLimit: boolean, parameters: Map<string, string>): boolean {
  if (overLimit) {
    connection.send(connection.messages.error('FATAL', '53300', 'sorry, too many clients already'));
    connection.end();
    return false;
  }
  for (const [name, value] of Object.entries(state.clientInfo?.parameters ?? {})) parameters.set(name.toLowerCase(), value);
  connection.readMessages(connection.messages.authenticationCleartextPassword());
  return true;
}

/**
 * The caller the password message names for `database`; on any refusal (not a password message, 28P01,
 * 3D000, 42501) the FATAL error is sent, the connection ends and the result is undefined.
 */
export async function authenticate(
  connection: WireConnection, scheme: AuthScheme, handles: VdbHandles, reader: MessageReader, database: string | undefined,
): Promise<DoorCaller | undefined> {
  const type = messageType(reader);
  const password = reader.cstring();
  try {
    if (type !== FRONTEND.password) throw new WireError('08P01', 'expected a password message', undefined, 'FATAL');
    return await authenticateCaller(scheme, handles, password, database);
  } catch (error) {
    if (!(error instanceof WireError)) throw error;
    connection.send(connection.messages.error('FATAL', error.sqlState, error.message, error.detail));
    await connection.flush();
    connection.end();
    return undefined;
  }
}

/** What a server sends an authenticated client: AuthenticationOk, its settings, the cancel key, ReadyForQuery. */
export function welcome(connection: WireConnection, setting: (name: string) => string | undefined, processId: number, secret: number): void {
  const { messages } = connection;
  connection.send(messages.authenticationOk());
  for (const name of REPORTED_SETTINGS) connection.send(messages.parameterStatus(name, setting(name) ?? ''));
  connection.send(messages.backendKeyData(processId, secret));
  connection.send(messages.readyForQuery('I'));
}
