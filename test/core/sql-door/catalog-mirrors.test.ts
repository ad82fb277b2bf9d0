import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CatalogMirrors } from '../../../core/sql-door/catalog/catalog-mirrors.js';
import { callerOf, shopOnMysql } from './catalog-fixtures.js';

test('callers of one grant set share one mirror, built once; past capacity the least recent one\'s thread ends', async () => {
  const mirrors = new CatalogMirrors(1, 600_000);
  try {
    const buyer = callerOf(shopOnMysql, 'buyer');
    const [first, second] = await Promise.all([mirrors.mirrorFor(buyer), mirrors.mirrorFor(callerOf(shopOnMysql, 'buyer'))]);
    assert.is(first, second);
    const admin = await mirrors.mirrorFor(callerOf(shopOnMysql, 'admin'));
    assert.is.not(admin, first);
    assert.ok(first.stopped, 'the buyer\'s mirror was evicted and its worker ended');
    assert.not.ok(admin.stopped);
    const again = await mirrors.mirrorFor(buyer);
    assert.is.not(again, first);
    assert.equal((await again.request({ kind: 'query', sql: 'select current_database()', params: [], maxRows: 10 }, 10_000)).rows, [['shop@3']]);
  } finally {
    await mirrors.close();
  }
});

test('a mirror unused for its idle time ends its thread; the next statement builds it again', async () => {
  const mirrors = new CatalogMirrors(2, 1);
  try {
    const buyer = callerOf(shopOnMysql, 'buyer');
    const first = await mirrors.mirrorFor(buyer);
    for (let waited = 0; !first.stopped && waited < 200; waited++) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(first.stopped);
    const again = await mirrors.mirrorFor(buyer);
    assert.is.not(again, first);
    assert.not.ok(again.stopped);
  } finally {
    await mirrors.close();
  }
});

test.run();
