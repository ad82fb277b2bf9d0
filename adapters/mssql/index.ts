import { defineSqlDialect } from '../../core/plugin-api/index.js';
import { MssqlDialect } from './mssql-dialect.js';

export default defineSqlDialect((id) => new MssqlDialect(id));
