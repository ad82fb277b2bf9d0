/**
 * The built-ins an Oracle statement may call; names are folded to upper case and compare without case.
 * Left out on purpose: the session and the server (`SYS_CONTEXT`, `USERENV`, `ORA_*`), and every package
 * (`DBMS_*`, `UTL_*`): a package function is called qualified (`dbms_random.value`), and a qualified call
 * must be a function of the VDB.
 */
import { allowList, type FunctionPolicy } from '../../core/plugin-api/adapter-kit.js';

const ALLOWED = allowList({
  aggregates: [
    'avg', 'count', 'max', 'min', 'sum', 'listagg', 'median', 'stddev', 'stddev_pop', 'stddev_samp', 'variance',
    'var_pop', 'var_samp', 'approx_count_distinct', 'json_arrayagg', 'json_objectagg',
  ],
  statistics: [
    'corr', 'covar_pop', 'covar_samp', 'regr_avgx', 'regr_avgy', 'regr_count', 'regr_intercept', 'regr_r2',
    'regr_slope', 'regr_sxx', 'regr_sxy', 'regr_syy',
  ],
  orderedSet: ['percentile_cont', 'percentile_disc'],
  window: [
    'row_number', 'rank', 'dense_rank', 'percent_rank', 'cume_dist', 'ntile', 'lag', 'lead', 'first_value',
    'last_value', 'nth_value', 'ratio_to_report',
  ],
  math: [
    'abs', 'acos', 'asin', 'atan', 'atan2', 'bitand', 'ceil', 'cos', 'cosh', 'exp', 'floor', 'ln', 'log', 'mod',
    'power', 'remainder', 'round', 'sign', 'sin', 'sinh', 'sqrt', 'tan', 'tanh', 'trunc', 'width_bucket',
  ],
  strings: [
    'ascii', 'chr', 'concat', 'initcap', 'instr', 'length', 'lower', 'lpad', 'ltrim', 'regexp_count',
    'regexp_instr', 'regexp_like', 'regexp_replace', 'regexp_substr', 'replace', 'rpad', 'rtrim', 'soundex',
    'substr', 'translate', 'trim', 'upper',
  ],
  dateTime: [
    'add_months', 'current_date', 'current_timestamp', 'extract', 'from_tz', 'last_day', 'localtimestamp',
    'months_between', 'new_time', 'next_day', 'numtodsinterval', 'numtoyminterval', 'sys_extract_utc', 'sysdate',
    'systimestamp', 'tz_offset',
  ],
  formatting: ['to_char', 'to_number', 'to_date', 'to_timestamp', 'to_timestamp_tz', 'to_dsinterval', 'to_yminterval'],
  json: ['json_value', 'json_query', 'json_object', 'json_array'],
  conversions: ['cast'],
  conditionals: ['coalesce', 'nullif', 'nvl', 'nvl2', 'decode', 'greatest', 'least'],
});

/**
 * Oracle calls a function named without parentheses (`secret_fn`, `pkg.fn`), so there a name that is no
 * column may be a call. These built-ins and pseudo-columns are the bare names allowed.
 */
export const ORACLE_FUNCTIONS: FunctionPolicy = {
  builtinSchemas: [],
  allowed: ALLOWED,
  bareBuiltins: new Set([
    'SYSDATE', 'SYSTIMESTAMP', 'CURRENT_DATE', 'CURRENT_TIMESTAMP', 'LOCALTIMESTAMP', 'DBTIMEZONE', 'SESSIONTIMEZONE',
    'USER', 'UID', 'ROWNUM', 'ROWID', 'LEVEL',
  ]),
};
