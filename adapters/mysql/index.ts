import { defineSqlDialect } from '../../core/plugins/plugin-kinds.js';
import { mysqlDialect } from './mysql-dialect.js';

export default defineSqlDialect((id) => mysqlDialect(id));
