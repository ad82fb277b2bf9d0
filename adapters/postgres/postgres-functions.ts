/**
 * The built-ins a PostgreSQL statement may call (PostgreSQL and PGlite). Left out on purpose: whatever reads
 * server files, settings, sessions or definitions, or changes them (`pg_read_file`, `pg_ls_dir`,
 * `pg_hba_file_rules`, `pg_show_all_file_settings`, `current_setting`, `set_config`, `version`,
 * `inet_server_addr`, `has_*_privilege`, `pg_get_*def`, `txid_*`, `pg_current_*`), sleeps or locks
 * (`pg_sleep*`, `pg_advisory_*`), other backends (`pg_terminate_backend`), large objects (`lo_*`), other
 * databases (`dblink*`), SQL given as text (`query_to_xml`, `table_to_xml`, `ts_stat`), notifications and
 * sequences (`pg_notify`, `nextval`, `setval`), and XPath (`xpath`, `xmlexists`). `current_user` and its
 * kin are SQL keywords, not calls: they name the role the statement runs as.
 */
import { allowList, type FunctionPolicy } from '../../core/plugin-api/adapter-kit.js';

const ALLOWED = allowList({
  aggregates: [
    'avg', 'bit_and', 'bit_or', 'bit_xor', 'bool_and', 'bool_or', 'every', 'count', 'max', 'min', 'sum', 'any_value',
    'array_agg', 'string_agg', 'range_agg', 'range_intersect_agg', 'json_agg', 'json_agg_strict', 'jsonb_agg',
    'jsonb_agg_strict', 'json_object_agg', 'json_object_agg_strict', 'json_object_agg_unique', 'json_object_agg_unique_strict',
    'jsonb_object_agg', 'jsonb_object_agg_strict', 'jsonb_object_agg_unique', 'jsonb_object_agg_unique_strict',
  ],
  statistics: [
    'corr', 'covar_pop', 'covar_samp', 'regr_avgx', 'regr_avgy', 'regr_count', 'regr_intercept', 'regr_r2',
    'regr_slope', 'regr_sxx', 'regr_sxy', 'regr_syy', 'stddev', 'stddev_pop', 'stddev_samp', 'variance', 'var_pop', 'var_samp',
  ],
  orderedSet: ['mode', 'percentile_cont', 'percentile_disc'],
  window: [
    'row_number', 'rank', 'dense_rank', 'percent_rank', 'cume_dist', 'ntile', 'lag', 'lead', 'first_value',
    'last_value', 'nth_value',
  ],
  math: [
    'abs', 'cbrt', 'ceil', 'ceiling', 'degrees', 'div', 'erf', 'erfc', 'exp', 'factorial', 'floor', 'gcd', 'lcm',
    'ln', 'log', 'log10', 'min_scale', 'mod', 'pi', 'power', 'radians', 'round', 'scale', 'sign', 'sqrt',
    'trim_scale', 'trunc', 'width_bucket', 'random', 'random_normal', 'acos', 'acosd', 'asin', 'asind', 'atan',
    'atand', 'atan2', 'atan2d', 'cos', 'cosd', 'cot', 'cotd', 'sin', 'sind', 'tan', 'tand', 'sinh', 'cosh',
    'tanh', 'asinh', 'acosh', 'atanh',
  ],
  strings: [
    'ascii', 'bit_length', 'btrim', 'char_length', 'character_length', 'chr', 'concat', 'concat_ws', 'format',
    'initcap', 'left', 'length', 'lower', 'lpad', 'ltrim', 'md5', 'normalize', 'is_normalized', 'octet_length',
    'overlay', 'position', 'quote_ident', 'quote_literal', 'quote_nullable', 'regexp_count', 'regexp_instr',
    'regexp_like', 'regexp_match', 'regexp_matches', 'regexp_replace', 'regexp_split_to_array',
    'regexp_split_to_table', 'regexp_substr', 'repeat', 'replace', 'reverse', 'right', 'rpad', 'rtrim',
    'split_part', 'starts_with', 'string_to_array', 'string_to_table', 'strpos', 'substr', 'substring',
    'to_hex', 'to_bin', 'to_oct', 'translate', 'unistr', 'upper', 'casefold', 'like_escape', 'similar_escape',
    'similar_to_escape', 'encode', 'decode', 'convert_from', 'convert_to', 'sha224', 'sha256', 'sha384', 'sha512',
    'crc32', 'crc32c', 'get_byte', 'get_bit', 'bit_count', 'gen_random_uuid', 'uuidv4', 'uuidv7',
    'uuid_extract_timestamp', 'uuid_extract_version',
  ],
  textSearch: [
    'to_tsvector', 'to_tsquery', 'plainto_tsquery', 'phraseto_tsquery', 'websearch_to_tsquery', 'ts_rank',
    'ts_rank_cd', 'ts_headline', 'setweight',
  ],
  dateTime: [
    'age', 'clock_timestamp', 'date_add', 'date_bin', 'date_part', 'date_subtract', 'date_trunc', 'extract',
    'isfinite', 'justify_days', 'justify_hours', 'justify_interval', 'make_date', 'make_interval', 'make_time',
    'make_timestamp', 'make_timestamptz', 'now', 'statement_timestamp', 'timeofday', 'transaction_timestamp',
    'timezone', 'overlaps',
  ],
  formatting: ['to_char', 'to_number', 'to_date', 'to_timestamp'],
  json: [
    'to_json', 'to_jsonb', 'array_to_json', 'row_to_json', 'json_build_array', 'jsonb_build_array',
    'json_build_object', 'jsonb_build_object', 'json_object', 'jsonb_object', 'json_array_elements',
    'jsonb_array_elements', 'json_array_elements_text', 'jsonb_array_elements_text', 'json_array_length',
    'jsonb_array_length', 'json_each', 'jsonb_each', 'json_each_text', 'jsonb_each_text', 'json_extract_path',
    'jsonb_extract_path', 'json_extract_path_text', 'jsonb_extract_path_text', 'json_object_keys',
    'jsonb_object_keys', 'json_populate_record', 'jsonb_populate_record', 'jsonb_populate_record_valid',
    'json_populate_recordset', 'jsonb_populate_recordset', 'json_to_record', 'jsonb_to_record',
    'json_to_recordset', 'jsonb_to_recordset', 'json_strip_nulls', 'jsonb_strip_nulls', 'jsonb_set',
    'jsonb_set_lax', 'jsonb_insert', 'jsonb_pretty', 'json_typeof', 'jsonb_typeof', 'jsonb_path_exists',
    'jsonb_path_exists_tz', 'jsonb_path_match', 'jsonb_path_match_tz', 'jsonb_path_query', 'jsonb_path_query_tz',
    'jsonb_path_query_array', 'jsonb_path_query_array_tz', 'jsonb_path_query_first', 'jsonb_path_query_first_tz',
  ],
  conversions: [
    'int2', 'int4', 'int8', 'float4', 'float8', 'numeric', 'text', 'bool', 'varchar', 'bpchar', 'date', 'time',
    'timetz', 'timestamp', 'timestamptz', 'interval',
  ],
  conditionals: ['coalesce', 'nullif', 'greatest', 'least', 'num_nulls', 'num_nonnulls'],
  arrays: [
    'array_append', 'array_cat', 'array_dims', 'array_fill', 'array_length', 'array_lower', 'array_ndims',
    'array_position', 'array_positions', 'array_prepend', 'array_remove', 'array_replace', 'array_reverse',
    'array_sample', 'array_shuffle', 'array_sort', 'array_to_string', 'array_upper', 'cardinality', 'trim_array',
    'unnest', 'generate_subscripts',
  ],
  ranges: [
    'isempty', 'lower_inc', 'upper_inc', 'lower_inf', 'upper_inf', 'range_merge', 'int4range', 'int8range',
    'numrange', 'tsrange', 'tstzrange', 'daterange',
  ],
  // Bounded, like any statement, by the time limits on statements.
  series: ['generate_series'],
});

/** `pg_catalog` and `information_schema` hold the built-ins: `pg_catalog.pg_sleep` is checked like `pg_sleep`. */
export const POSTGRES_FUNCTIONS: FunctionPolicy = { builtinSchemas: ['pg_catalog', 'information_schema'], allowed: ALLOWED };
