import { connect, type Socket } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { measured, rssSettled } from '../../support/process-usage.js';
import { pgClient, type DoorTarget } from '../../support/sql-clients.js';
import { ANALYST_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';

/**
 * Clients that never authenticate, attacking the SQL front door's framing before authentication: each is
 * refused at the header of its message, and the service's memory and CPU are measured around the attack
 * (the service runs in this process) while other clients are served.
 */
const test = suite<{ service: TestService; target: DoorTarget }>('the SQL front door before authentication: bounded framing');

/** The authentication timeout is the idle timeout when shorter: short here, for the slow client. */
const AUTHENTICATION_TIMEOUT_MS = 3_000;
const MIB = 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 0x61);

test.before(async (context) => {
  const config = demoConfig({ sql: { enabled: true, port: 0, idleTimeoutMs: AUTHENTICATION_TIMEOUT_MS } });
  context.service = await startTestService({ config });
  context.target = { port: (context.service.sqlAddress as { port: number }).port, database: 'retail@1' };
  // what the first client costs once (the datasource's first statements, the catalog mirror's snapshot) is
  // paid before anything is measured
  await othersServed(context);
  const client = pgClient(context.target, ANALYST_TOKEN);
  await client.connect();
  await client.query('select current_schema()');
  await client.end();
  await rssSettled();
});

test.after(async ({ service }) => {
  await service?.close();
});

/** A raw connection: what it received, and whether the door closed it. */
interface Raw {
  socket: Socket;
  received: () => Buffer;
  closed: Promise<void>;
  isClosed: () => boolean;
}

async function raw(port: number): Promise<Raw> {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  let closed = false;
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => undefined);
  const closing = new Promise<void>((resolve) => socket.once('close', () => { closed = true; resolve(); }));
  await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
  return { socket, received: () => Buffer.concat(chunks), closed: closing, isClosed: () => closed };
}

/** A startup message (protocol 3.0) with the given parameters. */
function startupMessage(parameters: Record<string, string>): Buffer {
  const body = Buffer.concat([
    Buffer.from([0, 3, 0, 0]),
    ...Object.entries(parameters).map(([name, value]) => Buffer.from(`${name}\0${value}\0`)),
    Buffer.from([0]),
  ]);
  const length = Buffer.alloc(4);
  length.writeInt32BE(body.length + 4);
  return Buffer.concat([length, body]);
}

/** Sends a startup message and waits for AuthenticationCleartextPassword (R, length 8, 3). */
async function started(connection: Raw): Promise<void> {
  connection.socket.write(startupMessage({ user: 'tester', database: 'retail@1' }));
  for (let tries = 0; connection.received().length < 9 && tries < 400; tries++) await new Promise((resolve) => setTimeout(resolve, 25));
  assert.equal([...connection.received().subarray(0, 9)], [0x52, 0, 0, 0, 8, 0, 0, 0, 3]);
}

/** Writes `CHUNK`s until `total` bytes are sent or the door closes; resolves with the bytes it accepted. */
async function stream(connection: Raw, total: number): Promise<number> {
  let sent = 0;
  while (sent < total && !connection.isClosed()) {
    if (!connection.socket.write(CHUNK)) {
      await Promise.race([new Promise((resolve) => connection.socket.once('drain', resolve)), connection.closed]);
    }
    sent += CHUNK.length;
  }
  return sent;
}

/** The SQLSTATE of the first ErrorResponse in `bytes`, or undefined. */
function errorCode(bytes: Buffer): string | undefined {
  let offset = 0;
  while (offset + 5 <= bytes.length) {
    const length = bytes.readUInt32BE(offset + 1);
    if (bytes[offset] === 0x45) {
      const fields = bytes.subarray(offset + 5, offset + 1 + length).toString('latin1').split('\0');
      return fields.find((field) => field.startsWith('C'))?.slice(1);
    }
    offset += 1 + length;
  }
  return undefined;
}

/** Resolves once `closed` settles, or with false past `ms`. */
function within(closed: Promise<void>, ms: number): Promise<boolean> {
  return Promise.race([closed.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);
}

/** Another client's query, and the health probe, answer while an attack runs. */
async function othersServed({ service, target }: { service: TestService; target: DoorTarget }): Promise<void> {
  const client = pgClient(target, ANALYST_TOKEN);
  try {
    await client.connect();
    const result = await client.query('select id from sales.customers where id = $1', [1]);
    assert.equal(result.rows, [{ id: 1 }]);
  } finally {
    await client.end().catch(() => undefined);
  }
  const health = await service.request('/observe/health', { token: null });
  assert.is(health.status, 200);
}

test('a startup message announced as 1 GiB is refused at its header (FATAL 08P01) and the connection closed: no memory held', async (context) => {
  const connection = await raw(context.target.port);
  const header = Buffer.alloc(8);
  header.writeInt32BE(1024 * MIB, 0);
  header.writeInt32BE(196608, 4);
  const { value: sent, rssGrowthMiB, cpuSeconds } = await measured(async () => {
    connection.socket.write(header);
    const [accepted] = await Promise.all([stream(connection, 96 * MIB), othersServed(context)]);
    assert.ok(await within(connection.closed, 10_000), 'the door closes the connection');
    return accepted;
  });
  console.log(`startup message of 1 GiB announced: ${(sent / MIB).toFixed(1)} MiB accepted before the close, RSS +${rssGrowthMiB.toFixed(1)} MiB, CPU ${cpuSeconds.toFixed(2)} s`);
  assert.is(errorCode(connection.received()), '08P01');
  assert.ok(sent < 32 * MIB, `the door stopped reading: ${sent} bytes accepted`);
  assert.ok(rssGrowthMiB < 40, `RSS grew ${rssGrowthMiB.toFixed(1)} MiB`);
});

test('a password message announced as 60 MiB, streamed in 64 KiB writes, is refused at its header: no CPU burnt, others served', async (context) => {
  const connection = await raw(context.target.port);
  await started(connection);
  const header = Buffer.alloc(5);
  header[0] = 0x70;
  header.writeInt32BE(60 * MIB, 1);
  const { value: sent, rssGrowthMiB, cpuSeconds } = await measured(async () => {
    connection.socket.write(header);
    const [accepted] = await Promise.all([stream(connection, 60 * MIB), othersServed(context)]);
    assert.ok(await within(connection.closed, 10_000), 'the door closes the connection');
    return accepted;
  });
  console.log(`password message of 60 MiB announced: ${(sent / MIB).toFixed(1)} MiB accepted before the close, RSS +${rssGrowthMiB.toFixed(1)} MiB, CPU ${cpuSeconds.toFixed(2)} s`);
  assert.is(errorCode(connection.received().subarray(9)), '08P01');
  assert.ok(sent < 32 * MIB, `the door stopped reading: ${sent} bytes accepted`);
  // the whole process, the client's writes and the other client's connection included
  assert.ok(cpuSeconds < 3, `CPU ${cpuSeconds.toFixed(2)} s`);
  assert.ok(rssGrowthMiB < 40, `RSS grew ${rssGrowthMiB.toFixed(1)} MiB`);
});

test('a startup message and a password message over their caps (10000 and 16384 bytes) but small are refused too', async (context) => {
  const oversize = await raw(context.target.port);
  oversize.socket.write(startupMessage({ user: 'tester', database: 'retail@1', application_name: 'x'.repeat(12_000) }));
  assert.ok(await within(oversize.closed, 10_000));
  assert.is(errorCode(oversize.received()), '08P01');

  const password = await raw(context.target.port);
  await started(password);
  const token = Buffer.from(`${'t'.repeat(20_000)}\0`);
  const message = Buffer.alloc(5);
  message[0] = 0x70;
  message.writeInt32BE(4 + token.length, 1);
  password.socket.write(Buffer.concat([message, token]));
  assert.ok(await within(password.closed, 10_000));
  assert.is(errorCode(password.received().subarray(9)), '08P01');

  await othersServed(context);
});

test('a client sending its startup message a byte at a time is cut off at the authentication timeout, counted from its first byte', async ({ target }) => {
  const connection = await raw(target.port);
  const message = startupMessage({ user: 'tester', database: 'retail@1' });
  const started = Date.now();
  let offset = 0;
  const drip = setInterval(() => {
    if (offset < message.length && !connection.isClosed()) connection.socket.write(message.subarray(offset, ++offset));
  }, 200);
  try {
    assert.ok(await within(connection.closed, AUTHENTICATION_TIMEOUT_MS + 10_000), 'closed');
  } finally {
    clearInterval(drip);
  }
  assert.ok(offset < message.length, 'cut off before the message was whole');
  assert.ok(Date.now() - started < AUTHENTICATION_TIMEOUT_MS + 8_000);
  assert.is(errorCode(connection.received()), '57P05');
});

test.run();
