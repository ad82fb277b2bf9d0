import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parse, stringify } from 'yaml';
import { ERROR_CATALOG } from '../../core/plugin-api/error-catalog.js';
import { demoDescriptors, projectRoot } from '../support/test-service.js';
import { readPsqlCommands, readWalkthrough, type ReadmeCurl } from './readme-curls.js';

const run = promisify(execFile);
const HEADING = '## Walk-through against the demo';
const walkthrough = readWalkthrough(readFileSync(join(projectRoot, 'README.md'), 'utf8'), HEADING, new Set(Object.keys(ERROR_CATALOG)));

interface Demo {
  child: ChildProcess;
  /** `127.0.0.1:<port>`, put where the README says `localhost:8282`. */
  address: string;
  /** The SQL front door's port, put where the README says `port=5433`. */
  sqlPort: string;
  folder: string;
}

/**
 * The demo as `npm start` serves it: the bundled service.yaml and descriptors/, with its built-in local tokens,
 * on a free port and a fresh PGlite data folder (so the seed is all there is).
 */
async function startDemo(): Promise<Demo> {
  const folder = mkdtempSync(join(tmpdir(), 'vdb-readme-'));
  const config = parse(readFileSync(join(projectRoot, 'service.yaml'), 'utf8')) as Record<string, any>;
  config['descriptors'] = demoDescriptors;
  config['datasources']['retail_db']['connection'] = { dataDir: join(folder, 'retail') };
  config['datasources']['crm_db']['connection'] = { dataDir: join(folder, 'crm') };
  config['sql']['port'] = 0;
  const configFile = join(folder, 'service.yaml');
  writeFileSync(configFile, stringify(config));
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '', VDB_CONFIG: '' };
  for (const name of ['VDB_ADMIN_TOKEN', 'VDB_ANALYST_TOKEN', 'VDB_RUNTIME_TOKEN']) delete env[name];
  const child = spawn(process.execPath, [join(projectRoot, 'dist/core/cli.js'), 'start', '--config', configFile, '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const [address, sqlPort] = await new Promise<[string, string]>((resolve, reject) => {
    let output = '';
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const url = /"url":"http:\/\/([^"]+)"/.exec(output)?.[1];
      const sql = /"sql":"[^"]+:(\d+)"/.exec(output)?.[1];
      if (url && sql) resolve([url, sql]);
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.on('exit', (code) => reject(new Error(`the demo stopped (exit ${code}): ${output}`)));
  });
  return { child, address, sqlPort, folder };
}

/** Runs one README command with bash and curl, as a reader would; returns the status and what it printed. */
async function curl(demo: Demo, found: ReadmeCurl): Promise<{ status: number; output: string }> {
  const bodyFile = join(demo.folder, 'body');
  const command = found.command.replaceAll('localhost:8282', demo.address);
  const script = [...walkthrough.assignments, `${command} -o ${JSON.stringify(bodyFile)} -w '%{http_code}'`].join('\n');
  const { stdout } = await run('bash', ['-c', script]);
  return { status: Number(stdout.trim()), output: readFileSync(bodyFile, 'utf8') };
}

/** Why the curls cannot run here (no curl or bash), or undefined. */
function missingTools(): string | undefined {
  for (const tool of ['curl', 'bash']) {
    try {
      execFileSync(tool, ['--version'], { stdio: 'ignore' });
    } catch {
      return `${tool} is not installed: the README's curl lines cannot run`;
    }
  }
  return undefined;
}

const readme = suite<{ demo: Demo }>('the README walk-through against the demo');
const missing = missingTools();

readme.before(async (context) => {
  if (!missing) context.demo = await startDemo();
});

readme.after(async ({ demo }) => {
  if (!demo) return;
  const exited = new Promise((resolve) => demo.child.once('exit', resolve));
  demo.child.kill('SIGTERM');
  await exited;
  rmSync(demo.folder, { recursive: true, force: true });
});

readme('the walk-through has its curls, each with the status it answers', () => {
  assert.ok(walkthrough.curls.length >= 25, `only ${walkthrough.curls.length} curl lines found`);
  assert.equal(walkthrough.curls.filter((found) => found.status === undefined).map((found) => `README.md:${found.line}`), [], 'curl lines without an expected status');
  assert.equal(walkthrough.assignments.map((line) => line.split('=')[0]), ['ADMIN', 'ANALYST', 'J']);
});

if (missing) readme.skip(`every curl, in README order (${missing})`, () => undefined);
else readme('every curl, in README order, answers the status and the facts the README says', async ({ demo }) => {
  const wrong: string[] = [];
  for (const found of walkthrough.curls) {
    const { status, output } = await curl(demo, found);
    const where = `README.md:${found.line} ${found.command}`;
    if (status !== found.status) wrong.push(`${where}\n  status ${status}, the README says ${found.status}: ${output.slice(0, 300)}`);
    // a piped command's comments describe what the pipe prints, not the body
    if (found.piped) continue;
    const compact = output.replace(/\s+/g, ' ');
    for (const fragment of found.fragments) if (!output.includes(fragment)) wrong.push(`${where}\n  the body lacks ${fragment}: ${compact.slice(0, 300)}`);
    for (const code of found.codes) if (!output.includes(`"code":"${code}"`)) wrong.push(`${where}\n  the body lacks code ${code}: ${compact.slice(0, 300)}`);
    for (const state of found.states) if (!output.includes(`"state":"${state}"`)) wrong.push(`${where}\n  the body lacks state ${state}: ${compact.slice(0, 300)}`);
  }
  assert.equal(wrong, [], wrong.join('\n'));
});

const psqlLines = readPsqlCommands(readFileSync(join(projectRoot, 'README.md'), 'utf8'), HEADING);
const missingPsql = (() => {
  try {
    execFileSync('psql', ['--version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'psql is not installed';
  }
})();

if (missingPsql) readme.skip(`every psql line (${missingPsql})`, () => undefined);
else readme('every psql line prints what the README shows below it', async ({ demo }) => {
  assert.ok(psqlLines.length >= 3, `only ${psqlLines.length} psql lines found`);
  assert.equal(psqlLines.filter((found) => found.expected.length === 0).map((found) => `README.md:${found.line}`), [], 'psql lines without their output');
  const wrong: string[] = [];
  const squeeze = (text: string) => text.replace(/\s+/g, ' ').trim();
  for (const found of psqlLines) {
    const command = found.command.replace('port=5433', `port=${demo.sqlPort}`);
    const output = await run('bash', ['-c', command]).then(({ stdout, stderr }) => stdout + stderr, (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`);
    for (const line of found.expected) {
      if (!squeeze(output).includes(squeeze(line))) wrong.push(`README.md:${found.line} ${found.command}\n  the output lacks ${line}: ${output.slice(0, 300)}`);
    }
  }
  assert.equal(wrong, [], wrong.join('\n'));
});

readme.run();
