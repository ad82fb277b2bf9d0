/**
 * The session statements drivers send on their own (JDBC: `SET extra_float_digits = 3`,
 * `SET application_name = …`; psql and others: `BEGIN`, `SHOW …`), answered by the door without reaching
 * a datasource: the analyzer refuses them on every route, and a datasource connection is not kept between
 * statements, so there is no session of the database to set. docs/sql.md#sessions says what each does.
 */
import { SERVER_VERSION, SERVER_VERSION_NUM } from './server-version.js';
import { WireError } from './wire-errors.js';

/** What a session statement does. */
export type SessionCommand =
  | { kind: 'set'; name: string; value: string }
  | { kind: 'reset'; name: string | undefined }
  | { kind: 'show'; name: string }
  | { kind: 'begin' }
  | { kind: 'commit' }
  | { kind: 'rollback' }
  | { kind: 'tag'; tag: string };

/** The server settings a client may read (and is sent at startup), by lower-case name. */
export const SERVER_SETTINGS: Readonly<Record<string, string>> = {
  server_version: SERVER_VERSION,
  server_version_num: SERVER_VERSION_NUM,
  server_encoding: 'UTF8',
  client_encoding: 'UTF8',
  datestyle: 'ISO, MDY',
  intervalstyle: 'postgres',
  timezone: 'UTC',
  integer_datetimes: 'on',
  standard_conforming_strings: 'on',
  is_superuser: 'off',
  transaction_isolation: 'read committed',
  transaction_read_only: 'on',
  default_transaction_read_only: 'on',
  max_identifier_length: '63',
  extra_float_digits: '1',
  search_path: '',
  application_name: '',
};

/** The settings a PostgreSQL server reports at startup (ParameterStatus), under their reported spelling. */
export const REPORTED_SETTINGS = ['server_version', 'server_encoding', 'client_encoding', 'DateStyle', 'IntervalStyle', 'TimeZone',
  'integer_datetimes', 'standard_conforming_strings', 'is_superuser', 'application_name'] as const;

const COMMENTS = /--[^\n]*|\/\*[\s\S]*?\*\//g;

/** The session statement `text` is, or undefined when it is a statement for the VDB. */
export function sessionCommand(text: string): SessionCommand | undefined {
  const statement = text.replace(COMMENTS, ' ').trim().replace(/;\s*$/, '').trim();
  const words = statement.split(/\s+/);
  const first = (words[0] ?? '').toLowerCase();
  switch (first) {
    case 'set': return setCommand(statement);
    case 'reset': return { kind: 'reset', name: /^reset\s+all$/i.test(statement) ? undefined : settingName(words[1]) };
    case 'show': return { kind: 'show', name: settingName(words.slice(1).join(' ')) };
    case 'begin':
    case 'start': return { kind: 'begin' };
    case 'commit':
    case 'end': return { kind: 'commit' };
    case 'rollback':
    case 'abort': return { kind: 'rollback' };
    case 'discard': return { kind: 'tag', tag: `DISCARD ${(words[1] ?? 'ALL').toUpperCase()}` };
    case 'deallocate': return { kind: 'tag', tag: 'DEALLOCATE' };
    default: return undefined;
  }
}

function setCommand(statement: string): SessionCommand {
  // SET [SESSION | LOCAL] name { TO | = } value; SET SESSION CHARACTERISTICS AS TRANSACTION …; SET TIME ZONE …
  const body = statement.replace(/^set\s+(session\s+|local\s+)?/i, '');
  if (/^characteristics\s/i.test(body) || /^transaction\s/i.test(body)) return { kind: 'tag', tag: 'SET' };
  const zone = /^time\s+zone\s+(.+)$/i.exec(body);
  if (zone) return { kind: 'set', name: 'timezone', value: unquote(zone[1] as string) };
  const match = /^([A-Za-z_][A-Za-z0-9_.]*)\s*(?:=|\s+to\s+)\s*([\s\S]+)$/i.exec(body);
  if (!match) throw new WireError('42601', `syntax error in SET: ${statement}`);
  return { kind: 'set', name: settingName(match[1]), value: unquote(match[2] as string) };
}

function settingName(word: string | undefined): string {
  return (word ?? '').replace(/^"|"$/g, '').toLowerCase();
}

function unquote(value: string): string {
  const trimmed = value.trim();
  if (/^'.*'$/s.test(trimmed)) return trimmed.slice(1, -1).replaceAll("''", "'");
  return trimmed.replace(/^"|"$/g, '');
}
