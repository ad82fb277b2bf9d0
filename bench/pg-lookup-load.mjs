// The SQL benchmarks' load: node-postgres clients looking one row up by a random primary key, back to back.
import pg from 'pg';

/**
 * `connections` clients (each made from `config()`), each running `sql` with a random id in 1..`rows` back to
 * back for `seconds`, every answer checked; the queries per second and the count. `named`: as a prepared
 * statement of each client (node-postgres's `name`: parsed once per connection), not unnamed each time.
 */
export async function lookupLoad(config, { sql, rows, connections, seconds, named = false }) {
  const clients = Array.from({ length: connections }, () => new pg.Client(config()));
  await Promise.all(clients.map((client) => client.connect()));
  const until = Date.now() + seconds * 1000;
  const started = Date.now();
  let count = 0;
  await Promise.all(clients.map(async (client) => {
    while (Date.now() < until) {
      const id = 1 + Math.floor(Math.random() * rows);
      const result = await client.query(named ? { name: 'lookup', text: sql, values: [id] } : { text: sql, values: [id] });
      if (result.rows[0]?.id !== id) throw new Error(`the lookup of ${id} answered ${JSON.stringify(result.rows)}`);
      count++;
    }
  }));
  const elapsed = (Date.now() - started) / 1000;
  await Promise.all(clients.map((client) => client.end()));
  return { qps: count / elapsed, count };
}
