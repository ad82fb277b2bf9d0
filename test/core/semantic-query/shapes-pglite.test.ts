import { sharedPglite } from '../../support/shared-pglite.js';
import { runShapesSuite } from './shapes-suite.js';

runShapesSuite({
  name: 'pglite',
  schema: 'semshapes',
  setup: ['create schema if not exists semshapes'],
  types: { timestamp: 'timestamp' },
  datasourceConfig: { adapter: 'pglite' },
  open: sharedPglite,
  closeAfter: false,
});
