import { defineSqlDialect } from '../../core/plugin-api/index.js';
import { PgliteDialect } from './pglite-dialect.js';

export default defineSqlDialect((id) => new PgliteDialect(id));
