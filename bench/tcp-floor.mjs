// The floor of any Node.js process between a client and PostgreSQL: a TCP proxy forwarding bytes both ways
// (no parsing). Its CPU per query is what the door's two sockets cost before any work of its own.
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import pg from 'pg';

if (process.argv[2] === '--proxy') {
  const server = net.createServer((client) => {
    client.setNoDelay(true);
    const upstream = net.connect(5432, '127.0.0.1');
    upstream.setNoDelay(true);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  server.listen(0, '127.0.0.1', () => process.send(server.address().port));
} else {
  const url = process.env.VDB_TEST_POSTGRES_URL;
  const db = new URL(url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query('drop table if exists floor_bench; create table floor_bench (id integer primary key, name text not null, region text not null)');
  await admin.query(`insert into floor_bench select n, 'customer ' || n, 'North' from generate_series(1, 10000) n`);
  const child = fork(new URL(import.meta.url).pathname, ['--proxy']);
  const port = await new Promise((resolve) => child.once('message', resolve));
  const cpu = () => { const f = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) * 10_000; };
  for (const seconds of [4, 10]) {
    const clients = Array.from({ length: 10 }, () => new pg.Client({ host: '127.0.0.1', port, database: db, user: 'postgres' }));
    await Promise.all(clients.map((c) => c.connect()));
    const before = cpu();
    const until = Date.now() + seconds * 1000;
    const started = Date.now();
    let count = 0;
    await Promise.all(clients.map(async (c) => { while (Date.now() < until) { const id = 1 + Math.floor(Math.random() * 10000); const r = await c.query('select id, name, region from floor_bench where id = $1', [id]); if (r.rows[0].id !== id) throw new Error('bad'); count++; } }));
    const used = cpu() - before;
    console.log(`${seconds} s: ${(count / ((Date.now() - started) / 1000)).toFixed(0)} queries/s through the proxy, its CPU ${(used / count).toFixed(1)} µs per query`);
    await Promise.all(clients.map((c) => c.end()));
  }
  child.kill();
  await admin.query('drop table floor_bench');
  await admin.end();
}
