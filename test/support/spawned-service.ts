import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot, writeBundle } from './test-service.js';

/** The service as its own process (`node dist/core/cli.js start`): what an operator runs, measured alone. */
export interface SpawnedService {
  url: string;
  pid: number;
  /** The SQL door's port, when `sql.enabled`. */
  sqlPort: number | undefined;
  /** Everything it wrote so far. */
  output(): string;
  /** SIGTERM, then SIGKILL if it has not ended within 15 s; resolves with its exit code. */
  stop(): Promise<number | null>;
}

/** Starts the CLI on `config` (and bundle files); resolves once it says, for people, where it listens. */
export function spawnService(config: Record<string, unknown>, files: Record<string, string> = {}): Promise<SpawnedService> {
  return spawnConfigFile(writeBundle(config, files));
}

/** Starts the CLI on a service.yaml already written (with whatever sits beside it: node_modules, keys). */
export function spawnConfigFile(configFile: string): Promise<SpawnedService> {
  const child = spawn(process.execPath, [join(projectRoot, 'dist/core/cli.js'), 'start', '--config', configFile], {
    stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, VDB_CONFIG: '', PORT: '' },
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return new Promise<SpawnedService>((resolve, reject) => {
    const started = setTimeout(() => fail(new Error(`the service did not start within 120 s:\n${output}`)), 120_000);
    const fail = (error: Error) => {
      clearTimeout(started);
      child.kill('SIGKILL');
      reject(error);
    };
    let listening = false;
    // the lines for people on stderr, whatever the log level: the URL, the SQL door's address, then the counts
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (listening || !/^\d+ quer(y|ies), /m.test(output)) return;
      listening = true;
      clearTimeout(started);
      const url = /listening on (http:\/\/\S+) \(/.exec(output)?.[1] ?? '';
      const sqlPort = /SQL front door \(PostgreSQL wire protocol\) on [^ ]+:(\d+): /.exec(output)?.[1];
      resolve(handle(child, url, sqlPort === undefined ? undefined : Number(sqlPort), () => output, exited));
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.on('error', fail);
    void exited.then((code) => listening || fail(new Error(`the service exited (${code}) before listening:\n${output}`)));
  });
}

function handle(child: ChildProcess, url: string, sqlPort: number | undefined, output: () => string, exited: Promise<number | null>): SpawnedService {
  const pid = child.pid as number;
  return {
    url, pid, sqlPort, output,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(kill);
      return code;
    },
  };
}
