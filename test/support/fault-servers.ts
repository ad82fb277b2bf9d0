import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { projectRoot } from './test-service.js';

/**
 * Database servers a fault test owns (a PostgreSQL cluster, a MariaDB server, each on a free port of its own,
 * never the shared ones) and the service started as a child process, so that a test may restart, stop or
 * freeze a database and watch whether the process lives.
 */

const run = promisify(execFile);

/** Why the fault tests cannot run here (not root, or the server tools are missing); undefined when they can. */
export function faultSkipReason(tool: 'postgres' | 'mariadb'): string | undefined {
  if (process.getuid?.() !== 0) return 'fault tests create database servers: they need root';
  const tools = tool === 'postgres' ? ['/usr/bin/pg_createcluster', '/usr/bin/pg_ctlcluster'] : ['/usr/sbin/mariadbd', '/usr/bin/mariadb-install-db'];
  const missing = tools.find((path) => !existsSync(path));
  return missing === undefined ? undefined : `${missing} is not installed`;
}

/** A port no one listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** The pids of a process's children that run `command` (the server processes of a postmaster). */
async function childPids(pid: number): Promise<number[]> {
  const { stdout } = await run('ps', ['-o', 'pid=', '--ppid', String(pid)]).catch(() => ({ stdout: '' }));
  return stdout.split('\n').map((line) => Number(line.trim())).filter((one) => one > 0);
}

/** A PostgreSQL 15 cluster of the test's own (trust authentication), dropped by `drop`. */
export class PgCluster {
  private constructor(readonly name: string, readonly port: number) {}

  /** On `port` when given (a test's own range), else on a free one. */
  static async create(at?: number): Promise<PgCluster> {
    const port = at ?? await freePort();
    const cluster = new PgCluster(`vdbfault${process.pid}x${port}`, port);
    await run('pg_createcluster', ['15', cluster.name, '--port', String(port), '--', '--auth-local=trust', '--auth-host=trust']);
    await cluster.ctl('start');
    return cluster;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  ctl(action: 'start' | 'stop' | 'restart'): Promise<unknown> {
    return run('pg_ctlcluster', ['15', this.name, action, ...(action === 'start' ? [] : ['-m', 'fast'])]);
  }

  /** Runs statements as the superuser on a connection of its own. */
  async sql(text: string, values: unknown[] = []): Promise<Record<string, unknown>[]> {
    const client = new pg.Client({ connectionString: this.url });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return (await client.query(text, values)).rows as Record<string, unknown>[];
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** Stops (SIGSTOP) or resumes (SIGCONT) the postmaster and every backend: connections stay open, nothing answers. */
  async freeze(frozen: boolean): Promise<void> {
    const pid = Number(readFileSync(`/var/lib/postgresql/15/${this.name}/postmaster.pid`, 'utf8').split('\n')[0]);
    for (const one of [pid, ...(await childPids(pid))]) {
      try {
        process.kill(one, frozen ? 'SIGSTOP' : 'SIGCONT');
      } catch {
        // a backend that ended meanwhile
      }
    }
  }

  async drop(): Promise<void> {
    await this.freeze(false).catch(() => undefined);
    await run('pg_dropcluster', ['--stop', '15', this.name]).catch(() => undefined);
  }
}

/** A MariaDB server of the test's own: its own data directory, port and socket; `root@127.0.0.1` without a password. */
export class MariadbServer {
  private process: ChildProcess | undefined;

  private constructor(readonly dir: string, readonly port: number) {}

  static async create(): Promise<MariadbServer> {
    const dir = mkdtempSync(join(tmpdir(), `vdb-fault-mariadb-${process.pid}-`));
    const server = new MariadbServer(dir, await freePort());
    try {
      await run('mariadb-install-db', ['--no-defaults', `--datadir=${join(dir, 'data')}`, '--user=root']);
      await server.start();
      const connection = await mysql.createConnection({ socketPath: server.socket, user: 'root' });
      await connection.query("create user 'root'@'127.0.0.1' identified by ''");
      await connection.query("grant all privileges on *.* to 'root'@'127.0.0.1' with grant option");
      await connection.query('create database if not exists test');
      await connection.end();
    } catch (error) {
      await server.drop();
      throw error;
    }
    return server;
  }

  get socket(): string {
    return join(this.dir, 'mariadb.sock');
  }

  get url(): string {
    return `mysql://root@127.0.0.1:${this.port}/test`;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  /** Starts mariadbd and waits until it takes connections. */
  async start(): Promise<void> {
    const child = spawn('/usr/sbin/mariadbd', [
      '--no-defaults', `--datadir=${join(this.dir, 'data')}`, `--port=${this.port}`, `--socket=${this.socket}`, '--user=root',
      '--bind-address=127.0.0.1', '--skip-name-resolve', `--pid-file=${join(this.dir, 'mariadb.pid')}`, '--innodb-buffer-pool-size=16M',
      // its internal temporary tables in a folder of its own: a sweep of the shared /tmp cannot take one from under it
      `--tmpdir=${this.dir}`,
    ], { stdio: 'ignore' });
    this.process = child;
    // heap snapshots of the worker threads take a few seconds on a busy machine
    for (let tries = 0; tries < 1200; tries += 1) {
      if (child.exitCode !== null) throw new Error(`mariadbd exited with ${child.exitCode}`);
      const up = await mysql.createConnection({ socketPath: this.socket, user: 'root' }).then(async (connection) => {
        await connection.end();
        return true;
      }, () => false);
      if (up) return;
      await pause(100);
    }
    throw new Error('mariadbd did not start in 10 s');
  }

  /** Stops mariadbd (SIGTERM: a shutdown that ends the sessions) and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.process;
    this.process = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    await exited;
  }

  /** Freezes (SIGSTOP) or resumes (SIGCONT) the server: its connections stay open, nothing answers. */
  freeze(frozen: boolean): void {
    this.process?.kill(frozen ? 'SIGSTOP' : 'SIGCONT');
  }

  /** Runs one statement as root over the socket. */
  async sql(text: string, values: unknown[] = []): Promise<Record<string, unknown>[]> {
    const connection = await mysql.createConnection({ socketPath: this.socket, user: 'root', multipleStatements: false });
    try {
      const [rows] = await connection.query(text, values);
      return Array.isArray(rows) ? rows as Record<string, unknown>[] : [];
    } finally {
      await connection.end();
    }
  }

  async drop(): Promise<void> {
    const child = this.process;
    if (child && child.exitCode === null) {
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Bytes in use after a full collection: the resident set, the JS heap (of which `code` is compiled code), external memory. */
export interface ProbedMemory {
  rss: number;
  heapUsed: number;
  external: number;
  code: number;
  /** The live objects of each worker thread's own heap. */
  threadHeaps: number[];
}

/** The service as `node dist/core/cli.js start`: a process of its own, whose death the test can see. */
export class ServiceProcess {
  /** Everything it wrote to stdout (JSON logs) and stderr. */
  output = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(private readonly child: ChildProcess, readonly url: string) {
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
      else child.once('exit', (code, signal) => resolve({ code, signal }));
    });
  }

  static async start(configFile: string): Promise<ServiceProcess> {
    const port = await freePort();
    // the memory probe (memory-probe.ts) answers SIGUSR2 with the memory left after a full collection
    const probe = ['--expose-gc', '--import', join(projectRoot, 'dist/test/support/memory-probe.js')];
    const child = spawn(process.execPath, [...probe, join(projectRoot, 'dist/core/cli.js'), 'start', '--config', configFile, '--port', String(port)], {
      cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env['PATH'] ?? '' },
    });
    const service = new ServiceProcess(child, `http://127.0.0.1:${port}`);
    const collect = (chunk: Buffer) => {
      service.output += chunk.toString();
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const listening = await Promise.race([
      new Promise<boolean>((resolve) => {
        // the lines for people (stderr) follow the JSON log line, whatever the log level
        const check = () => {
          if (/listening on http/.test(service.output)) {
            child.stderr?.off('data', check);
            resolve(true);
          }
        };
        child.stderr?.on('data', check);
      }),
      service.exited.then(() => false),
      // a PGlite cold start on a busy machine takes over a minute (spawned-service.ts waits as long)
      pause(120_000).then(() => false),
    ]);
    if (!listening) {
      child.kill('SIGKILL');
      throw new Error(`the service did not start:\n${service.output.slice(-4000)}`);
    }
    return service;
  }

  get pid(): number {
    return this.child.pid as number;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The resident set size in KiB (/proc). */
  rssKib(): number {
    const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  }

  /** The memory in use after two full collections, in bytes (the memory probe's answer to SIGUSR2). */
  async memoryAfterCollection(): Promise<ProbedMemory> {
    const seen = this.output.length;
    this.child.kill('SIGUSR2');
    // heap snapshots of the worker threads take a few seconds on a busy machine
    for (let tries = 0; tries < 1200; tries += 1) {
      const line = /memory-probe (\{.*\})\n/.exec(this.output.slice(seen))?.[1];
      if (line !== undefined) return JSON.parse(line) as ProbedMemory;
      await pause(50);
    }
    throw new Error('the memory probe did not answer');
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** Ends the process whatever it does (cleanup after a test). */
  async kill(): Promise<void> {
    if (this.alive) this.child.kill('SIGKILL');
    await this.exited;
  }
}

export interface Answer {
  status: number;
  code?: string;
  /** 'reset' when the connection was dropped, 'hang' when nothing came within the wait. */
  failure?: 'reset' | 'hang';
  ms: number;
}

/** POSTs a query endpoint with a bearer token; never rejects: a dropped connection or a hang is an answer too. */
export async function perform(url: string, token: string, name: string, body: unknown, waitMs: number, route = 'query/perform'): Promise<Answer> {
  const started = performance.now();
  try {
    const response = await fetch(`${url}/api/v1/${route}/${name}`, {
      method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(waitMs),
    });
    const text = await response.text();
    let code: string | undefined;
    try {
      code = (JSON.parse(text) as { code?: string }).code;
    } catch {
      code = undefined;
    }
    return { status: response.status, ...(code === undefined ? {} : { code }), ms: performance.now() - started };
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError';
    return { status: 0, failure: timedOut ? 'hang' : 'reset', ms: performance.now() - started };
  }
}

/** Whether an answer is one a client may get while a database is away: rows, or 503/504 with their machine code. */
export function isCleanAnswer(answer: Answer): boolean {
  return answer.status === 200
    || (answer.status === 503 && answer.code === 'datasource_unavailable')
    || (answer.status === 504 && answer.code === 'statement_timeout');
}

/** Removes a temp folder a test wrote (its bundle). */
export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
