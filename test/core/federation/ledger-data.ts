/**
 * The second federation corpus's data: a bank's branches and accounts (schema `led_bank`, on MariaDB in the
 * MariaDB pair: DATETIME, DECIMAL, TINYINT(1), VARCHAR under a case-folding, padding collation) and its
 * transactions and transfers (schema `led_ops`, on PostgreSQL: an unconstrained `numeric`, `timestamptz`,
 * `bigint`, `double precision`). Its values are the ones an engine or a second database answers differently
 * from PostgreSQL: NULL join keys and values; texts differing only in case, trailing spaces or accents, and
 * multi-byte ones; negative numerics and numerics of several scales; bigints beyond 2^53 (as join keys too);
 * instants around midnight UTC and at month ends, written in other zones. Every value is written here.
 */
import type { CorpusData, Family } from './corpus-suite.js';
import { decimal, instant, int, tablesSetup, text, wallClock, type Column, type ShopTable } from './shop-data.js';

const big = (name: string): Column => ({ name, pg: 'bigint', mysql: 'bigint' });
const flag = (name: string): Column => ({ name, pg: 'boolean', mysql: 'tinyint(1)' });
const day = (name: string): Column => ({ name, pg: 'date', mysql: 'date' });
// single precision: PostgreSQL computes and compares it so
const single = (name: string): Column => ({ name, pg: 'real', mysql: 'float' });
const double = (name: string): Column => ({ name, pg: 'double precision', mysql: 'double' });
// an unconstrained numeric: each value its own scale (MySQL has none: a wide fixed scale holds the same values)
// a blank-padded text: PostgreSQL pads it and compares it without its trailing spaces; MySQL strips them as it reads it
const padded = (name: string, length: number): Column => ({ name, pg: `char(${length})`, mysql: `char(${length})` });
const anyNumeric = (name: string): Column => ({ name, pg: 'numeric', mysql: 'decimal(30,8)' });

const branches: ShopTable = {
  schema: 'led_bank',
  name: 'branches',
  columns: [int('id'), text('code', 8), text('city', 40), text('country', 2), day('opened_on'), padded('tier', 3)],
  primaryKey: ['id'],
  // `par`, `PAR ` and `Par` are codes of their own: equal to `PAR` only under a folding or padding collation
  rows: [
    [1, 'PAR', 'Paris', 'FR', '1999-12-31', 'A'],
    [2, 'par', 'paris', 'FR', '2000-01-01', 'A  '],
    [3, 'PAR ', 'Orléans', 'FR', '2004-02-29', 'B'],
    [4, 'LYO', 'Lyon', 'FR', null, 'AA'],
    [5, 'ZRH', 'Zürich', 'CH', '2010-06-30', null],
    [6, 'TYO', '東京', 'JP', '2020-03-31', 'a'],
    [7, 'Par', 'orleans', null, '2024-01-31', 'A'],
    [8, 'GVA', null, 'CH', '2024-02-01', 'B '],
  ],
};

const accounts: ShopTable = {
  schema: 'led_bank',
  name: 'accounts',
  columns: [
    int('id'), int('branch_id'), text('holder', 40), text('kind', 10), decimal('balance', 14, 2), double('rate'), flag('active'),
    big('external_ref'), wallClock('opened_at'), day('closed_on'), decimal('overdraft', 8, 0), single('score'),
  ],
  primaryKey: ['id'],
  rows: [
    [1, 1, 'Élodie', 'checking', '1520.75', 0.015, 'true', '9007199254740993', '2023-12-31 23:59:59.5', null, '500', 0.1],
    [2, 1, 'elodie', 'savings', '-20.05', 0.1, 'true', '9007199254740992', '2024-01-01 00:00:00', null, '0', 2.5],
    [3, 2, 'ELODIE', 'checking', '0.00', 0.2, 'false', '-9007199254740993', '2024-01-31 23:00:00', '2024-03-01', '1000', null],
    [4, 3, 'Marc ', 'Checking', '999999999999.99', 3.141592653589793, 'true', '9223372036854775807', '2024-02-29 12:00:00', null, null, 0.3],
    [5, 3, 'marc', 'savings', '-0.01', null, 'false', '1', '2024-02-29 23:59:59', '2024-02-29', '250', 1e-3],
    [6, 4, 'Zoë', 'loan', '-15000.00', 0.0525, 'true', null, '2024-03-01 00:00:00', null, '0', 100.25],
    [7, 5, 'zoe', 'checking', '42.42', 1e-5, 'true', '12345678901234567', '2024-03-31 23:30:00', null, '100', 0.1],
    [8, 6, '佐藤', 'savings', '1000000.00', 0.001, 'true', '-1', '2024-04-01 00:00:00', null, '0', 7],
    [9, null, 'Noah', 'checking', '7.50', 0.3, 'false', '42', '2024-01-15 08:30:00', '2024-01-16', '0', 0.7],
    [10, 7, 'noah', null, '7.5', 0.3, 'true', '43', '2024-01-15 08:30:00', null, '75', 0.1],
    [11, 8, 'Ana', 'loan', null, 2.5, 'true', '9007199254740994', '2023-06-30 12:00:00', null, '1', 3.3],
    [12, 99, 'ana', 'savings', '12.34', 0.02, 'true', '9007199254740995', '2023-06-30 12:00:00', null, '0', 1],
  ],
};

const currencies = ['EUR', 'eur', 'CHF', 'JPY', null];
// `été` with a combining accent (3 + 2 code points), a flag (2 code points, one grapheme)
const memos = ['rent', 'Rent', 'rent ', 'café', 'CAFÉ', 'Salary', 'salary', null, 'fee 10%', 'a_b', '100% off', 'ÉTÉ', 'お茶', 'e\u0301te\u0301', '\u{1F1EB}\u{1F1F7} fête'];
const amounts = ['120.5', '-120.50', '0', '1e2', '0.000001', '-99.999', '33.3333', '1000000', '-0.5', '7', '7.000', '12.345678'];
const fees = ['0.2500', '0.0000', null, '1.1000', '-0.0050'];
const instants = [
  '2024-01-31 23:59:59.999999+00', '2024-02-01 00:00:00+00', '2024-02-01 00:30:00+01', '2024-02-29 23:30:00-01',
  '2024-03-31 22:00:00-03', '2023-12-31 23:59:59+00', '2024-01-01 00:00:00+14', '2024-02-15 12:00:00+00',
  '2024-02-28 23:59:59-12', '2024-03-01 00:00:00+00',
];

/** Transactions 1–40: account NULL on 5 and 17, a missing account (99) on 29; bigint sequence numbers beyond 2^53. */
function transactionRows(): (string | number | null)[][] {
  const rows: (string | number | null)[][] = [];
  for (let id = 1; id <= 40; id += 1) {
    const account = id === 5 || id === 17 ? null : id === 29 ? 99 : ((id * 7) % 12) + 1;
    const booked = instants[id % instants.length] as string;
    const valueDay = `2024-0${(id % 3) + 1}-${String(((id * 3) % 28) + 1).padStart(2, '0')}`;
    const settled = id % 6 === 0 ? null : id % 4 === 0 ? 'false' : 'true';
    const sequence = (9007199254740990n + BigInt(id)).toString();
    // the external reference of an account on some (a join key beyond 2^53), NULL on others
    const ref = id % 5 === 0 ? null : ['9007199254740993', '9007199254740992', '9223372036854775807', '42', '-9007199254740993', '1'][id % 6] as string;
    const fx = id % 7 === 0 ? null : [1, 0.1, 1.0000001, 110.25, 0.9375][id % 5] as number;
    rows.push([id, account, amounts[id % amounts.length] as string, fees[id % fees.length] ?? null, currencies[id % currencies.length] ?? null,
      memos[id % memos.length] ?? null, booked, valueDay, settled, sequence, ref, fx]);
  }
  return rows;
}

const transactions: ShopTable = {
  schema: 'led_ops',
  name: 'transactions',
  columns: [
    int('id'), int('account_id'), anyNumeric('amount'), decimal('fee', 10, 4), text('currency', 3), text('memo', 60), instant('booked_at'),
    day('value_date'), flag('settled'), big('seq'), big('account_ref'), double('fx_rate'),
  ],
  primaryKey: ['id'],
  rows: transactionRows(),
};

const transfers: ShopTable = {
  schema: 'led_ops',
  name: 'transfers',
  columns: [
    int('id'), int('from_account'), int('to_account'), decimal('amount', 12, 2), wallClock('requested_at'), instant('executed_at'), text('note', 40), text('from_branch', 8),
    padded('channel', 5),
  ],
  primaryKey: ['id'],
  rows: [
    [1, 1, 2, '100.00', '2024-01-31 23:59:00', '2024-02-01 00:00:30+00', 'monthly', 'PAR', 'web'],
    [2, 2, 1, '100', '2024-02-01 00:00:00', '2024-01-31 23:00:00-02', 'Monthly', 'par', 'Web'],
    [3, 3, null, '0.01', '2024-02-29 23:59:59.999', null, null, 'PAR ', 'atm  '],
    [4, 4, 5, '-5.50', '2024-03-01 00:00:00', '2024-03-01 00:00:00+01', 'refund', 'Par', null],
    [5, null, 6, '250.25', '2024-03-31 12:00:00', '2024-04-01 02:00:00+03', 'Zoë', 'LYO', 'web'],
    [6, 7, 7, '0.00', '2023-12-31 23:59:59', '2024-01-01 00:00:01+00', 'self', 'ZRH', 'x'],
    [7, 8, 99, '1000000.00', '2024-01-15 08:30:00', '2024-01-15 08:30:00+09', '佐藤', 'TYO', 'atm'],
    [8, 12, 11, '12.34', '2023-06-30 12:00:00', '2023-06-30 11:00:00-01', 'ana', null, 'web '],
    [9, 6, 1, '15000.00', '2024-02-15 09:00:00', null, 'loan', 'lyo', 'wire'],
    [10, 1, 3, '33.33', '2024-02-15 09:00:00', '2024-02-15 09:00:00+00', 'split', 'PAR', 'web'],
    [11, 1, 4, '33.33', '2024-02-15 09:00:00', '2024-02-15 09:00:00+00', 'split', 'PAR', 'atm'],
    [12, 1, 9, '33.34', '2024-02-15 09:00:00', '2024-02-15 09:00:01+00', 'split', 'GVA', 'web'],
  ],
};

export const LEDGER_TABLES: readonly ShopTable[] = [branches, accounts, transactions, transfers];

/** The ledger corpus: its statements, its data set, and the schemas each side of a pair holds. */
export const LEDGER_CORPUS: CorpusData = {
  vdb: 'fedledger',
  file: 'test/fixtures/federation/ledger-corpus.yaml',
  schemas: ['led_bank', 'led_ops'],
  minimum: 60,
  setup: (family: Family, schema: string) => tablesSetup(LEDGER_TABLES, family, schema),
};
