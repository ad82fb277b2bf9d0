import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import postgres from 'postgres';
import { projectRoot } from './test-service.js';

/** Where the SQL front door of a test service listens, and the VDB to connect to. */
export interface DoorTarget {
  port: number;
  database: string;
}

export interface ProcessOutput {
  code: number;
  stdout: string;
  stderr: string;
}

function runProcess(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<ProcessOutput> {
  return new Promise((resolve) => {
    execFile(command, args, { env: { ...process.env, ...env }, timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Debian's psql, when installed. */
export function psqlMissing(): string | undefined {
  try {
    execFileSync('psql', ['--version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'psql is not installed (Debian: apt-get install postgresql-client)';
  }
}

/** `psql -c` per statement, unaligned output with `|` between columns, SQLSTATEs in error messages. */
export function psql(target: DoorTarget, token: string, statements: string[], user = 'tester', env: NodeJS.ProcessEnv = {}): Promise<ProcessOutput> {
  const args = ['-X', '-A', '-t', '-F', '|', '-v', 'VERBOSITY=verbose', '-h', '127.0.0.1', '-p', String(target.port), '-U', user, '-d', target.database];
  for (const statement of statements) args.push('-c', statement);
  return runProcess('psql', args, { PGPASSWORD: token, PGCONNECT_TIMEOUT: '30', ...env });
}

export function pgClient(target: DoorTarget, token: string): pg.Client {
  return new pg.Client({ host: '127.0.0.1', port: target.port, database: target.database, user: 'tester', password: token });
}

/** postgres.js as a user configures it: at connect it reads the array types from pg_catalog.pg_type (the catalog answers). */
/**
 * Runs `sql` on `client` and sends node-postgres' CancelRequest for it (from a client of `token`) until the
 * statement ends: a request that arrives before the statement started cancels nothing. Resolves with the
 * statement's error, or undefined when it ended without one.
 */
export async function cancelUntilEnded(target: DoorTarget, token: string, client: pg.Client, sql: string, values: unknown[] = []): Promise<unknown> {
  const query = new pg.Query(sql, values);
  const running = new Promise<unknown>((resolve) => {
    query.on('error', resolve);
    query.on('end', () => resolve(null));
  });
  void client.query(query);
  let outcome: unknown;
  while (outcome === undefined) {
    (pgClient(target, token) as unknown as { cancel(client: pg.Client, query: pg.Query): void }).cancel(client, query);
    outcome = await Promise.race([running, new Promise((resolve) => setTimeout(resolve, 200)).then(() => undefined)]);
  }
  return outcome ?? undefined;
}

export function postgresJs(target: DoorTarget, token: string): postgres.Sql {
  return postgres({ host: '127.0.0.1', port: target.port, database: target.database, username: 'tester', password: token, max: 1 });
}

const JDBC_JAR = '/usr/share/java/postgresql.jar';
let compiled: string | undefined;

/** Why the JDBC client cannot run here (no driver jar, no JDK), or undefined. */
export function jdbcMissing(): string | undefined {
  if (!existsSync(JDBC_JAR)) return `${JDBC_JAR} is missing (Debian: apt-get install libpostgresql-jdbc-java)`;
  try {
    execFileSync('javac', ['-version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'javac is not installed (a JDK 17)';
  }
}

/**
 * Runs test/fixtures/sql-door/JdbcProbe.java (compiled once per process) with these steps; one line per
 * result. `user`: another than the door's tester (a PostgreSQL server's own, to compare with it).
 */
export async function jdbc(target: DoorTarget, token: string, steps: string[], user = 'tester'): Promise<string[]> {
  if (compiled === undefined) {
    const folder = mkdtempSync(join(tmpdir(), 'vdb-jdbc-'));
    execFileSync('javac', ['-cp', JDBC_JAR, '-d', folder, join(projectRoot, 'test/fixtures/sql-door/JdbcProbe.java')]);
    compiled = folder;
  }
  const url = `jdbc:postgresql://127.0.0.1:${target.port}/${target.database}`;
  const output = await runProcess('java', ['-cp', `${compiled}:${JDBC_JAR}`, 'JdbcProbe', url, user, token, ...steps]);
  if (output.code !== 0) throw new Error(`JdbcProbe failed (${output.code}): ${output.stderr}`);
  return output.stdout.split('\n').filter((line) => line !== '');
}

/**
 * Debian's own python3 (`/usr/bin/python3`: the python3 first on PATH may be a version manager's, without
 * Debian's packages), which runs the Python clients (python3-psycopg2, python3-psycopg, python3-sqlalchemy,
 * python3-pandas).
 */
const DEBIAN_PYTHON = '/usr/bin/python3';

/** Why Debian's python3 cannot import these modules here, or undefined. */
export function pythonModulesMissing(...modules: string[]): string | undefined {
  try {
    execFileSync(DEBIAN_PYTHON, ['-c', modules.map((module) => `import ${module}`).join('; ')], { stdio: 'ignore' });
    return undefined;
  } catch {
    return `${DEBIAN_PYTHON} cannot import ${modules.join(', ')} (Debian: apt-get install python3-psycopg2 python3-psycopg python3-sqlalchemy python3-pandas)`;
  }
}

/**
 * Where SQLAlchemy 2 is, for Debian's python3: bookworm has 1.4 (which pandas 1.5 needs), so .ci/run
 * extracts Debian's SQLAlchemy 2 package (trixie's, pure Python; typing-extensions from bookworm-backports)
 * into a folder of its own and names it in VDB_TEST_SQLALCHEMY2.
 */
export const SQLALCHEMY2_PATH = process.env['VDB_TEST_SQLALCHEMY2'];

/** Why SQLAlchemy 2 cannot run here, or undefined. */
export function sqlAlchemy2Missing(): string | undefined {
  if (SQLALCHEMY2_PATH === undefined) return 'VDB_TEST_SQLALCHEMY2 is not set (.ci/run extracts SQLAlchemy 2 and sets it)';
  try {
    execFileSync(DEBIAN_PYTHON, ['-c', 'import sqlalchemy, psycopg2; assert sqlalchemy.__version__.startswith("2.")'], { stdio: 'ignore', env: { ...process.env, PYTHONPATH: SQLALCHEMY2_PATH } });
    return undefined;
  } catch {
    return `${DEBIAN_PYTHON} cannot import SQLAlchemy 2 and psycopg2 from ${SQLALCHEMY2_PATH}`;
  }
}

/** Why a command-line client (pg_dump, pgcli) cannot run here, or undefined. */
export function commandMissing(command: string, debianPackage: string): string | undefined {
  try {
    execFileSync(command, ['--version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return `${command} is not installed (Debian: apt-get install ${debianPackage})`;
  }
}

/**
 * Runs one step of test/fixtures/sql-door/python_clients.py; each line it printed, parsed as JSON.
 * `pythonPath`: modules found there first (SQLAlchemy 2 beside Debian's 1.4, `sqlAlchemy2Missing`).
 */
export async function pythonClient(target: DoorTarget, token: string, step: string, args: string[], user = 'tester', pythonPath?: string): Promise<unknown[]> {
  const script = join(projectRoot, 'test/fixtures/sql-door/python_clients.py');
  // pgcli keeps its config, history and log under HOME
  const home = mkdtempSync(join(tmpdir(), 'vdb-python-'));
  const output = await runProcess(DEBIAN_PYTHON, [script, '127.0.0.1', String(target.port), target.database, user, token, step, ...args], {
    HOME: home, ...(pythonPath !== undefined && { PYTHONPATH: pythonPath }),
  });
  if (output.code !== 0) throw new Error(`python_clients.py ${step} failed (${output.code}): ${output.stderr}`);
  return output.stdout.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as unknown);
}

/** pg_dump with these arguments against the door (or any server), the token as password. */
export function pgDump(target: DoorTarget & { host?: string }, token: string, args: string[], user = 'tester'): Promise<ProcessOutput> {
  return runProcess('pg_dump', ['-h', target.host ?? '127.0.0.1', '-p', String(target.port), '-U', user, '-d', target.database, ...args], { PGPASSWORD: token, PGCONNECT_TIMEOUT: '30' });
}
