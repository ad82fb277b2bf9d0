import { PGlite } from '@electric-sql/pglite';
import { mkdtempSync } from 'node:fs';
const dir = mkdtempSync('/tmp/pgl-');
let db = await PGlite.create(dir);
await db.exec("update pg_database set datctype = 'C' where datname = current_database()");
await db.close();
db = await PGlite.create(dir);
console.log((await db.query("select datcollate, datctype, upper('Chloé') as u from pg_database where datname = current_database()")).rows);
