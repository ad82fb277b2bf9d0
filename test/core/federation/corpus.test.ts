// test-lane: postgres-server
// (the PostgreSQL + MariaDB pair runs on both servers, and every pair's oracle on the PostgreSQL server)
import { forEachBackend } from '../../support/backends.js';
import { corpusPairs } from './corpus-pairs.js';
import { runCorpusBothWays, type CorpusData } from './corpus-suite.js';
import { shopSetup, type ShopSchema } from './shop-data.js';

const SHOP_CORPUS: CorpusData = {
  vdb: 'fedshop', file: 'test/fixtures/federation/corpus.yaml', schemas: ['fed_crm', 'fed_shop'], minimum: 40,
  setup: (family, schema) => shopSetup(family, schema as ShopSchema),
};

forEachBackend((backend) => {
  for (const pair of corpusPairs(backend, SHOP_CORPUS)) runCorpusBothWays(SHOP_CORPUS, pair, 30);
});
