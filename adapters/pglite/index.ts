import { defineSqlDialect } from '../../core/plugin-api/adapter-kit.js';
import { PgliteDialect } from './pglite-dialect.js';

export default defineSqlDialect((id) => new PgliteDialect(id));
