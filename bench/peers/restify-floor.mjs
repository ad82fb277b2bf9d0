// The ceiling of a restify service on this machine: the peers' lookup served by restify (the service's
// version, created as the service creates it) and pg.Pool (max 10), as the raw baseline serves it over
// node:http. No authentication, template, authorization, data role, metrics or access line: what is left is
// restify's own work per request. `node bench/peers.mjs --floor` runs it beside the baseline and Platformatic
// DB in one run: no route served through restify's router and handler chain can be faster. The service's query
// route is served from restify's `first` hook instead (core/server/first-route.ts), which skips that work.
//
//   PORT=3048 DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/peers/restify-floor.mjs
import pg from 'pg';
import { pino } from 'pino';
import restify from 'restify';

const SQL = 'SELECT id, email, name, region FROM shop.customers WHERE email = $1 ORDER BY id LIMIT 5';
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const server = restify.createServer({ log: pino({ level: 'warn' }), handleUncaughtExceptions: false });

server.post('/', (req, res, next) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', async () => {
    try {
      const { email } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const result = await pool.query(SQL, [email]);
      res.json(200, { rows: result.rows, rowCount: result.rowCount });
    } catch (error) {
      res.json(500, { error: String(error.message) });
    }
    next();
  });
});

server.listen(Number(process.env.PORT ?? 3048), '127.0.0.1');
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => server.close(() => pool.end().then(() => process.exit(0))));
