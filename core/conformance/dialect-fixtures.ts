import type { LogicalType } from '../plugin-api/catalog.js';
import type { JsonValue, SqlFamily } from '../plugin-api/sql-dialect.js';

/** The schema the conformance suite creates (a database on MySQL) and drops again. */
export const SCHEMA = 'conformance';

/** What one SQL family needs to build the conformance schema. */
export interface ConformanceFixture {
  /** Statements run one by one: drop and recreate the schema, its tables, view and function. */
  setup: string[];
  /** Drops the schema. */
  teardown: string;
  /**
   * Bindings of `insert into conformance.all_types values (?, ...)` giving EXPECTED_ROW. Only the zoned
   * timestamp differs: MariaDB takes no offset in a literal, its session runs in UTC instead.
   */
  allTypesValues: unknown[];
}

/** Columns of conformance.all_types in order, with the logical type every adapter must report. */
export const ALL_TYPES_COLUMNS: readonly (readonly [string, LogicalType])[] = [
  ['id', 'integer'],
  ['c_string', 'string'],
  ['c_integer', 'integer'],
  ['c_bigint', 'bigint'],
  ['c_decimal', 'decimal'],
  ['c_float', 'float'],
  ['c_boolean', 'boolean'],
  ['c_date', 'date'],
  ['c_time', 'time'],
  ['c_timestamp', 'timestamp'],
  ['c_timestamptz', 'timestamp'],
  ['c_json', 'json'],
  ['c_uuid', 'uuid'],
  ['c_binary', 'binary'],
];

/** The JSON every adapter must return for row 1: one literal, so the encoding is identical across adapters. */
export const EXPECTED_ROW: Readonly<Record<string, JsonValue>> = {
  id: 1,
  c_string: 'héllo ✓',
  c_integer: 42,
  c_bigint: '9007199254740993',
  c_decimal: '12345678901234.5',
  c_float: 1.5,
  c_boolean: true,
  c_date: '2024-01-31',
  c_time: '10:11:12.5',
  c_timestamp: '2024-01-31T10:11:12.123',
  c_timestamptz: '2024-01-31T10:11:12.123Z',
  c_json: { a: 1, b: [true, null, 'x'] },
  c_uuid: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  c_binary: 'AQL/',
};

/** Row 2 holds only nulls. */
export const NULL_ROW: Readonly<Record<string, JsonValue>> = Object.fromEntries(
  ALL_TYPES_COLUMNS.map(([name]) => [name, name === 'id' ? 2 : null]),
);

const commonValues = (timestamptz: string): unknown[] => [
  1, 'héllo ✓', 42, '9007199254740993', '12345678901234.5000', 1.5, true, '2024-01-31', '10:11:12.5',
  '2024-01-31 10:11:12.123', timestamptz, '{"a": 1, "b": [true, null, "x"]}', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11',
  Buffer.from([0x01, 0x02, 0xff]),
];

/** Parent, child and view are spelled the same on every family; only types and the function differ. */
const relations = (int: string) => [
  `create table ${SCHEMA}.parent (id ${int} primary key, code varchar(20) not null, name varchar(100),
    constraint parent_code_key unique (code))`,
  `create table ${SCHEMA}.child (parent_id ${int} not null, line_no ${int} not null, note varchar(200),
    primary key (parent_id, line_no),
    constraint child_parent_fk foreign key (parent_id) references ${SCHEMA}.parent (id))`,
  `create view ${SCHEMA}.child_view as
    select c.parent_id, p.code, c.line_no, c.note from ${SCHEMA}.child c join ${SCHEMA}.parent p on p.id = c.parent_id`,
];

const FIXTURES: Partial<Record<SqlFamily, ConformanceFixture>> = {
  postgres: {
    setup: [
      `drop schema if exists ${SCHEMA} cascade`,
      `create schema ${SCHEMA}`,
      `create table ${SCHEMA}.all_types (id integer primary key, c_string varchar(100), c_integer integer,
        c_bigint bigint, c_decimal numeric(20, 4), c_float double precision, c_boolean boolean, c_date date,
        c_time time(3), c_timestamp timestamp(3), c_timestamptz timestamp(3) with time zone, c_json jsonb,
        c_uuid uuid, c_binary bytea)`,
      ...relations('integer'),
      `create function ${SCHEMA}.add_one(x integer) returns integer language sql immutable as 'select x + 1'`,
    ],
    teardown: `drop schema if exists ${SCHEMA} cascade`,
    allTypesValues: commonValues('2024-01-31 11:11:12.123+01:00'),
  },
  // MariaDB: JSON is LONGTEXT with a json_valid check, UUID is a native type (10.7+).
  mysql: {
    setup: [
      `drop database if exists ${SCHEMA}`,
      `create database ${SCHEMA} character set utf8mb4`,
      `create table ${SCHEMA}.all_types (id int primary key, c_string varchar(100), c_integer int,
        c_bigint bigint, c_decimal decimal(20, 4), c_float double, c_boolean boolean, c_date date,
        c_time time(3), c_timestamp datetime(3), c_timestamptz timestamp(3) null default null, c_json json,
        c_uuid uuid, c_binary varbinary(16))`,
      ...relations('int'),
      `create function ${SCHEMA}.add_one(x int) returns int deterministic return x + 1`,
    ],
    teardown: `drop database if exists ${SCHEMA}`,
    allTypesValues: commonValues('2024-01-31 10:11:12.123'),
  },
};

export function fixtureFor(family: SqlFamily): ConformanceFixture {
  const fixture = FIXTURES[family];
  if (!fixture) throw new Error(`no conformance fixture for the ${family} family`);
  return fixture;
}
