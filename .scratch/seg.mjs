import { PGlite } from '@electric-sql/pglite';
import { readFileSync } from 'node:fs';
const db = await PGlite.create();
await db.exec(readFileSync('descriptors/seed/retail.sql','utf8')); await db.exec(readFileSync('descriptors/seed/crm.sql','utf8'));
for (const q of process.argv.slice(2)) console.log(JSON.stringify((await db.query(q)).rows));
