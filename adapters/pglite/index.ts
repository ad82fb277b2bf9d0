import { defineSqlDialect } from '../../core/plugins/plugin-kinds.js';
import { pgliteDialect } from './pglite-dialect.js';

export default defineSqlDialect((id) => pgliteDialect(id));
