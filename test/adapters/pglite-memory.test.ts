import { existsSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnService, type SpawnedService } from '../support/spawned-service.js';
import { ADMIN_TOKEN, demoConfig } from '../support/test-service.js';

// test-lane: soak (a memory soak of a service process under load: one such suite at a time, see scripts/run-tests.mjs)

/**
 * Memory under sustained load on the embedded default: the service as its own process on PGlite, a query
 * endpoint called by many clients at once, the process's resident memory (its PGlite worker included) read
 * after a warm-up and again after the soak. What PGlite keeps per statement would show here as growth per
 * request; a bounded cache or heap that settles does not.
 */
const test = suite<{ service: SpawnedService }>('pglite: memory stays flat under load', { service: undefined as unknown as SpawnedService });

const linux = existsSync('/proc/self/status');
const CLIENTS = 16;
const WARM_UP = 3_000;
const SOAK = 16_000;
/**
 * KiB the process may grow per request once warm: the leak of a parsed message list was 2.1–2.8 per request;
 * without it, 0.0–0.4 were seen at rest, more in a window on a machine under heavy load (heaps settling late).
 */
const MAX_KIB_PER_REQUEST = 1;

test.before(async (context) => {
  if (!linux) return;
  context.service = await spawnService(demoConfig({ logging: { level: 'warn' } }));
});

test.after(async ({ service }) => {
  await service?.stop();
});

/** `count` calls of the query endpoint, CLIENTS at a time; every one must answer 200. */
async function load(service: SpawnedService, count: number): Promise<void> {
  let next = 0;
  const client = async () => {
    while (next < count) {
      const customerId = (next++ % 60) + 1;
      const response = await fetch(`${service.url}/api/v1/query/perform/customer_orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ customerId }),
      });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`${response.status} ${body}`);
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
}

(linux ? test : test.skip)(`a soak of ${SOAK} queries grows the process by less than ${MAX_KIB_PER_REQUEST} KiB per request once warm`, async ({ service }) => {
  await load(service, WARM_UP);
  // a leak grows the process in every window of requests (2.2-2.8 KiB per request in each, seen); heaps and
  // the allocator settling late, on a loaded machine, grow it in some (up to 7.7 seen, then less): a further
  // window is measured only while none stayed under the bound, three at most
  const windows: number[] = [];
  for (let window = 0; window < 3 && !windows.some((kib) => kib < MAX_KIB_PER_REQUEST); window += 1) {
    const warm = service.rss();
    const started = Date.now();
    await load(service, SOAK);
    const kibPerRequest = (service.rss() - warm) / 1024 / SOAK;
    windows.push(kibPerRequest);
    // the figure the issue compares (run with VDB_SOAK_REPORT=1 to see it)
    if (process.env['VDB_SOAK_REPORT']) console.log(`pglite soak: ${(kibPerRequest).toFixed(3)} KiB/request over ${SOAK} requests in ${Date.now() - started} ms, RSS ${(warm / 2 ** 20).toFixed(0)} → ${(service.rss() / 2 ** 20).toFixed(0)} MiB`);
  }
  assert.ok(windows.some((kib) => kib < MAX_KIB_PER_REQUEST), `grew ${windows.map((kib) => kib.toFixed(3)).join(', then ')} KiB per request`);
});

test.run();
