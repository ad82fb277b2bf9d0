/**
 * A model with one fixture per shape of the OSI Foundation §6 (a star with orphan facts and NULLs, two facts
 * sharing a dimension, a bridge, two paths, no path), its data, and the service bundle serving it. The
 * expected rows of the suite are computed by hand from the data below.
 */
import { createHash } from 'node:crypto';
import { stringify } from 'yaml';

export const VDB = 'semshapes';
export const TABLES = [
  'appearances', 'actors', 'movies', 'returns', 'orders', 'customers', 'tickets', 'users', 'segments', 'weather', 'codes', 'rosters', 'players', 'teams', 'cities',
  'st_orders', 'st_returns', 'st_customers', 'readings',
];
export const RESTRICTED_TOKEN = 'shapes-restricted-token';

/** Column types per family: the tables are created on each backend with its own. */
export interface FamilyTypes {
  timestamp: string;
}

/**
 * customers C5 has no region; orders O5 points at no customer (orphan), O7 has no amount; returns R4 points at
 * no customer; movie M4 has no cast; tickets reach users along two relationships; weather is related to nothing.
 */
export function seedStatements(types: FamilyTypes, qualify: (table: string) => string): string[] {
  const t = qualify;
  return [
    ...TABLES.map((table) => `drop table if exists ${t(table)}`),
    `create table ${t('customers')} (id integer primary key, region varchar(20))`,
    `insert into ${t('customers')} values (1, 'EAST'), (2, 'EAST'), (3, 'WEST'), (4, 'NORTH'), (5, null)`,
    `create table ${t('orders')} (id integer primary key, customer_id integer, amount decimal(10,2), status varchar(20), ordered_at ${types.timestamp})`,
    `insert into ${t('orders')} values (1, 1, 100, 'paid', '2024-01-15 10:00:00'), (2, 1, 200, 'paid', '2024-02-03 10:00:00'),`
      + ` (3, 2, 50, 'cancelled', '2024-02-20 10:00:00'), (4, 3, 300, 'paid', '2024-04-10 10:00:00'), (5, 9, 70, 'paid', '2024-04-11 10:00:00'),`
      + ` (6, 5, 20, 'paid', '2024-05-01 10:00:00'), (7, 3, null, 'paid', '2024-05-02 10:00:00')`,
    `create table ${t('returns')} (id integer primary key, customer_id integer, amount decimal(10,2))`,
    `insert into ${t('returns')} values (1, 1, 25), (2, 4, 10), (3, 5, 5), (4, 8, 7)`,
    `create table ${t('actors')} (actor_id integer primary key, height integer)`,
    `insert into ${t('actors')} values (1, 170), (2, 170), (3, 180)`,
    `create table ${t('movies')} (movie_id integer primary key, gross decimal(10,2))`,
    `insert into ${t('movies')} values (1, 100), (2, 200), (3, 50), (4, 40)`,
    `create table ${t('appearances')} (actor_id integer not null, movie_id integer not null, primary key (actor_id, movie_id))`,
    `insert into ${t('appearances')} values (1, 1), (1, 2), (2, 1), (3, 3)`,
    `create table ${t('users')} (id integer primary key, name varchar(20))`,
    `insert into ${t('users')} values (1, 'ann'), (2, 'bob')`,
    `create table ${t('tickets')} (id integer primary key, opened_by integer, closed_by integer, points integer)`,
    `insert into ${t('tickets')} values (1, 1, 2, 3), (2, 2, 1, 5)`,
    `create table ${t('segments')} (region varchar(20), label varchar(20))`,
    `insert into ${t('segments')} values ('EAST', 'big'), ('EAST', 'core'), ('WEST', 'big')`,
    `create table ${t('weather')} (day integer primary key, temp integer)`,
    `insert into ${t('weather')} values (1, 20)`,
    // LIKE's wildcards and the escape character inside values: a contains/startsWith/endsWith filter matches them literally.
    `create table ${t('codes')} (id integer primary key, code varchar(20))`,
    // rosters is a declared bridge between players and teams; both also refer to cities, a second path of equal length.
    `create table ${t('cities')} (id integer primary key, name varchar(20))`,
    `insert into ${t('cities')} values (1, 'oslo'), (2, 'rome')`,
    `create table ${t('players')} (id integer primary key, level varchar(20), city_id integer)`,
    `insert into ${t('players')} values (1, 'pro', 1), (2, 'pro', 2), (3, 'amateur', 1)`,
    `create table ${t('teams')} (id integer primary key, budget integer, city_id integer)`,
    `insert into ${t('teams')} values (1, 100, 1), (2, 200, 2), (3, 40, 1), (4, 10, 2)`,
    `create table ${t('rosters')} (player_id integer not null, team_id integer not null, primary key (player_id, team_id))`,
    `insert into ${t('rosters')} values (1, 1), (2, 1), (1, 2), (3, 3)`,
    `insert into ${t('codes')} values (1, '50%'), (2, '50 off'), (3, 'a_b'), (4, 'axb'), (5, 'x!y'), (6, 'x!!y'), (7, '[a]'), (8, 'a')`,
    // The Foundation's §6.8.2 worked example, exactly: orders and returns stitched on customers.
    `create table ${t('st_customers')} (customer_id varchar(4) primary key, region varchar(20))`,
    `insert into ${t('st_customers')} values ('C1', 'EAST'), ('C2', 'EAST'), ('C3', 'WEST'), ('C4', 'NORTH')`,
    `create table ${t('st_orders')} (order_id varchar(4) primary key, customer_id varchar(4), amount integer)`,
    `insert into ${t('st_orders')} values ('O1', 'C1', 100), ('O2', 'C1', 200), ('O3', 'C2', 50), ('O4', 'C3', 300)`,
    `create table ${t('st_returns')} (return_id varchar(4) primary key, customer_id varchar(4), amount integer)`,
    `insert into ${t('st_returns')} values ('R1', 'C1', 25), ('R2', 'C4', 10)`,
    // §6.11.2: one 5 and 99 NULLs.
    `create table ${t('readings')} (id integer primary key, x integer)`,
    `insert into ${t('readings')} values ${Array.from({ length: 100 }, (_, index) => `(${index + 1}, ${index === 0 ? 5 : 'null'})`).join(', ')}`,
  ];
}

const field = (name: string, expression = name) => ({ name, expression: { dialects: [{ dialect: 'ANSI_SQL', expression }] } });
const metric = (name: string, expression: string) => ({ name, expression: { dialects: [{ dialect: 'ANSI_SQL', expression }] } });
const rel = (name: string, from: string, to: string, fromColumns: string[], toColumns: string[]) => ({ name, from, to, from_columns: fromColumns, to_columns: toColumns });

function osiDocument(schema: string): string {
  return stringify({
    namespace: 'shapes',
    binding: { schema },
    semantic_model: [{
      name: 'shapes',
      datasets: [
        { name: 'customers', source: 'customers', primary_key: ['id'], fields: [field('id'), field('region')] },
        { name: 'orders', source: 'orders', primary_key: ['id'], fields: [
          field('id'), field('customer_id'), field('amount'), field('status'), field('ordered_at'),
          // Enrichment (Foundation §4.3.1): a field of customers read on each order, many-to-one.
          field('customer_region', 'customers.region'),
          // Fields of fields of the same dataset, one of them over the enriched one.
          field('doubled', 'amount * 2'), field('doubled_plus', 'doubled + 1'), field('region_label', "COALESCE(customer_region, 'none')"),
          // A window at the orders' grain (§6.10.4): each customer's orders numbered by date.
          field('order_rank', 'ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY ordered_at)'),
          // A window over an enriched field: computed over orders joined many-to-one to customers.
          field('region_rank', 'ROW_NUMBER() OVER (PARTITION BY customer_region ORDER BY id)'),
          // The Foundation's own dialect (a plain string): written in the datasource's forms (NULLS LAST on MySQL, || and IFF).
          { name: 'amount_rank', expression: 'ROW_NUMBER() OVER (ORDER BY amount DESC NULLS LAST, id)' },
          { name: 'amount_rank_nulls_first', expression: 'ROW_NUMBER() OVER (ORDER BY amount NULLS FIRST, id)' },
          { name: 'amount_rank_default', expression: 'ROW_NUMBER() OVER (ORDER BY amount, id)' },
          { name: 'size_label', expression: "IFF(amount > 100, 'big', 'small') || '-' || status" },
          { name: 'due_at', expression: 'DATEADD(day, 30, ordered_at)' },
          // A quote and a backslash in a literal: written as the server reads them (MySQL escapes with backslashes).
          { name: 'note', expression: "status || ' it''s a\\b'" },
        ] },
        { name: 'returns', source: 'returns', primary_key: ['id'], fields: [field('id'), field('customer_id'), field('amount')] },
        { name: 'actors', source: 'actors', primary_key: ['actor_id'], fields: [field('actor_id'), field('height')] },
        { name: 'movies', source: 'movies', primary_key: ['movie_id'], fields: [field('movie_id'), field('gross')] },
        { name: 'appearances', source: 'appearances', primary_key: ['actor_id', 'movie_id'], fields: [field('actor_id'), field('movie_id')] },
        { name: 'users', source: 'users', primary_key: ['id'], fields: [field('id'), field('name')] },
        { name: 'tickets', source: 'tickets', primary_key: ['id'], fields: [field('id'), field('points')] },
        { name: 'segments', source: 'segments', fields: [field('region'), field('label')] },
        { name: 'weather', source: 'weather', primary_key: ['day'], fields: [field('day'), field('temp')] },
        { name: 'cities', source: 'cities', primary_key: ['id'], fields: [field('id'), field('name')] },
        { name: 'players', source: 'players', primary_key: ['id'], fields: [field('id'), field('level')] },
        { name: 'teams', source: 'teams', primary_key: ['id'], fields: [field('id'), field('budget')] },
        { name: 'rosters', source: 'rosters', role: 'bridge', primary_key: ['player_id', 'team_id'], fields: [field('player_id'), field('team_id')] },
        { name: 'codes', source: 'codes', primary_key: ['id'], fields: [field('id'), field('code')] },
        { name: 'st_customers', source: 'st_customers', primary_key: ['customer_id'], fields: [field('customer_id'), field('region')] },
        { name: 'st_orders', source: 'st_orders', primary_key: ['order_id'], fields: [field('order_id'), field('customer_id'), field('amount')] },
        { name: 'st_returns', source: 'st_returns', primary_key: ['return_id'], fields: [field('return_id'), field('customer_id'), field('amount')] },
        { name: 'readings', source: 'readings', primary_key: ['id'], fields: [field('id'), field('x')] },
      ],
      relationships: [
        rel('orders_to_customers', 'orders', 'customers', ['customer_id'], ['id']),
        rel('returns_to_customers', 'returns', 'customers', ['customer_id'], ['id']),
        rel('appearances_to_actors', 'appearances', 'actors', ['actor_id'], ['actor_id']),
        rel('appearances_to_movies', 'appearances', 'movies', ['movie_id'], ['movie_id']),
        rel('tickets_opened_by', 'tickets', 'users', ['opened_by'], ['id']),
        rel('tickets_closed_by', 'tickets', 'users', ['closed_by'], ['id']),
        // customers.region is no key of segments: N:N (Foundation §6.4).
        rel('rosters_to_players', 'rosters', 'players', ['player_id'], ['id']),
        rel('rosters_to_teams', 'rosters', 'teams', ['team_id'], ['id']),
        rel('players_to_cities', 'players', 'cities', ['city_id'], ['id']),
        rel('teams_to_cities', 'teams', 'cities', ['city_id'], ['id']),
        rel('customers_to_segments', 'customers', 'segments', ['region'], ['region']),
        rel('st_orders_to_customers', 'st_orders', 'st_customers', ['customer_id'], ['customer_id']),
        rel('st_returns_to_customers', 'st_returns', 'st_customers', ['customer_id'], ['customer_id']),
      ],
      metrics: [
        metric('revenue', 'SUM(orders.amount)'),
        metric('east_revenue', "SUM(CASE WHEN orders.customer_region = 'EAST' THEN orders.amount END)"),
        metric('order_count', 'COUNT(orders.id)'),
        metric('returned', 'SUM(returns.amount)'),
        metric('customer_count', 'COUNT(customers.id)'),
        metric('gross', 'SUM(movies.gross)'),
        metric('points', 'SUM(tickets.points)'),
        metric('budget', 'SUM(teams.budget)'),
        metric('average_temp', 'AVG(weather.temp)'),
        metric('st_order_count', 'COUNT(st_orders.order_id)'),
        metric('net_revenue', 'revenue - returned'),
        metric('average_order', 'revenue / NULLIF(order_count, 0)'),
        // A metric naming a COUNT metric (§4.5 form 3) counts too: 0 where its fact has no row (§6.11.5).
        metric('st_orders_placed', 'st_order_count'),
        // Windows at the query's grain (§6.10.5): a running total, and one that reads a row-level field (§6.10.3).
        metric('running_revenue', 'SUM(revenue) OVER (ORDER BY orders.ordered_at)'),
        metric('regional_peak', 'MAX(COUNT(customers.id)) OVER (PARTITION BY customers.region)'),
        { name: 'big_revenue', expression: 'SUM(IFF(orders.amount >= 200, orders.amount, 0))' },
      ],
    }],
  });
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The bundle files: the VDB (with a restricted role that may not read customers.region) and its module. */
export function shapesBundle(schema: string, datasource: string): Record<string, string> {
  const document = osiDocument(schema);
  const manifest = stringify({
    name: 'shapes-semantic', version: '1.0.0', namespace: 'shapes',
    documents: [{ path: 'shapes.osi.yaml', mediaType: 'application/vnd.osi+yaml', sha256: sha256(document) }],
  });
  const tables = TABLES;
  const vdb = stringify({
    name: VDB, version: '1', datasource,
    schemas: [{ name: schema, include: tables }],
    semantic: { module: { uri: 'semantic/shapes', name: 'shapes-semantic', version: '1.0.0', sha256: sha256(manifest) } },
    dataRoles: [
      { name: 'clerk', grants: [{ resource: schema, allow: ['select'] }] },
      {
        name: 'restricted',
        grants: [
          { resource: `${schema}.orders`, allow: ['select'] },
          { resource: `${schema}.customers`, allow: ['select'], columns: ['id'] },
        ],
      },
    ],
  });
  const plain = stringify({ name: 'plain', version: '1', datasource, schemas: [{ name: schema, include: ['weather'] }] });
  // A model the Foundation refuses (§6.10.5: a metric composing a windowed metric): its VDB serves no semantic queries.
  const brokenDocument = stringify({
    namespace: 'broken', binding: { schema },
    semantic_model: [{
      name: 'broken',
      datasets: [{ name: 'weather', source: 'weather', primary_key: ['day'], fields: [field('day'), field('temp')] }],
      metrics: [metric('warmth', 'SUM(weather.temp)'), metric('running', 'SUM(warmth) OVER (ORDER BY weather.day)'), metric('again', 'running + 0')],
    }],
  });
  const brokenManifest = stringify({
    name: 'broken-semantic', version: '1.0.0', namespace: 'broken',
    documents: [{ path: 'broken.osi.yaml', mediaType: 'application/vnd.osi+yaml', sha256: sha256(brokenDocument) }],
  });
  const broken = stringify({
    name: 'broken', version: '1', datasource, schemas: [{ name: schema, include: ['weather'] }],
    semantic: { module: { uri: 'semantic/broken', name: 'broken-semantic', version: '1.0.0', sha256: sha256(brokenManifest) } },
  });
  return {
    'bundle/vdbs/shapes.yaml': vdb,
    'bundle/vdbs/plain.yaml': plain,
    'bundle/vdbs/broken.yaml': broken,
    'bundle/semantic/shapes/manifest.yaml': manifest,
    'bundle/semantic/shapes/shapes.osi.yaml': document,
    'bundle/semantic/broken/manifest.yaml': brokenManifest,
    'bundle/semantic/broken/broken.osi.yaml': brokenDocument,
  };
}
