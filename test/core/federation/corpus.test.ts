// test-lane: postgres-server
// (the PostgreSQL + MariaDB pair runs on both servers, and every pair's oracle on the PostgreSQL server)
import { runCorpusOnPairs } from './corpus-pairs.js';
import { shopSetup, type ShopSchema } from './shop-data.js';

runCorpusOnPairs({
  vdb: 'fedshop', file: 'test/fixtures/federation/corpus.yaml', schemas: ['fed_crm', 'fed_shop'], minimum: 40,
  setup: (family, schema) => shopSetup(family, schema as ShopSchema),
});
