/**
 * The authorizer's decision tables, as data: the suites run every row through authorizeSql and
 * docs/authorization.md prints them (scripts/authorization-table.mjs), so doc and tests cannot drift.
 * A row is [sql, caller, expected]: `allowed`, or the denial code and the resource it must name.
 */
import type { DenialCode } from '../../../core/plugin-api/denial.js';
import type { CallerGrants } from '../../../core/authorization/grants.js';
import type { SqlAuthorization } from '../../../core/authorization/sql-authorizer.js';
import type { SqlFamily } from '../../../core/plugin-api/sql-dialect.js';
import { ANALYST, ANYONE, CLERK } from './authorization-fixtures.js';

/** Who asks, and whether the statement must be read-only (task actions and queries are; actions' SQL is not). */
export const CALLERS = {
  /** select on sales.orders, sales.customers (id, region) and the view sales.customer_totals; read-only. */
  analyst: { grants: ANALYST, readOnly: true },
  /** everything on schema sales; read-write, as an action's operations run. */
  clerk: { grants: CLERK, readOnly: false },
  /** the clerk's grants where only reading is allowed. */
  'clerk, read-only': { grants: CLERK, readOnly: true },
  /** a VDB without dataRoles: complete access; read-only. */
  anyone: { grants: ANYONE, readOnly: true },
} satisfies Record<string, { grants: CallerGrants; readOnly: boolean }>;

export type Caller = keyof typeof CALLERS;
export type Expected = 'allowed' | [DenialCode] | [DenialCode, string];
export type DecisionRow = [sql: string, caller: Caller, expected: Expected];

/** A result in the table's own terms: the resource is compared only where the row names one. */
export function outcome(result: SqlAuthorization, expected: Expected): Expected {
  if (result.allowed) return 'allowed';
  return expected !== 'allowed' && expected.length === 1 ? [result.code] : [result.code, result.resource ?? '(none)'];
}

export const POSTGRES_DECISIONS: DecisionRow[] = [
  // Relations and columns within the grants
  ['select id, total, status from sales.orders', 'analyst', 'allowed'],
  ['select id, region from sales.customers', 'analyst', 'allowed'],
  ['select count(*) from sales.customers', 'analyst', 'allowed'],
  ['select region, count(*) from sales.customers group by region order by region', 'analyst', 'allowed'],
  ['select email from sales.customers', 'analyst', ['forbidden', 'sales.customers.email']],
  ['select * from sales.customers', 'analyst', ['forbidden', 'sales.customers']],
  ['select c.* from sales.customers c', 'analyst', ['forbidden', 'sales.customers']],
  ['select c from sales.customers c', 'analyst', ['forbidden', 'sales.customers']],
  ['select row_to_json(c) from sales.customers c', 'analyst', ['forbidden', 'sales.customers']],
  ['select id from sales.customers order by email', 'analyst', ['forbidden', 'sales.customers.email']],
  ['select region, count(*) as n from sales.customers group by region order by n desc', 'analyst', 'allowed'],
  ['select id as email from sales.customers order by email', 'analyst', 'allowed'],
  ["select id from sales.customers where email like '%@example.com'", 'analyst', ['forbidden', 'sales.customers.email']],
  ["select region from sales.customers group by region having max(name) > 'M'", 'analyst', ['forbidden', 'sales.customers.name']],
  ["select case when c.email is null then 'none' else 'some' end from sales.customers c", 'analyst', ['forbidden', 'sales.customers.email']],
  ['select upper(c.name) from sales.customers c', 'analyst', ['forbidden', 'sales.customers.name']],
  ['select amount from hr.salaries', 'analyst', ['forbidden', 'hr.salaries']],
  ['select id from sales.order_lines', 'analyst', ['forbidden', 'sales.order_lines']],
  // Joins and aliases
  ['select o.id, c.region from sales.orders o join sales.customers c on c.id = o.customer_id', 'analyst', 'allowed'],
  ['select o.id from sales.orders o join sales.customers c on c.email = o.status', 'analyst', ['forbidden', 'sales.customers.email']],
  ['select o.total from sales.orders o join sales.customers c using (id)', 'analyst', 'allowed'],
  ['select id from sales.orders natural join sales.customers', 'analyst', ['forbidden', 'sales.customers']],
  ['select j.email from (sales.customers c join sales.orders o on o.customer_id = c.id) as j', 'analyst', ['forbidden', 'j.email']],
  // Subqueries
  ["select id from sales.orders where customer_id in (select id from sales.customers where region = 'EU')", 'analyst', 'allowed'],
  ["select id from sales.orders where customer_id in (select id from sales.customers where email = 'a@b.c')", 'analyst', ['forbidden', 'sales.customers.email']],
  ['select o.id, (select c.email from sales.customers c where c.id = o.customer_id) from sales.orders o', 'analyst', ['forbidden', 'sales.customers.email']],
  ['select o.id from sales.orders o where exists (select 1 from hr.salaries s where s.amount > o.total)', 'analyst', ['forbidden', 'hr.salaries']],
  ['select region from (select id, region from sales.customers) c', 'analyst', 'allowed'],
  // CTEs: a CTE name hides nothing that its body reads
  ["with recent as (select id, customer_id from sales.orders where status = 'open') select r.id, c.region from recent r join sales.customers c on c.id = r.customer_id", 'analyst', 'allowed'],
  ['with orders as (select * from hr.salaries) select * from orders', 'analyst', ['forbidden', 'hr.salaries']],
  ['with customer_totals as (select id, email from sales.customers) select * from customer_totals', 'analyst', ['forbidden', 'sales.customers.email']],
  ['with o as (select id from sales.orders) select * from (with o as (select amount from hr.salaries) select * from o) as inner_o', 'analyst', ['forbidden', 'hr.salaries']],
  ['select * from (with orders as (select id from sales.orders) select * from orders) as x, orders', 'analyst', ['unqualified_relation', 'orders']],
  ['with recursive n(i) as (select 1 union all select i + 1 from n where i < 5) select i from n', 'analyst', 'allowed'],
  // Set operations and LATERAL
  ['select id from sales.orders union select id from sales.customers', 'analyst', 'allowed'],
  ['select region from sales.customers intersect select status from sales.orders', 'analyst', 'allowed'],
  ['select id from sales.orders union all select amount from hr.salaries', 'analyst', ['forbidden', 'hr.salaries']],
  ['select o.id, l.total from sales.orders o, lateral (select sum(i.total) as total from sales.orders i where i.customer_id = o.customer_id) l', 'analyst', 'allowed'],
  ['select c.id, x.e from sales.customers c, lateral (select c.email as e) x', 'analyst', ['forbidden', 'sales.customers.email']],
  // Views: a granted view is read as itself
  ['select customer_id, region, total from sales.customer_totals', 'analyst', 'allowed'],
  // Functions
  ['select lower(status), round(total, 2), now() from sales.orders', 'analyst', 'allowed'],
  ['select sales.discount(total) from sales.orders', 'analyst', ['forbidden', 'sales.discount']],
  ['select sales.discount(total) from sales.orders', 'clerk', 'allowed'],
  ['select sales.nope(total) from sales.orders', 'clerk', ['function_not_allowed', 'sales.nope']],
  ["select public.crypt('x', 'y')", 'analyst', ['function_not_allowed', 'public.crypt']],
  ['select pg_sleep(10)', 'analyst', ['function_not_allowed', 'pg_sleep']],
  ["select pg_catalog.pg_read_file('/etc/passwd')", 'analyst', ['function_not_allowed', 'pg_catalog.pg_read_file']],
  ["select query_to_xml('select * from hr.salaries', true, true, '')", 'analyst', ['function_not_allowed', 'query_to_xml']],
  ["select set_config('search_path', 'hr', false)", 'analyst', ['function_not_allowed', 'set_config']],
  ["select * from dblink('host=db', 'select 1') as t(x int)", 'analyst', ['function_not_allowed', 'dblink']],
  ['select pg_terminate_backend(1)', 'anyone', ['function_not_allowed', 'pg_terminate_backend']],
  // Built-ins: an allow-list, whatever the spelling, schema or place of the call
  ['select * from pg_hba_file_rules()', 'anyone', ['function_not_allowed', 'pg_hba_file_rules']],
  ['select * from pg_show_all_file_settings()', 'anyone', ['function_not_allowed', 'pg_show_all_file_settings']],
  ['select "pg_read_file"(\'/etc/passwd\')', 'analyst', ['function_not_allowed', 'pg_read_file']],
  ["select PG_READ_FILE('/etc/passwd')", 'analyst', ['function_not_allowed', 'pg_read_file']],
  ["select pg_catalog.pg_ls_dir('.')", 'analyst', ['function_not_allowed', 'pg_catalog.pg_ls_dir']],
  ['select information_schema._pg_expandarray(array[1])', 'analyst', ['function_not_allowed', 'information_schema._pg_expandarray']],
  ["select current_setting('data_directory')", 'analyst', ['function_not_allowed', 'current_setting']],
  ['select version()', 'anyone', ['function_not_allowed', 'version']],
  ["select id from sales.orders where exists (select pg_stat_file('base'))", 'analyst', ['function_not_allowed', 'pg_stat_file']],
  ["with f as (select pg_ls_dir('.') as name) select name from f", 'analyst', ['function_not_allowed', 'pg_ls_dir']],
  ['select o.id, f.x from sales.orders o, lateral (select inet_server_addr() as x) f', 'analyst', ['function_not_allowed', 'inet_server_addr']],
  ['select count(*) filter (where pg_sleep(1) is not null) from sales.orders', 'analyst', ['function_not_allowed', 'pg_sleep']],
  ['select id from sales.orders order by txid_current()', 'analyst', ['function_not_allowed', 'txid_current']],
  ["select status from sales.orders group by status having max(total) > length(current_setting('is_superuser'))", 'analyst', ['function_not_allowed', 'current_setting']],
  ["select lo_import('/etc/passwd')", 'anyone', ['function_not_allowed', 'lo_import']],
  ['select pg_advisory_lock(1)', 'anyone', ['function_not_allowed', 'pg_advisory_lock']],
  ["select nextval('sales.orders_id_seq')", 'clerk', ['function_not_allowed', 'nextval']],
  ["select has_table_privilege('hr.salaries', 'select')", 'analyst', ['function_not_allowed', 'has_table_privilege']],
  ["select pg_get_viewdef('sales.customer_totals')", 'analyst', ['function_not_allowed', 'pg_get_viewdef']],
  ["select table_to_xml('hr.salaries', true, true, '')", 'anyone', ['function_not_allowed', 'table_to_xml']],
  ["select xpath('/a', '<a/>'::xml)", 'anyone', ['function_not_allowed', 'xpath']],
  ['select system_user', 'anyone', ['function_not_allowed', 'pg_catalog.system_user']],
  ['select "LOWER"(status) from sales.orders', 'analyst', ['function_not_allowed', 'LOWER']],
  ['select discount(total) from sales.orders', 'clerk', ['function_not_allowed', 'discount']],
  ["select date_trunc('month', now()), extract(year from now()), to_char(now(), 'YYYY-MM')", 'analyst', 'allowed'],
  ['select pg_catalog.lower(status), "lower"(status), UPPER(status) from sales.orders', 'analyst', 'allowed'],
  ['select status, count(*) filter (where total > 10), percentile_cont(0.5) within group (order by total), stddev_samp(total) from sales.orders group by status having avg(total) > 1 order by sum(total) desc', 'analyst', 'allowed'],
  ['select id, row_number() over (partition by status order by total), lag(total) over (order by id) from sales.orders', 'analyst', 'allowed'],
  ["select json_agg(jsonb_build_object('id', id, 'total', total)) from sales.orders", 'analyst', 'allowed'],
  ["select coalesce(nullif(status, ''), 'none'), greatest(max(total), 0), string_agg(lower(status), ',' order by id), array_length(array_agg(id), 1) from sales.orders group by status", 'analyst', 'allowed'],
  ['select g from generate_series(1, 10) g', 'analyst', 'allowed'],
  ["with m as (select date_trunc('month', now()) as m) select m from m", 'analyst', 'allowed'],
  ["select cast(total as int), total::text, to_number('12', '99'), round(total, 1) from sales.orders", 'analyst', 'allowed'],
  ["select substring(status from 1 for 3), trim(both ' ' from status), position('a' in status), now() at time zone 'UTC' from sales.orders", 'analyst', 'allowed'],
  ['select current_user, session_user, current_date', 'analyst', 'allowed'],
  ['select total operator(pg_catalog.+) 1 from sales.orders', 'analyst', 'allowed'],
  // Comments
  ['select id /* , email */ from sales.customers', 'analyst', 'allowed'],
  ['select id -- , email\n, region from sales.customers', 'analyst', 'allowed'],
  ['select id, region from sales.customers -- ; drop table sales.orders', 'analyst', 'allowed'],
  ['select id from sales.orders /* ; delete from sales.orders */', 'analyst', 'allowed'],
  ['select id /* /* nested */ , email */ from sales.customers', 'analyst', 'allowed'],
  // Several statements, no statement, no grammar
  ['select 1; drop table sales.orders', 'analyst', ['multiple_statements']],
  ['select id from sales.orders; select email from sales.customers', 'analyst', ['multiple_statements']],
  ['', 'analyst', ['unparseable']],
  ['-- nothing but a comment', 'analyst', ['unparseable']],
  ['selec id from sales.orders', 'analyst', ['unparseable']],
  // Case and quoting
  ['SELECT ID, TOTAL FROM SALES.ORDERS', 'analyst', 'allowed'],
  ['select "id" from "sales"."orders"', 'analyst', 'allowed'],
  ['select * from "Sales"."Orders"', 'analyst', ['unknown_relation', 'Sales.Orders']],
  ['select "EMAIL" from sales.customers', 'analyst', ['forbidden', 'EMAIL']],
  // Names outside the VDB
  ['select * from orders', 'analyst', ['unqualified_relation', 'orders']],
  ['select * from pg_user', 'anyone', ['unqualified_relation', 'pg_user']],
  ['select * from pg_catalog.pg_authid', 'anyone', ['unknown_relation', 'pg_catalog.pg_authid']],
  ['select table_name from information_schema.tables', 'anyone', ['unknown_relation', 'information_schema.tables']],
  ['select * from sales.secrets', 'anyone', ['unknown_relation', 'sales.secrets']],
  ['select * from retail.sales.orders', 'anyone', ['unknown_relation', 'retail.sales.orders']],
  ['select amount from hr.salaries', 'anyone', 'allowed'],
  // Read-only
  ["values (1, 'a')", 'analyst', 'allowed'],
  ['explain select id from sales.orders', 'analyst', 'allowed'],
  ['delete from sales.orders where id = 1', 'analyst', ['not_read_only']],
  ['with d as (delete from sales.orders returning id) select * from d', 'clerk, read-only', ['not_read_only']],
  ['select * from sales.orders for update', 'clerk, read-only', ['not_read_only']],
  ['select * into sales.orders_copy from sales.orders', 'clerk, read-only', ['not_read_only']],
  ['explain analyze delete from sales.orders', 'clerk, read-only', ['not_read_only']],
  ['set search_path = hr', 'analyst', ['not_read_only']],
  ["copy sales.orders to '/tmp/orders.csv'", 'clerk, read-only', ['not_read_only']],
  ["do $$ begin perform 1; end $$", 'analyst', ['not_read_only']],
  // Data changes (read-write)
  ["insert into sales.orders (id, customer_id, total, status) values (10, 1, 9.5, 'open') returning id", 'clerk', 'allowed'],
  ["update sales.orders set status = 'shipped' where id = 10 returning *", 'clerk', 'allowed'],
  ['delete from sales.order_lines where order_id = 10', 'clerk', 'allowed'],
  ["delete from sales.orders o using sales.customers c where c.id = o.customer_id and c.region = 'EU'", 'clerk', 'allowed'],
  ["update sales.orders o set total = o.total * 0.9 from sales.customers c where c.id = o.customer_id and c.region = 'EU'", 'clerk', 'allowed'],
  ["insert into sales.orders values (1, 1, 1, 'open') on conflict (id) do update set status = excluded.status", 'clerk', 'allowed'],
  ['with d as (delete from sales.orders where id = 1 returning *) select * from d', 'clerk', 'allowed'],
  ['insert into sales.orders (id, total) select employee_id, amount from hr.salaries', 'clerk', ['forbidden', 'hr.salaries']],
  ['update sales.orders set total = (select max(amount) from hr.salaries)', 'clerk', ['forbidden', 'hr.salaries']],
  ['insert into hr.salaries (employee_id, amount) values (1, 1)', 'clerk', ['forbidden', 'hr.salaries']],
  ['delete from orders where id = 1', 'clerk', ['unqualified_relation', 'orders']],
  ['with orders as (select 1) delete from orders', 'clerk', ['unqualified_relation', 'orders']],
  ['truncate sales.orders', 'clerk', ['forbidden']],
  ['drop table sales.orders', 'clerk', ['forbidden']],
  ['merge into sales.orders o using sales.customers c on c.id = o.customer_id when matched then delete', 'clerk', ['forbidden']],
  ['select * from sales.orders for update', 'clerk', 'allowed'],
];

/**
 * The same rules through node-sql-parser, for the families whose servers cannot run here. Oracle folds
 * unquoted names to upper case, which the catalog's lower-case names do not match: its rows read no relation.
 */
export const GENERIC_DECISIONS: Array<[family: Exclude<SqlFamily, 'postgres'>, ...DecisionRow]> = [
  ['mysql', 'select `id`, `region` from `sales`.`customers`', 'analyst', 'allowed'],
  ['mysql', 'select `email` from `sales`.`customers`', 'analyst', ['forbidden', 'sales.customers.email']],
  ['mysql', 'select * from sales.customers', 'analyst', ['forbidden', 'sales.customers']],
  ['mysql', 'select c.region, o.total from sales.customers c join sales.orders o on o.customer_id = c.id', 'analyst', 'allowed'],
  ['mysql', 'select id from sales.customers where region = "EU"', 'analyst', 'allowed'],
  ['mysql', 'select "email" from sales.customers', 'analyst', ['forbidden', 'sales.customers.email']],
  ['mysql', 'with o as (select amount from hr.salaries) select * from o', 'analyst', ['forbidden', 'hr.salaries']],
  ['mysql', 'select id from sales.orders; select 1', 'analyst', ['multiple_statements']],
  ['mysql', 'select id from sales.orders where', 'analyst', ['unparseable']],
  ['mysql', 'select id /*! , email */ from sales.customers', 'analyst', ['unparseable']],
  ['mysql', 'select id --email\nfrom sales.customers', 'analyst', ['unparseable']],
  ['mysql', "select load_file('/etc/passwd')", 'analyst', ['function_not_allowed', 'load_file']],
  ['mysql', 'select sleep(5)', 'analyst', ['function_not_allowed', 'sleep']],
  ['mysql', 'select * from mysql.user', 'anyone', ['unknown_relation', 'mysql.user']],
  ['mysql', 'select * from customers', 'anyone', ['unqualified_relation', 'customers']],
  ['mysql', 'delete from sales.orders where id = 1', 'analyst', ['not_read_only']],
  ['mysql', 'select * from sales.orders for update', 'clerk, read-only', ['not_read_only']],
  ['mysql', "select id into outfile '/tmp/x' from sales.orders", 'clerk, read-only', ['not_read_only']],
  ['mysql', "update sales.orders o join sales.customers c on c.id = o.customer_id set o.status = 'vip' where c.region = 'EU'", 'clerk', 'allowed'],
  ['mysql', 'insert into sales.orders (id, total) values (1, 2) on duplicate key update total = values(total)', 'clerk', 'allowed'],
  ['mysql', 'delete o from sales.orders o join hr.salaries s on s.employee_id = o.id', 'clerk', ['forbidden', 'hr.salaries']],
  ['mysql', "select LOAD_FILE('/etc/passwd')", 'analyst', ['function_not_allowed', 'LOAD_FILE']],
  ['mysql', "select `load_file`('/etc/passwd')", 'analyst', ['function_not_allowed', 'load_file']],
  ['mysql', "select mysql.load_file('x')", 'anyone', ['function_not_allowed', 'mysql.load_file']],
  ['mysql', "select benchmark(1000000, md5('a'))", 'analyst', ['function_not_allowed', 'benchmark']],
  ['mysql', "select get_lock('x', 1)", 'analyst', ['function_not_allowed', 'get_lock']],
  ['mysql', "select release_lock('x')", 'analyst', ['function_not_allowed', 'release_lock']],
  ['mysql', 'select user()', 'analyst', ['function_not_allowed', 'USER']],
  ['mysql', 'select version()', 'anyone', ['function_not_allowed', 'version']],
  ['mysql', 'select @@version', 'anyone', ['function_not_allowed', '@@version']],
  ['mysql', 'select @@global.secure_file_priv', 'anyone', ['function_not_allowed', '@@global.secure_file_priv']],
  ['mysql', 'select id from sales.orders where total > @limit', 'analyst', ['function_not_allowed', '@limit']],
  ['mysql', 'select id from sales.orders where exists (select sleep(1))', 'analyst', ['function_not_allowed', 'sleep']],
  ['mysql', 'with v as (select version() as v) select v from v', 'analyst', ['function_not_allowed', 'version']],
  ['mysql', 'select status from sales.orders group by status having count(*) > benchmark(10, 1)', 'analyst', ['function_not_allowed', 'benchmark']],
  ['mysql', "select id from sales.orders order by sys_exec('id')", 'analyst', ['function_not_allowed', 'sys_exec']],
  ['mysql', "select date_format(now(), '%Y-%m'), count(distinct status), group_concat(status separator ',') from sales.orders", 'analyst', 'allowed'],
  ['mysql', "select coalesce(total, 0), ifnull(status, 'x'), if(total > 1, 'big', 'small') from sales.orders", 'analyst', 'allowed'],
  ['mysql', "select json_extract(status, '$.a'), cast(total as char), concat_ws('-', id, status) from sales.orders", 'analyst', 'allowed'],
  ['mysql', 'select id, row_number() over (order by total desc) from sales.orders', 'analyst', 'allowed'],
  ['mysql', 'select UPPER(status), `lower`(status) from sales.orders', 'analyst', 'allowed'],
  ['mysql', 'select status, sum(total) from sales.orders group by status having max(total) > 1 order by avg(total) desc', 'analyst', 'allowed'],
  ['mysql', 'select id from sales.orders o where exists (select 1 from sales.customers c where c.id = o.customer_id)', 'analyst', 'allowed'],
  ['mysql', 'select id from sales.orders where total > any (select total from sales.orders)', 'analyst', 'allowed'],
  ['mssql', 'select top 10 [id], [region] from [sales].[customers]', 'analyst', 'allowed'],
  ['mssql', 'select [email] from [sales].[customers]', 'analyst', ['forbidden', 'sales.customers.email']],
  ['mssql', 'select "email" from sales.customers', 'analyst', ['forbidden', 'sales.customers.email']],
  ['mssql', 'select o.id from sales.orders o where exists (select 1 from hr.salaries s where s.amount > o.total)', 'analyst', ['forbidden', 'hr.salaries']],
  ['mssql', 'select * from db1.sales.orders', 'anyone', ['unknown_relation', 'db1.sales.orders']],
  ['mssql', 'select name from sys.objects', 'anyone', ['unknown_relation', 'sys.objects']],
  ['mssql', 'select id from sales.orders; select 2', 'analyst', ['multiple_statements']],
  ['mssql', "exec xp_cmdshell 'dir'", 'analyst', ['unparseable']],
  ['mssql', "select * from openrowset('SQLNCLI', 'Server=x', 'select 1')", 'anyone', ['function_not_allowed', 'openrowset']],
  ['mssql', 'select id from sales.customers /* /* */ , email */', 'analyst', ['unparseable']],
  ['mssql', "select 'a\\' , email from sales.customers -- '", 'analyst', ['unparseable']],
  ['mssql', 'select * from sales.orders with (updlock)', 'clerk, read-only', ['not_read_only']],
  ['mssql', "update o set o.status = 'vip' from sales.orders o join sales.customers c on c.id = o.customer_id where c.region = 'EU'", 'clerk', 'allowed'],
  ['mssql', 'delete from sales.orders where id = 1', 'clerk', 'allowed'],
  ['mssql', "select * from openquery(srv, 'select 1')", 'anyone', ['function_not_allowed', 'openquery']],
  ['mssql', "select xp_cmdshell('dir')", 'anyone', ['function_not_allowed', 'xp_cmdshell']],
  ['mssql', 'select suser_sname()', 'analyst', ['function_not_allowed', 'suser_sname']],
  ['mssql', 'select host_name()', 'analyst', ['function_not_allowed', 'host_name']],
  ['mssql', "select sys.fn_my_permissions(null, 'server')", 'anyone', ['function_not_allowed', 'sys.fn_my_permissions']],
  ['mssql', 'select id from sales.orders where id in (select len(db_name()))', 'analyst', ['function_not_allowed', 'db_name']],
  ['mssql', 'select @@version', 'anyone', ['unparseable']],
  ['mssql', "select top 5 id, dateadd(day, 1, getdate()), isnull(status, 'x'), iif(total > 1, 1, 0) from sales.orders", 'analyst', 'allowed'],
  ['mssql', 'select status, count(*), stdev(total) from sales.orders group by status having sum(total) > 1 order by max(total)', 'analyst', 'allowed'],
  ['mssql', "select [LOWER](status), convert(varchar, total), string_agg(status, ',') from sales.orders group by status, total", 'analyst', 'allowed'],
  ['oracle', "select lower('x'), to_char(sysdate, 'YYYY'), nvl(null, 1), decode(1, 1, 'a', 'b') from dual", 'anyone', 'allowed'],
  ['oracle', "select sys_context('USERENV', 'IP_ADDRESS') from dual", 'anyone', ['function_not_allowed', 'SYS_CONTEXT']],
  ['oracle', "select userenv('SESSIONID') from dual", 'anyone', ['function_not_allowed', 'USERENV']],
  ['oracle', "select utl_http.request('http://x') from dual", 'anyone', ['function_not_allowed', 'UTL_HTTP.REQUEST']],
  ['oracle', 'select dbms_random.value() from dual', 'anyone', ['function_not_allowed', 'DBMS_RANDOM.VALUE']],
];
