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
  /**
   * `SELECT pg_catalog.set_config('name', 'value', false)`: a SET answering the value, as pg_dump sets its
   * search path; `absent`: the same of a setting the door does not have, read from pg_settings by name, which
   * answers no row.
   */
  | { kind: 'set-config'; name: string; value: string; absent?: true }
  | { kind: 'reset'; name: string | undefined }
  | { kind: 'show'; name: string }
  | { kind: 'show-all' }
  | { kind: 'begin' }
  | { kind: 'commit' }
  | { kind: 'rollback' }
  /** SAVEPOINT, RELEASE [SAVEPOINT], ROLLBACK [WORK | TRANSACTION] TO [SAVEPOINT]: a savepoint of the block, by its folded name. */
  | { kind: 'savepoint' | 'release' | 'rollback-to'; name: string }
  | { kind: 'tag'; tag: string }
  | { kind: 'declare'; cursor: CursorDeclaration }
  | { kind: 'fetch'; name: string; direction: FetchDirection; move: boolean }
  | { kind: 'close'; name: string | undefined }
  | { kind: 'lock'; relations: RelationName[]; mode: string }
  | { kind: 'prepare'; name: string; query: string }
  | { kind: 'execute'; name: string; values: (string | null)[] }
  | { kind: 'deallocate'; name: string | undefined }
  /** `COPY … TO STDOUT` in the text format, as the query it reads. */
  | { kind: 'copy'; query: string };

/** `DECLARE name [BINARY] [ASENSITIVE | INSENSITIVE] [[NO] SCROLL] CURSOR [WITH | WITHOUT HOLD] FOR query`. */
export interface CursorDeclaration {
  name: string;
  binary: boolean;
  /** SCROLL: it may move backward. NO SCROLL and the default: forward only (PostgreSQL's default depends on the plan). */
  scroll: boolean;
  hold: boolean;
  /** The query, as the client wrote it. */
  query: string;
}

/**
 * Where FETCH and MOVE go, in PostgreSQL's terms: `forward`/`backward` n rows (Infinity: ALL), or one row
 * at an `absolute` or `relative` position (NEXT is forward 1, PRIOR backward 1, FIRST absolute 1, LAST
 * absolute -1).
 */
export type FetchDirection =
  | { kind: 'forward' | 'backward'; count: number }
  | { kind: 'absolute' | 'relative'; count: number };

/** A relation named by a statement: schema (when qualified) and name, as PostgreSQL folds them. */
export interface RelationName {
  schema: string | undefined;
  name: string;
}

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
    case 'select': return setConfigCommand(statement);
    case 'reset': return { kind: 'reset', name: /^reset\s+all$/i.test(statement) ? undefined : settingName(words[1]) };
    case 'show': return showCommand(words.slice(1));
    case 'begin':
    case 'start': return { kind: 'begin' };
    case 'commit':
    case 'end': return { kind: 'commit' };
    case 'rollback': return ROLLBACK_TO.test(statement) ? savepointCommand(statement, 'rollback-to') : { kind: 'rollback' };
    case 'abort': return { kind: 'rollback' };
    case 'savepoint': return savepointCommand(statement, 'savepoint');
    case 'release': return savepointCommand(statement, 'release');
    case 'discard': return { kind: 'tag', tag: `DISCARD ${(words[1] ?? 'ALL').toUpperCase()}` };
    case 'deallocate': return deallocateCommand(statement);
    case 'prepare': return prepareCommand(text);
    case 'copy': return copyCommand(statement);
    case 'execute': return executeCommand(statement);
    case 'declare': return declareCommand(text);
    case 'fetch':
    case 'move': return fetchCommand(statement, first === 'move');
    case 'close': return closeCommand(statement);
    case 'lock': return lockCommand(statement);
    default: return undefined;
  }
}

/** An identifier, quoted or not. */
const IDENTIFIER = String.raw`(?:"(?:[^"]|"")+"|[A-Za-z_\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff]*)`;

/** A relation's name, qualified or not. */
const QUALIFIED_NAME = String.raw`${IDENTIFIER}(?:\s*\.\s*${IDENTIFIER})?`;

/** An identifier as PostgreSQL reads it: quoted as written, unquoted folded to lower case. */
function identifier(token: string): string {
  return token.startsWith('"') ? token.slice(1, -1).replaceAll('""', '"') : token.toLowerCase();
}

const DECLARE = new RegExp(String.raw`^\s*declare\s+(${IDENTIFIER})\s+((?:(?:binary|asensitive|insensitive|no\s+scroll|scroll)\s+)*)`
  + String.raw`cursor\s+(?:(with|without)\s+hold\s+)?for\s+([\s\S]+)$`, 'i');

const PREPARE = new RegExp(String.raw`^\s*prepare\s+(${IDENTIFIER})\s*(?:\([^)]*\)\s*)?as\s+([\s\S]+)$`, 'i');

/**
 * `PREPARE name [(type, ...)] AS statement` (pg_dump prepares its per-object catalog queries so): the
 * statement's parameters are typed where it uses them, as PostgreSQL does for an unknown type.
 */
function prepareCommand(text: string): SessionCommand {
  const match = PREPARE.exec(text.replace(/^(?:\s|--[^\n]*|\/\*[\s\S]*?\*\/)*/, '').replace(/;\s*$/, ''));
  if (!match) throw new WireError('42601', 'syntax error in PREPARE: expected PREPARE name [(type, ...)] AS statement');
  return { kind: 'prepare', name: identifier(match[1] as string), query: match[2] as string };
}

/** A constant of EXECUTE's list: a string or a number, with an optional cast; or NULL. */
const CONSTANT = /^\s*(?:'((?:[^']|'')*)'|([-+]?[0-9][0-9.e+-]*)|(null))\s*(?:::\s*[A-Za-z_][\w.]*(?:\[\])?\s*)?(?:,|$)/i;

/** `EXECUTE name [(constant, ...)]`: the values are bound as the prepared statement's parameters. */
function executeCommand(statement: string): SessionCommand {
  const match = new RegExp(String.raw`^execute\s+(${IDENTIFIER})\s*(?:\(([\s\S]*)\))?$`, 'i').exec(statement);
  if (!match) throw new WireError('42601', `syntax error in EXECUTE: ${statement}`);
  const values: (string | null)[] = [];
  let rest = match[2] ?? '';
  while (rest.trim() !== '') {
    const constant = CONSTANT.exec(rest);
    if (!constant) throw new WireError('0A000', 'EXECUTE takes constants here (strings, numbers, NULL): bind other values with the extended protocol');
    values.push(constant[1] !== undefined ? constant[1].replaceAll("''", "'") : constant[2] ?? null);
    rest = rest.slice(constant[0].length);
  }
  return { kind: 'execute', name: identifier(match[1] as string), values };
}

const COPY = new RegExp(String.raw`^copy\s+(?:\(([\s\S]+)\)|(${QUALIFIED_NAME})\s*(?:\(([^)]*)\))?)\s+to\s+stdout(?:\s+(?:with\s*)?\(\s*format\s+text\s*\))?$`, 'i');

/**
 * `COPY (query) TO STDOUT` and `COPY name [(column, ...)] TO STDOUT` (pg_dump's data), in the text format:
 * the table's form reads `SELECT columns FROM name`, which is authorized as any statement. COPY FROM and
 * the other formats are not served.
 */
function copyCommand(statement: string): SessionCommand {
  const match = COPY.exec(statement);
  if (!match) throw new WireError('0A000', 'only COPY … TO STDOUT in the text format is served by the SQL front door');
  if (match[1] !== undefined) return { kind: 'copy', query: match[1] };
  return { kind: 'copy', query: `select ${match[3]?.trim() || '*'} from ${match[2] as string}` };
}

function deallocateCommand(statement: string): SessionCommand {
  const match = new RegExp(String.raw`^deallocate(?:\s+prepare)?\s+(${IDENTIFIER})$`, 'i').exec(statement);
  if (!match) throw new WireError('42601', `syntax error in DEALLOCATE: ${statement}`);
  const name = match[1] as string;
  return { kind: 'deallocate', name: name.toLowerCase() === 'all' ? undefined : identifier(name) };
}

/** The query keeps its comments and literals: only the statement's leading comments and its final `;` go. */
function declareCommand(text: string): SessionCommand {
  const statement = text.replace(/^(?:\s|--[^\n]*|\/\*[\s\S]*?\*\/)*/, '').replace(/;\s*$/, '');
  const match = DECLARE.exec(statement);
  if (!match) throw new WireError('42601', 'syntax error in DECLARE: expected DECLARE name [BINARY] [[NO] SCROLL] CURSOR [WITH | WITHOUT HOLD] FOR query');
  const options = (match[2] as string).toLowerCase().split(/\s+/).join(' ');
  return {
    kind: 'declare',
    cursor: {
      name: identifier(match[1] as string),
      binary: /\bbinary\b/.test(options),
      scroll: /(^|\s)scroll\b/.test(options) && !/\bno scroll\b/.test(options),
      hold: (match[3] ?? '').toLowerCase() === 'with',
      query: match[4] as string,
    },
  };
}

const COUNT = String.raw`[-+]?\d+`;
const FETCH = new RegExp(String.raw`^(?:fetch|move)(?:\s+(next|prior|first|last|(?:absolute|relative)\s+${COUNT}|all|${COUNT}|(?:forward|backward)(?:\s+(?:all|${COUNT}))?))?`
  + String.raw`(?:\s+(?:from|in))?\s+(${IDENTIFIER})$`, 'i');

/** `FETCH [direction] [FROM | IN] name` and MOVE, in each of PostgreSQL's directions. */
function fetchCommand(statement: string, move: boolean): SessionCommand {
  const match = FETCH.exec(statement);
  if (!match) throw new WireError('42601', `syntax error in ${move ? 'MOVE' : 'FETCH'}: ${statement}`);
  return { kind: 'fetch', name: identifier(match[2] as string), direction: fetchDirection((match[1] ?? 'next').toLowerCase().split(/\s+/)), move };
}

function fetchDirection([word, count]: string[]): FetchDirection {
  const howMany = (text: string | undefined) => (text === undefined ? 1 : text === 'all' ? Infinity : Number(text));
  switch (word) {
    case 'next': return { kind: 'forward', count: 1 };
    case 'prior': return { kind: 'backward', count: 1 };
    case 'first': return { kind: 'absolute', count: 1 };
    case 'last': return { kind: 'absolute', count: -1 };
    case 'absolute':
    case 'relative': return { kind: word, count: Number(count) };
    case 'forward':
    case 'backward': return { kind: word, count: howMany(count) };
    default: return { kind: 'forward', count: howMany(word) };
  }
}

function closeCommand(statement: string): SessionCommand {
  const match = new RegExp(String.raw`^close\s+(${IDENTIFIER})$`, 'i').exec(statement);
  if (!match) throw new WireError('42601', `syntax error in CLOSE: ${statement}`);
  const name = match[1] as string;
  return { kind: 'close', name: name.toLowerCase() === 'all' ? undefined : identifier(name) };
}

const ROLLBACK_TO = /^rollback(?:\s+(?:work|transaction))?\s+to\b/i;
const SAVEPOINT_STATEMENT = {
  'savepoint': new RegExp(String.raw`^savepoint\s+(${IDENTIFIER})$`, 'i'),
  'release': new RegExp(String.raw`^release(?:\s+savepoint)?\s+(${IDENTIFIER})$`, 'i'),
  'rollback-to': new RegExp(String.raw`^rollback(?:\s+(?:work|transaction))?\s+to(?:\s+savepoint)?\s+(${IDENTIFIER})$`, 'i'),
};

function savepointCommand(statement: string, kind: keyof typeof SAVEPOINT_STATEMENT): SessionCommand {
  const match = SAVEPOINT_STATEMENT[kind].exec(statement);
  if (!match) throw new WireError('42601', `syntax error at or near "${statement}"`);
  return { kind, name: identifier(match[1] as string) };
}

const LOCK = new RegExp(String.raw`^lock(?:\s+table)?(?:\s+only)?\s+(${QUALIFIED_NAME}(?:\s*\*)?(?:\s*,\s*(?:only\s+)?${QUALIFIED_NAME}(?:\s*\*)?)*)`
  + String.raw`(?:\s+in\s+([a-z ]+?)\s+mode)?(?:\s+nowait)?$`, 'i');

/** `LOCK [TABLE] [ONLY] name [*] [, ...] [IN mode MODE] [NOWAIT]`; without a mode, ACCESS EXCLUSIVE, as PostgreSQL. */
function lockCommand(statement: string): SessionCommand {
  const match = LOCK.exec(statement);
  if (!match) throw new WireError('42601', `syntax error in LOCK: ${statement}`);
  const relations = (match[1] as string).split(',').map((item) => {
    const parts = [...item.replace(/^\s*only\s+/i, '').replace(/\*\s*$/, '').matchAll(new RegExp(IDENTIFIER, 'g'))].map((part) => identifier(part[0]));
    return parts.length === 2 ? { schema: parts[0], name: parts[1] as string } : { schema: undefined, name: parts[0] as string };
  });
  return { kind: 'lock', relations, mode: (match[2] ?? 'access exclusive').toLowerCase().split(/\s+/).join(' ') };
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

const SET_CONFIG = /^select\s+(?:pg_catalog\s*\.\s*)?set_config\s*\(\s*'(search_path)'\s*,\s*'((?:[^']|'')*)'\s*,\s*false\s*\)$/i;

/**
 * A session-wide `set_config` of the search path to a constant (pg_dump's first statement): the door keeps
 * it, as it keeps a SET's, and the catalog answers run under it. Any other `set_config` is a statement.
 */
function setConfigCommand(statement: string): SessionCommand | undefined {
  const match = SET_CONFIG.exec(statement);
  if (match) return { kind: 'set-config', name: (match[1] as string).toLowerCase(), value: (match[2] as string).replaceAll("''", "'") };
  const bySettings = SET_CONFIG_FROM_SETTINGS.exec(statement);
  if (!bySettings) return undefined;
  const name = (bySettings[2] as string).toLowerCase();
  return { kind: 'set-config', name, value: (bySettings[1] as string).replaceAll("''", "'"), ...(!(name in SERVER_SETTINGS) && { absent: true as const }) };
}

/**
 * pg_dump 15.8 and later: `SELECT set_config(name, 'view, foreign-table', false) FROM pg_settings WHERE name =
 * 'restrict_nonsystem_relation_kind'`, written to answer no row on a server without that setting, as the
 * PostgreSQL 15.0 the door reports is.
 */
const SET_CONFIG_FROM_SETTINGS = /^select\s+(?:pg_catalog\s*\.\s*)?set_config\s*\(\s*name\s*,\s*'((?:[^']|'')*)'\s*,\s*false\s*\)\s+from\s+(?:pg_catalog\s*\.\s*)?pg_settings\s+where\s+name\s*=\s*'([a-z_]+)'$/i;

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
