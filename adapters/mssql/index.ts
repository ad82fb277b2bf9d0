import { defineSqlDialect } from '../../core/plugins/plugin-kinds.js';
import { mssqlDialect } from './mssql-dialect.js';

export default defineSqlDialect((id) => mssqlDialect(id));
