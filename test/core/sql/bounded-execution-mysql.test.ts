import { MysqlDialect } from '../../../adapters/mysql/mysql-dialect.js';
import { runtimeOver } from '../../../core/sql/datasource-runtime.js';
import { runBoundedSuite, type BoundedStatements } from './bounded-execution-suite.js';

/**
 * The bounded-execution suite on MariaDB (MySQL): the table lives in the database of `VDB_TEST_MYSQL_URL`,
 * and the VDB (whose users are server-wide) carries that database's name.
 */
const url = process.env['VDB_TEST_MYSQL_URL'];
const DB = url === undefined ? '' : new URL(url).pathname.slice(1);
const MARK = 'bounded_runaway';
/**
 * MariaDB stops a recursive CTE at `max_recursive_iterations` (1,000 by default) and materializes it before
 * reading: the runaways join a thousand rows to themselves four times (10^12 rows), whose rows stream.
 */
const THOUSAND = 'with recursive r(n) as (select 1 union all select n + 1 from r where n < 1000)';

const MYSQL_STATEMENTS: BoundedStatements = {
  schema: DB,
  vdb: `bounded_${DB}`,
  setup: [
    `drop table if exists ${DB}.customers`,
    `create table ${DB}.customers (id integer primary key, email varchar(80) not null, region varchar(20) not null)`,
    `insert into ${DB}.customers (id, email, region) with recursive g(n) as (select 1 union all select n + 1 from g where n < 40)
     select n, concat('c', n, '@example.com'), case when n % 2 = 0 then 'North' else 'South' end from g`,
  ],
  teardown: [`drop table if exists ${DB}.customers`],
  runaways: [
    `${THOUSAND} select count(*) as ${MARK} from r a, r b, r c, r d`,
    `${THOUSAND} select count(*) as ${MARK} from r a cross join r b cross join r c cross join r d where a.n + b.n > c.n`,
  ],
  huge: `${THOUSAND} select a.n as ${MARK} from r a, r b, r c, r d`,
  mark: MARK,
};

runBoundedSuite({
  name: 'mysql',
  skip: url === undefined ? 'VDB_TEST_MYSQL_URL is not set' : undefined,
  open: async () => runtimeOver(await new MysqlDialect('mysql').open({
    name: 'retail_db', adapter: 'mysql', connection: { connectionString: url }, pool: { max: 4 }, init: [], baseDir: process.cwd(),
  })),
  close: (datasource) => datasource.close(),
  statements: MYSQL_STATEMENTS,
  runaways: async (datasource) => {
    const result = await datasource.query(
      `select count(*) as n from information_schema.processlist where command = 'Query' and id <> connection_id() and info like ?`,
      [`%${MARK}%`],
    );
    return Number(result.rows[0]?.['n']);
  },
});
