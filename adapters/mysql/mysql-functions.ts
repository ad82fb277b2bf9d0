/**
 * The built-ins a MySQL or MariaDB statement may call; names compare without case. Left out on purpose:
 * files (`LOAD_FILE`), system commands (`SYS_EXEC`, `SYS_EVAL`), sleeping and locks (`SLEEP`, `BENCHMARK`,
 * `GET_LOCK`, `RELEASE_LOCK`, `IS_USED_LOCK`, `MASTER_POS_WAIT`), the connection and server
 * (`USER()`, `CURRENT_USER()`, `SESSION_USER()`, `SYSTEM_USER()`, `VERSION()`, `DATABASE()`,
 * `CONNECTION_ID()`, `LAST_INSERT_ID()`, `FOUND_ROWS()`, `UUID_SHORT()`). `@@` and `@` variables are
 * refused by the authorizer whatever the list says.
 */
import { allowList, type FunctionPolicy } from '../../core/plugin-api/adapter-kit.js';

const ALLOWED = allowList({
  aggregates: [
    'avg', 'bit_and', 'bit_or', 'bit_xor', 'count', 'group_concat', 'json_arrayagg', 'json_objectagg', 'max',
    'min', 'sum', 'std', 'stddev', 'stddev_pop', 'stddev_samp', 'variance', 'var_pop', 'var_samp',
  ],
  // MariaDB's ordered-set aggregates and MEDIAN.
  orderedSet: ['median', 'percentile_cont', 'percentile_disc'],
  window: [
    'row_number', 'rank', 'dense_rank', 'percent_rank', 'cume_dist', 'ntile', 'lag', 'lead', 'first_value',
    'last_value', 'nth_value',
  ],
  math: [
    'abs', 'acos', 'asin', 'atan', 'atan2', 'ceil', 'ceiling', 'conv', 'cos', 'cot', 'crc32', 'degrees', 'exp',
    'floor', 'ln', 'log', 'log10', 'log2', 'mod', 'pi', 'pow', 'power', 'radians', 'rand', 'round', 'sign', 'sin',
    'sqrt', 'tan', 'truncate',
  ],
  strings: [
    'ascii', 'bin', 'bit_length', 'char', 'char_length', 'character_length', 'concat', 'concat_ws', 'elt',
    'export_set', 'field', 'find_in_set', 'format', 'from_base64', 'hex', 'insert', 'instr', 'lcase', 'left',
    'length', 'locate', 'lower', 'lpad', 'ltrim', 'make_set', 'mid', 'oct', 'octet_length', 'ord', 'position',
    'quote', 'regexp_instr', 'regexp_like', 'regexp_replace', 'regexp_substr', 'repeat', 'replace', 'reverse',
    'right', 'rpad', 'rtrim', 'soundex', 'space', 'strcmp', 'substr', 'substring', 'substring_index', 'to_base64',
    'trim', 'ucase', 'unhex', 'upper', 'md5', 'sha', 'sha1', 'sha2', 'uuid', 'bin_to_uuid', 'uuid_to_bin', 'is_uuid',
  ],
  dateTime: [
    'adddate', 'addtime', 'convert_tz', 'curdate', 'current_date', 'current_time', 'current_timestamp', 'curtime',
    'date', 'date_add', 'date_format', 'date_sub', 'datediff', 'day', 'dayname', 'dayofmonth', 'dayofweek',
    'dayofyear', 'extract', 'from_days', 'from_unixtime', 'get_format', 'hour', 'last_day', 'localtime',
    'localtimestamp', 'makedate', 'maketime', 'microsecond', 'minute', 'month', 'monthname', 'now', 'period_add',
    'period_diff', 'quarter', 'sec_to_time', 'second', 'str_to_date', 'subdate', 'subtime', 'sysdate', 'time',
    'time_format', 'time_to_sec', 'timediff', 'timestamp', 'timestampadd', 'timestampdiff', 'to_days', 'to_seconds',
    'unix_timestamp', 'utc_date', 'utc_time', 'utc_timestamp', 'week', 'weekday', 'weekofyear', 'year', 'yearweek',
  ],
  json: [
    'json_array', 'json_array_append', 'json_array_insert', 'json_contains', 'json_contains_path', 'json_depth',
    'json_extract', 'json_insert', 'json_keys', 'json_length', 'json_merge', 'json_merge_patch',
    'json_merge_preserve', 'json_object', 'json_overlaps', 'json_pretty', 'json_quote', 'json_remove',
    'json_replace', 'json_search', 'json_set', 'json_type', 'json_unquote', 'json_valid', 'json_value',
  ],
  conversions: ['cast', 'convert', 'binary'],
  conditionals: ['coalesce', 'nullif', 'greatest', 'least', 'if', 'ifnull', 'isnull', 'interval'],
  // `INSERT … ON DUPLICATE KEY UPDATE c = VALUES(c)`: the row being inserted.
  statement: ['values'],
});

/** MySQL has no schema of built-ins: `db.fn()` names a stored function of that database. */
export const MYSQL_FUNCTIONS: FunctionPolicy = { builtinSchemas: [], allowed: ALLOWED };
