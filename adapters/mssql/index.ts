import { defineSqlDialect } from '../../core/plugin-api/index.js';
import { mssqlDialect } from './mssql-dialect.js';

export default defineSqlDialect((id) => mssqlDialect(id));
