import { PGlite } from '@electric-sql/pglite';
const db = await PGlite.create();
console.log((await db.query("select datcollate, datctype, datlocprovider, upper('Chloé') as u, upper('Chloé' collate \"C\") as uc from pg_database where datname = current_database()")).rows);
