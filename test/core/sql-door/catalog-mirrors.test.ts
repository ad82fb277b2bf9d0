import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CatalogMirrors } from '../../../core/sql-door/catalog/catalog-mirrors.js';
import type { MirrorPool } from '../../../core/sql-door/catalog/mirror-pool.js';
import { callerOf, shopOnMysql } from './catalog-fixtures.js';

const limits = { timeoutMs: 10_000, owner: 'tester' };

async function database(pool: MirrorPool): Promise<unknown> {
  return (await pool.run({ kind: 'query', sql: 'select current_database()', params: [], maxRows: 10, maxBytes: 1_000 }, limits)).rows;
}

test('callers of one grant set share one mirror; past capacity the least recent one\'s threads end', async () => {
  const mirrors = new CatalogMirrors(1, 600_000, 2);
  try {
    const buyer = callerOf(shopOnMysql, 'buyer');
    const first = mirrors.mirrorFor(buyer);
    assert.is(mirrors.mirrorFor(callerOf(shopOnMysql, 'buyer')), first);
    assert.equal(await Promise.all([database(first), database(first)]), [[['shop@3']], [['shop@3']]]);
    const admin = mirrors.mirrorFor(callerOf(shopOnMysql, 'admin'));
    assert.is.not(admin, first);
    assert.equal(await database(admin), [['shop@3']]);
    assert.is(first.threads, 0, 'the buyer\'s mirror was evicted and its worker ended');
    const again = mirrors.mirrorFor(buyer);
    assert.is.not(again, first);
    assert.equal(await database(again), [['shop@3']]);
  } finally {
    await mirrors.close();
  }
});

test('a mirror unused for its idle time ends its thread; the next statement builds it again', async () => {
  const mirrors = new CatalogMirrors(2, 1, 2);
  try {
    const pool = mirrors.mirrorFor(callerOf(shopOnMysql, 'buyer'));
    assert.equal(await database(pool), [['shop@3']]);
    for (let waited = 0; pool.threads > 0 && waited < 200; waited++) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.is(pool.threads, 0);
    assert.equal(await database(pool), [['shop@3']]);
  } finally {
    await mirrors.close();
  }
});

test.run();
