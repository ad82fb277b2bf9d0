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
  | { kind: 'show-all' }
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
  role: 'none',
  transaction_isolation: 'read committed',
  transaction_read_only: 'on',
  transaction_deferrable: 'off',
  default_transaction_read_only: 'on',
  max_identifier_length: '63',
  extra_float_digits: '1',
  search_path: '',
  application_name: '',
};

/**
 * What `SHOW ALL` lists (PostgreSQL's descriptions): the settings above but those PostgreSQL leaves out of
 * it (`is_superuser`, `role`, `session_authorization`).
 */
export const SETTING_DESCRIPTIONS: Readonly<Record<string, string>> = {
  application_name: 'Sets the application name to be reported in statistics and logs.',
  client_encoding: "Sets the client's character set encoding.",
  datestyle: 'Sets the display format for date and time values.',
  default_transaction_read_only: 'Sets the default read-only status of new transactions.',
  extra_float_digits: 'Sets the number of digits displayed for floating-point values.',
  integer_datetimes: 'Shows whether datetimes are integer based.',
  intervalstyle: 'Sets the display format for interval values.',
  max_identifier_length: 'Shows the maximum identifier length.',
  search_path: 'Sets the schema search order for names that are not schema-qualified.',
  server_encoding: 'Shows the server (database) character set encoding.',
  server_version: 'Shows the server version.',
  server_version_num: 'Shows the server version as an integer.',
  standard_conforming_strings: "Causes '...' strings to treat backslashes literally.",
  timezone: 'Sets the time zone for displaying and interpreting time stamps.',
  transaction_deferrable: 'Whether to defer a read-only serializable transaction until it can be executed with no possible serialization failures.',
  transaction_isolation: "Sets the current transaction's isolation level.",
  transaction_read_only: "Sets the current transaction's read-only status.",
};

/** Settings PostgreSQL spells in mixed case: `SHOW` names its column so, and `SHOW ALL` lists them so. */
const SPELLING: Readonly<Record<string, string>> = { datestyle: 'DateStyle', intervalstyle: 'IntervalStyle', timezone: 'TimeZone' };

/** A setting's name as PostgreSQL spells it (`TimeZone`), from the lower-case name. */
export function settingSpelling(name: string): string {
  return SPELLING[name] ?? name;
}

/**
 * The settings SHOW answers with a word sequence of PostgreSQL's grammar rather than a name
 * (`SHOW TIME ZONE`), keyed by the words in lower case, single-spaced.
 */
const SHOW_PHRASES: Readonly<Record<string, string>> = {
  'time zone': 'timezone',
  'transaction isolation level': 'transaction_isolation',
  'session authorization': 'session_authorization',
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
    case 'show': return showCommand(words.slice(1));
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

/** `SHOW name`, `SHOW ALL`, or one of the phrases of SHOW_PHRASES (PostgreSQL's `VariableShowStmt`). */
function showCommand(words: string[]): SessionCommand {
  const phrase = words.join(' ').toLowerCase();
  if (phrase === 'all') return { kind: 'show-all' };
  const name = SHOW_PHRASES[phrase];
  if (name !== undefined) return { kind: 'show', name };
  if (words.length !== 1) throw new WireError('42601', `syntax error in SHOW: ${words.join(' ')}`);
  return { kind: 'show', name: settingName(words[0]) };
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
