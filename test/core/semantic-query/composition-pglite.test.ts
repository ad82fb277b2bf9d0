import { sharedPglite } from '../../support/shared-pglite.js';
import { runCompositionSuite } from './composition-suite.js';

runCompositionSuite({
  name: 'pglite',
  schema: 'semcomp',
  setup: ['create schema if not exists semcomp'],
  nullSafe: (left, right) => `${left} IS NOT DISTINCT FROM ${right}`,
  datasourceConfig: { adapter: 'pglite' },
  open: sharedPglite,
  closeAfter: false,
});
