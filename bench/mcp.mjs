// The MCP tool `query_customer_orders` ({"customerId": 7}) against the HTTP query route it mirrors
// (`POST /api/v1/query/perform/customer_orders`), on one service, measured in the same run with autocannon.
//
// Three targets, each run after a discarded warm-up, in alternation (route, MCP stateless, MCP session):
// - route: the query route, as bench/query-endpoint.mjs drives it;
// - mcp-stateless: `POST /mcp` with a `tools/call` and no session (a server and transport per request);
// - mcp-session: the same call in a session opened with `initialize` (its `Mcp-Session-Id` on every request,
//   each request with an id of its own, as a client's concurrent calls are).
// The service runs in a child process (logging.level warn, as the query-endpoint bench); autocannon drives
// it from this process. Backend: PostgreSQL when VDB_TEST_POSTGRES_URL is set (its `sales` schema is dropped
// and re-seeded from descriptors/seed/retail.sql, its `crm` schema from crm.sql), an in-memory PGlite otherwise.
//
//   npm run build && node bench/mcp.mjs
//   VDB_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test node bench/mcp.mjs
//
// Options (env): BENCH_DURATION (10 s), BENCH_WARMUP (2 s), BENCH_CONNECTIONS (10), BENCH_ROUNDS (2),
// BENCH_RATE (requests/s: instead of one service loaded by each target in turn, one service per target, all
// loaded at once at this fixed rate, below saturation, so that every target meets the same machine in the
// same seconds: on a loaded machine the CPU per request of each, and its ratio to the route's, are what to
// read; the calls per second a CPU-bound service allows are in inverse proportion to them),
// BENCH_ROOTS (with BENCH_RATE: checkouts, comma-separated, each built, whose services run side by side, an
// A/B of builds; each target's ratio is to the route of its own checkout), BENCH_TARGETS (a comma list of the three; all by default), BENCH_PROFILE (a folder: the service writes a
// CPU profile of each measured run there, `<target>-<round>.cpuprofile`, for bench/profile-summary.mjs).
// Exits 1 when a response is not 200 or a tool result is an error.
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SEED = join(ROOT, 'descriptors', 'seed', 'retail.sql');
const CRM_SEED = join(ROOT, 'descriptors', 'seed', 'crm.sql');
const TOKEN = 'bench-analyst-token-0123456789';
const FIELDS = { customerId: 7 };
const ROUTE = '/api/v1/query/perform/customer_orders';
const ACCEPT = 'application/json, text/event-stream';
const postgresUrl = process.env.VDB_TEST_POSTGRES_URL || undefined;
const number = (name, fallback) => (process.env[name] ? Number(process.env[name]) : fallback);
const profileDir = process.env.BENCH_PROFILE || undefined;
const rate = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : undefined;
const targets = process.env.BENCH_TARGETS ? process.env.BENCH_TARGETS.split(',') : ['route', 'mcp-stateless', 'mcp-session'];
const settings = { duration: number('BENCH_DURATION', 10), warmup: number('BENCH_WARMUP', 2), connections: number('BENCH_CONNECTIONS', 10), rounds: number('BENCH_ROUNDS', 2) };

function writeConfig() {
  const folder = mkdtempSync(join(tmpdir(), 'vdb-bench-mcp-'));
  const datasource = postgresUrl
    ? { adapter: 'postgres', connection: { connectionString: postgresUrl }, pool: { max: 10 } }
    : { adapter: 'pglite', init: ['seed/retail.sql'] };
  // the demo's VDB retail-crm reads a second datasource: on PostgreSQL its crm schema in the same database
  const crmDb = postgresUrl ? datasource : { adapter: 'pglite', init: ['seed/crm.sql'] };
  const config = {
    server: { host: '127.0.0.1', port: 0 },
    descriptors: join(ROOT, 'descriptors'),
    datasources: { retail_db: datasource, crm_db: crmDb },
    auth: { scheme: 'bearer', tokens: [{ token: TOKEN, subject: 'analyst', roles: ['analyst'] }] },
    logging: { level: 'warn' },
    sql: { enabled: false },
    mcp: { enabled: true },
  };
  const file = join(folder, 'service.yaml');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

async function serve() {
  process.on('disconnect', () => process.exit(0));
  const { startService } = await import('../dist/core/service.js');
  const { logDestination } = await import('../dist/core/logging.js');
  const service = await startService({ configFile: writeConfig(), port: 0, env: process.env, logDestination: logDestination('/dev/null') });
  const { Session } = await import('node:inspector/promises');
  const profiler = new Session();
  profiler.connect();
  process.on('message', async (message) => {
    if (message.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send({ type: 'cpu', micros: user + system, system });
    } else if (message.type === 'profile-start') {
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.setSamplingInterval', { interval: 100 });
      await profiler.post('Profiler.start');
      process.send({ type: 'profiling' });
    } else if (message.type === 'profile-stop') {
      const { profile } = await profiler.post('Profiler.stop');
      writeFileSync(message.file, JSON.stringify(profile));
      process.send({ type: 'profiled' });
    }
  });
  process.send({ type: 'ready', url: service.url });
}

const headers = (extra = {}) => ({ authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: ACCEPT, ...extra });
const toolCall = (id) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'query_customer_orders', arguments: FIELDS } });

/** Opens a session: `initialize`, then `notifications/initialized`; its id. */
async function openSession(url) {
  const init = await fetch(`${url}/mcp`, {
    method: 'POST', headers: headers(),
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }),
  });
  const session = init.headers.get('mcp-session-id');
  if (init.status !== 200 || !session) throw new Error(`initialize answered ${init.status}`);
  await fetch(`${url}/mcp`, { method: 'POST', headers: headers({ 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' }), body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  return session;
}

/** The same rows from the route and from the tool, before anything is measured. */
async function checkSameAnswer(url) {
  const route = await (await fetch(`${url}${ROUTE}`, { method: 'POST', headers: headers(), body: JSON.stringify(FIELDS) })).json();
  const tool = await (await fetch(`${url}/mcp`, { method: 'POST', headers: headers(), body: toolCall(1) })).json();
  if (tool.result?.isError || JSON.stringify(tool.result?.structuredContent?.rows) !== JSON.stringify(route.rows)) {
    throw new Error(`the tool and the route answer differently: ${JSON.stringify(tool).slice(0, 300)}`);
  }
  return route.rowCount;
}

async function load(url, target, session, seconds, rate) {
  const { default: autocannon } = await import('autocannon');
  let id = 1;
  const options = target === 'route'
    ? { url: `${url}${ROUTE}`, method: 'POST', headers: headers(), body: JSON.stringify(FIELDS) }
    : {
      url: `${url}/mcp`,
      method: 'POST',
      headers: headers(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
      requests: [{ setupRequest: (request) => ({ ...request, body: toolCall(id++) }) }],
    };
  let errors = 0;
  const result = await autocannon({
    ...options,
    connections: settings.connections,
    duration: seconds,
    ...(rate && { overallRate: rate }),
    setupClient: (client) => client.on('body', (body) => { if (target !== 'route' && body.includes('"isError":true')) errors += 1; }),
  });
  if (result.non2xx + result.errors + result.timeouts + errors > 0 || result['2xx'] === 0) {
    throw new Error(`${target}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts, ${errors} error results`);
  }
  return result;
}

/** The next message of `type` from a service child. */
function nextOf(child) {
  return (type) => new Promise((resolve) => {
    const listener = (message) => {
      if (message.type !== type) return;
      child.off('message', listener);
      resolve(message);
    };
    child.on('message', listener);
  });
}

/** BENCH_RATE: a service per target, all loaded at once at the same rate; CPU per request of each. */
async function paired() {
  const roots = process.env.BENCH_ROOTS ? process.env.BENCH_ROOTS.split(',') : [ROOT];
  const children = [];
  // a service that failed to start or answer ends the run: the others with it
  process.once('exit', () => { for (const child of children) child.kill(); });
  const services = await Promise.all(roots.flatMap((root) => targets.map(async (target) => {
    const child = fork(join(root, 'bench', 'mcp.mjs'), ['--serve'], { stdio: 'inherit' });
    children.push(child);
    const next = nextOf(child);
    const { url } = await next('ready');
    await checkSameAnswer(url);
    const session = target === 'mcp-session' ? await openSession(url) : undefined;
    const cpu = async () => { child.send({ type: 'cpu' }); return next('cpu'); };
    const profile = async (type, answer, round) => {
      child.send({ type, file: join(profileDir, `${target}-${roots.indexOf(root) + 1}-${round + 1}.cpuprofile`) });
      await next(answer);
    };
    return { root, target, label: roots.length > 1 ? `${target} (${root})` : target, child, url, session, cpu, profile, runs: [], system: [] };
  })));
  for (let round = 0; round < settings.rounds; round += 1) {
    await Promise.all(services.map((service) => load(service.url, service.target, service.session, settings.warmup, rate)));
    if (profileDir) await Promise.all(services.map((service) => service.profile('profile-start', 'profiling', round)));
    const before = await Promise.all(services.map((service) => service.cpu()));
    const results = await Promise.all(services.map((service) => load(service.url, service.target, service.session, settings.duration, rate)));
    const after = await Promise.all(services.map((service) => service.cpu()));
    if (profileDir) await Promise.all(services.map((service) => service.profile('profile-stop', 'profiled', round)));
    services.forEach((service, index) => {
      const requests = results[index].requests.total;
      service.runs.push((after[index].micros - before[index].micros) / requests);
      service.system.push((after[index].system - before[index].system) / requests);
    });
  }

  const fmt = (n) => Math.round(n).toLocaleString('en-US');
  console.log(`backend ${postgresUrl ? 'PostgreSQL' : 'PGlite (in memory)'}; a service per target, all at ${rate} req/s at once; ${settings.connections} connections, ${settings.duration} s runs, ${settings.rounds} rounds`);
  console.log('| target | server CPU µs/request, each round | of which system (kernel) | the route\'s CPU / the target\'s, each round | median |');
  console.log('|---|---|---|---|---|');
  for (const service of services) {
    const route = services.find((candidate) => candidate.root === service.root && candidate.target === 'route');
    const ratios = service.runs.map((cpu, index) => (route ? route.runs[index] / cpu : Number.NaN));
    const median = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)];
    console.log(`| ${service.label} | ${service.runs.map(fmt).join(' / ')} | ${service.system.map(fmt).join(' / ')} | ${ratios.map((ratio) => `${ratio.toFixed(2)}×`).join(' / ')} | ${median.toFixed(2)}× |`);
  }
}

async function main() {
  if (postgresUrl) {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    await client.query('drop schema if exists sales cascade');
    await client.query(readFileSync(SEED, 'utf8'));
    await client.query('drop schema if exists crm cascade');
    await client.query(readFileSync(CRM_SEED, 'utf8'));
    await client.end();
  }
  if (rate) {
    await paired();
    return;
  }
  const child = fork(fileURLToPath(import.meta.url), ['--serve'], { stdio: 'inherit' });
  const next = nextOf(child);
  const { url } = await next('ready');
  const rows = await checkSameAnswer(url);
  const session = await openSession(url);
  const cpu = async () => { child.send({ type: 'cpu' }); return (await next('cpu')).micros; };
  const results = Object.fromEntries(targets.map((target) => [target, []]));
  for (let round = 0; round < settings.rounds; round += 1) {
    for (const target of Object.keys(results)) {
      const sessionId = target === 'mcp-session' ? session : undefined;
      await load(url, target, sessionId, settings.warmup);
      if (profileDir) {
        child.send({ type: 'profile-start' });
        await next('profiling');
      }
      const before = await cpu();
      const result = await load(url, target, sessionId, settings.duration);
      const micros = (await cpu()) - before;
      if (profileDir) {
        child.send({ type: 'profile-stop', file: join(profileDir, `${target}-${round + 1}.cpuprofile`) });
        await next('profiled');
      }
      results[target].push({ rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpu: micros / result.requests.total });
    }
  }
  child.kill();
  const fmt = (n) => Math.round(n).toLocaleString('en-US');
  const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const routeMean = results.route ? mean(results.route.map((run) => run.rps)) : Number.NaN;
  console.log(`backend ${postgresUrl ? 'PostgreSQL' : 'PGlite (in memory)'}; ${rows} rows per answer; ${settings.connections} connections, ${settings.duration} s runs, ${settings.rounds} rounds`);
  console.log('| target | req/s | mean req/s | ratio to the route | p50 ms | p99 ms | server CPU µs/request |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [target, runs] of Object.entries(results)) {
    const rps = mean(runs.map((run) => run.rps));
    console.log(`| ${target} | ${runs.map((run) => fmt(run.rps)).join(' / ')} | ${fmt(rps)} | ${(rps / routeMean).toFixed(2)}× | ${runs.map((run) => run.p50).join(' / ')} | ${runs.map((run) => run.p99).join(' / ')} | ${runs.map((run) => fmt(run.cpu)).join(' / ')} |`);
  }
}

if (process.argv.includes('--serve')) await serve();
else {
  await main().catch((error) => { console.error(error); process.exitCode = 1; });
  process.exit();
}
