import { defineSqlDialect } from '../../core/plugin-api/index.js';
import { pgliteDialect } from './pglite-dialect.js';

export default defineSqlDialect((id) => pgliteDialect(id));
