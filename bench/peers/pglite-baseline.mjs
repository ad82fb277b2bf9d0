// The raw baseline of the PGlite variant of bench/peers.mjs: node:http + PGlite, no framework, the same
// lookup as the peers harness's baseline-server.mjs (POST / {"email": "..."} → {rows, rowCount}), over its
// own in-memory PGlite seeded from the bench bundle's seed/shop.sql. PGlite runs in this thread, as a
// program embedding it would; PGlite's types as they come (the lookup reads integers and text only).
//
//   PORT=3047 node bench/peers/pglite-baseline.mjs
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { PGlite } from '@electric-sql/pglite';

const port = Number(process.env.PORT ?? 3047);
const host = process.env.HOST ?? '127.0.0.1';
const SQL = 'SELECT id, email, name, region FROM shop.customers WHERE email = $1 ORDER BY id LIMIT 5';

const db = await PGlite.create();
await db.exec(readFileSync(new URL('./descriptors/seed/shop.sql', import.meta.url), 'utf8'));

function send(res, status, obj) {
  const body = JSON.stringify(obj);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const server = http.createServer((req, res) => {
  if (req.method !== 'POST') return send(res, 405, { error: 'method not allowed' });
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', async () => {
    let params;
    try {
      params = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch {
      return send(res, 400, { error: 'invalid JSON' });
    }
    if (typeof params.email !== 'string') return send(res, 400, { error: 'email (string) required' });
    try {
      const result = await db.query(SQL, [params.email]);
      send(res, 200, { rows: result.rows, rowCount: result.rows.length });
    } catch (error) {
      send(res, 500, { error: error.message });
    }
  });
});
server.keepAliveTimeout = 65_000;
server.listen(port, host, () => console.log(`pglite baseline listening on http://${host}:${port}`));

async function stop() {
  server.close();
  server.closeAllConnections();
  await db.close().catch(() => undefined);
  process.exit(0);
}
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
