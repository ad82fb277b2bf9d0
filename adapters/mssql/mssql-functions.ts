/**
 * The built-ins a SQL Server statement may call; names compare without case. Left out on purpose: files,
 * other servers and the operating system (`OPENROWSET`, `OPENDATASOURCE`, `OPENQUERY`, `OPENXML`, `xp_*`,
 * `sp_*`, `fn_*`), logins, hosts and databases (`SUSER_NAME`, `SUSER_SNAME`, `USER_NAME`, `HOST_NAME`,
 * `DB_NAME`, `SERVERPROPERTY`, `SESSION_CONTEXT`, `CONNECTIONPROPERTY`), and the `@@` functions, which the
 * dialect refuses before parsing (the T-SQL grammar misreads them).
 */
import { allowList, type FunctionPolicy } from '../../core/plugin-api/adapter-kit.js';

const ALLOWED = allowList({
  aggregates: [
    'approx_count_distinct', 'avg', 'checksum_agg', 'count', 'count_big', 'grouping', 'grouping_id', 'max', 'min',
    'stdev', 'stdevp', 'string_agg', 'sum', 'var', 'varp',
  ],
  orderedSet: ['percentile_cont', 'percentile_disc', 'approx_percentile_cont', 'approx_percentile_disc'],
  window: [
    'row_number', 'rank', 'dense_rank', 'percent_rank', 'cume_dist', 'ntile', 'lag', 'lead', 'first_value',
    'last_value',
  ],
  math: [
    'abs', 'acos', 'asin', 'atan', 'atn2', 'ceiling', 'cos', 'cot', 'degrees', 'exp', 'floor', 'log', 'log10', 'pi',
    'power', 'radians', 'rand', 'round', 'sign', 'sin', 'sqrt', 'square', 'tan',
  ],
  strings: [
    'ascii', 'char', 'charindex', 'concat', 'concat_ws', 'difference', 'format', 'left', 'len', 'lower', 'ltrim',
    'nchar', 'patindex', 'quotename', 'replace', 'replicate', 'reverse', 'right', 'rtrim', 'soundex', 'space',
    'str', 'string_escape', 'string_split', 'stuff', 'substring', 'translate', 'trim', 'unicode', 'upper',
    'hashbytes', 'checksum', 'newid',
  ],
  dateTime: [
    'current_timestamp', 'date_bucket', 'dateadd', 'datediff', 'datediff_big', 'datefromparts', 'datename',
    'datepart', 'datetime2fromparts', 'datetimefromparts', 'datetimeoffsetfromparts', 'datetrunc', 'day',
    'eomonth', 'getdate', 'getutcdate', 'isdate', 'month', 'smalldatetimefromparts', 'switchoffset', 'sysdatetime',
    'sysdatetimeoffset', 'sysutcdatetime', 'timefromparts', 'todatetimeoffset', 'year',
  ],
  json: ['isjson', 'json_value', 'json_query', 'json_modify', 'json_object', 'json_array', 'openjson'],
  conversions: ['cast', 'convert', 'parse', 'try_cast', 'try_convert', 'try_parse', 'isnumeric'],
  conditionals: ['coalesce', 'nullif', 'greatest', 'least', 'iif', 'choose', 'isnull'],
});

/** Built-ins are called unqualified: a qualified call (`sys.fn_x`, `dbo.f`) must be a VDB function. */
export const MSSQL_FUNCTIONS: FunctionPolicy = { builtinSchemas: [], allowed: ALLOWED };
