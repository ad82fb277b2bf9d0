import { defineSqlDialect } from '../../core/plugin-api/index.js';
import { mysqlDialect } from './mysql-dialect.js';

export default defineSqlDialect((id) => mysqlDialect(id));
