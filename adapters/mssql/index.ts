import { defineSqlDialect } from '../../core/plugin-api/adapter-kit.js';
import { MssqlDialect } from './mssql-dialect.js';

export default defineSqlDialect((id) => new MssqlDialect(id));
