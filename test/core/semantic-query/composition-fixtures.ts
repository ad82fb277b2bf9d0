/**
 * Models and generated data for the composition oracle (composition-suite.ts): a TPC-DS-shaped star
 * (store_sales many-to-one store and item, items many-to-many promotions through a bridge), an
 * OrionBelt-shaped pair of facts (returns many-to-one sales, both reaching products) with a second fact on
 * products (purchases, a chasm), and the OSI compliance prelude (customers, orders) for COUNT(*).
 *
 * The data come from a seeded generator, so every run has the same rows: keys repeat, facts point at no
 * dimension row (orphans) or at NULL, and some groups have rows on one side only (a store without sales, a
 * category without returns, one with purchases only).
 */
import { createHash } from 'node:crypto';
import { stringify } from 'yaml';

export const VDB = 'semcomp';
export const PRELUDE_VDB = 'semprelude';
export const NESTED_VDB = 'semnested';
export const NOKEYS_VDB = 'semnokeys';
const SEEDED = [
  'cp_store', 'cp_store_sales', 'cp_item', 'cp_promo', 'cp_item_promo',
  'cp_products', 'cp_sales', 'cp_returns', 'cp_purchases',
  'fp_customers', 'fp_orders',
];
/** Copies of the TPC-DS-shaped tables without any key or constraint, for a model that declares no key. */
const KEYLESS = ['nk_store', 'nk_store_sales', 'nk_item', 'nk_promo', 'nk_item_promo'];
export const TABLES = [...SEEDED, ...KEYLESS];

/** mulberry32: a small deterministic generator, so the rows are the same on every backend and every run. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Cell = number | string | null;

function values(rows: Cell[][]): string {
  const cell = (value: Cell) => (value === null ? 'null' : typeof value === 'number' ? String(value) : `'${value}'`);
  return rows.map((row) => `(${row.map(cell).join(', ')})`).join(', ');
}

/** The generated rows, per table. */
export function generatedRows(): Record<string, Cell[][]> {
  const random = generator(26);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const money = () => Math.round(random() * 20000) / 100;
  const states = ['TN', 'GA', 'CA', null] as const;
  // Store 11 has no employee count; store 12 (WA) has no sales: WA is a group on the store side only.
  const store = Array.from({ length: 12 }, (_, index): Cell[] => [index + 1, index === 11 ? 'WA' : (states[index % 4] as Cell), index === 10 ? null : 10 + Math.floor(random() * 50)]);
  const storeSales = Array.from({ length: 400 }, (_, index): Cell[] => {
    const roll = random();
    const storeSk = roll < 0.05 ? null : roll < 0.1 ? 99 : 1 + Math.floor(random() * 11);
    const itemSk = random() < 0.03 ? 77 : 1 + Math.floor(random() * 15);
    return [index + 1, storeSk, itemSk, random() < 0.03 ? null : money(), pick(['web', 'shop', 'phone'])];
  });
  const item = Array.from({ length: 15 }, (_, index): Cell[] => [index + 1, money()]);
  // Two promotions share the name spring: an item in both counts once for spring. Promotion 6 has no item.
  const promo: Cell[][] = [[1, 'spring'], [2, 'spring'], [3, 'summer'], [4, 'autumn'], [5, 'winter'], [6, 'none']];
  const itemPromo = new Map<string, Cell[]>();
  for (let count = 0; count < 30; count++) {
    const itemSk = 1 + Math.floor(random() * 14); // item 15 is in no promotion
    const promoSk = 1 + Math.floor(random() * 5);
    itemPromo.set(`${itemSk}-${promoSk}`, [itemSk, promoSk]);
  }
  const categories = ['toys', 'food', 'tools', 'garden'] as const;
  // Product 9 has no category; product 10 (books) has purchases only.
  const products = Array.from({ length: 10 }, (_, index): Cell[] => [index + 1, index === 8 ? null : index === 9 ? 'books' : (categories[index % 4] as Cell)]);
  const sales = Array.from({ length: 300 }, (_, index): Cell[] => {
    const roll = random();
    return [index + 1, roll < 0.04 ? null : roll < 0.07 ? 55 : 1 + Math.floor(random() * 9), money()];
  });
  const categoryOf = new Map(products.map(([id, category]) => [id, category]));
  // No sale of a garden product is returned: garden is a group of sales only. Sales are returned more than once.
  const returnable = sales.filter(([, product]) => categoryOf.get(product) !== 'garden');
  const returns = Array.from({ length: 160 }, (_, index): Cell[] => {
    const roll = random();
    const sale = roll < 0.04 ? null : roll < 0.08 ? 9999 : (pick(returnable)[0] as number);
    return [index + 1, sale, money()];
  });
  const purchases = Array.from({ length: 80 }, (_, index): Cell[] => [index + 1, 1 + Math.floor(random() * 10), money()]);
  return {
    cp_store: store, cp_store_sales: storeSales, cp_item: item, cp_promo: promo, cp_item_promo: [...itemPromo.values()],
    cp_products: products, cp_sales: sales, cp_returns: returns, cp_purchases: purchases,
    // The OSI Foundation compliance prelude (f_prelude), as published: order 105 has no customer.
    fp_customers: [[1, 'EAST', 'retail'], [2, 'EAST', 'retail'], [3, 'WEST', 'wholesale'], [4, 'NORTH', 'retail']],
    fp_orders: [[101, 1, 100, 'completed'], [102, 1, 50, 'completed'], [103, 2, 200, 'pending'], [104, 3, 75, 'completed'], [105, 99, 30, 'completed']],
  };
}

const COLUMNS: Record<string, string> = {
  cp_store: 'store_sk integer primary key, state varchar(2), number_employees integer',
  cp_store_sales: 'ticket integer primary key, store_sk integer, item_sk integer, net_paid decimal(10,2), channel varchar(10)',
  cp_item: 'item_sk integer primary key, price decimal(10,2)',
  cp_promo: 'promo_sk integer primary key, promo_name varchar(10)',
  cp_item_promo: 'item_sk integer not null, promo_sk integer not null, primary key (item_sk, promo_sk)',
  cp_products: 'product_id integer primary key, product_cat varchar(10)',
  cp_sales: 'sales_id integer primary key, product integer, sales_amount decimal(10,2)',
  cp_returns: 'return_id integer primary key, return_sales_id integer, return_amount decimal(10,2)',
  cp_purchases: 'purchase_id integer primary key, purchase_product_id integer, purchase_price decimal(10,2)',
  fp_customers: 'id integer primary key, region varchar(10), segment varchar(10)',
  fp_orders: 'id integer primary key, customer_id integer, amount decimal(10,2), status varchar(10)',
};

export function seedStatements(qualify: (table: string) => string): string[] {
  const rows = generatedRows();
  return [
    ...TABLES.map((table) => `drop table if exists ${qualify(table)}`),
    ...SEEDED.flatMap((table) => [`create table ${qualify(table)} (${COLUMNS[table]})`, `insert into ${qualify(table)} values ${values(rows[table] ?? [])}`]),
    ...KEYLESS.map((table) => `create table ${qualify(table)} as select * from ${qualify(table.replace(/^nk_/, 'cp_'))}`),
  ];
}

const field = (name: string, expression = name) => ({ name, expression: { dialects: [{ dialect: 'ANSI_SQL', expression }] } });
const metric = (name: string, expression: string) => ({ name, expression: { dialects: [{ dialect: 'ANSI_SQL', expression }] } });
const rel = (name: string, from: string, to: string, fromColumns: string[], toColumns: string[]) => ({ name, from, to, from_columns: fromColumns, to_columns: toColumns });

function compositionDocument(schema: string): string {
  return stringify({
    namespace: 'comp',
    binding: { schema },
    semantic_model: [{
      name: 'comp',
      datasets: [
        { name: 'store', source: 'cp_store', primary_key: ['store_sk'], fields: [field('store_sk'), field('state'), field('number_employees')] },
        { name: 'store_sales', source: 'cp_store_sales', primary_key: ['ticket'], fields: [field('ticket'), field('store_sk'), field('item_sk'), field('net_paid'), field('channel')] },
        { name: 'item', source: 'cp_item', primary_key: ['item_sk'], fields: [field('item_sk'), field('price')] },
        { name: 'promo', source: 'cp_promo', primary_key: ['promo_sk'], fields: [field('promo_sk'), field('promo_name')] },
        { name: 'item_promo', source: 'cp_item_promo', primary_key: ['item_sk', 'promo_sk'], fields: [field('item_sk'), field('promo_sk')] },
        { name: 'products', source: 'cp_products', primary_key: ['product_id'], fields: [field('product_id'), field('product_cat')] },
        { name: 'sales', source: 'cp_sales', primary_key: ['sales_id'], fields: [field('sales_id'), field('product'), field('sales_amount')] },
        { name: 'returns', source: 'cp_returns', primary_key: ['return_id'], fields: [field('return_id'), field('return_sales_id'), field('return_amount')] },
        { name: 'purchases', source: 'cp_purchases', primary_key: ['purchase_id'], fields: [field('purchase_id'), field('purchase_product_id'), field('purchase_price')] },
      ],
      relationships: [
        rel('store_sales_to_store', 'store_sales', 'store', ['store_sk'], ['store_sk']),
        rel('store_sales_to_item', 'store_sales', 'item', ['item_sk'], ['item_sk']),
        rel('item_promo_to_item', 'item_promo', 'item', ['item_sk'], ['item_sk']),
        rel('item_promo_to_promo', 'item_promo', 'promo', ['promo_sk'], ['promo_sk']),
        rel('sales_to_products', 'sales', 'products', ['product'], ['product_id']),
        rel('returns_to_sales', 'returns', 'sales', ['return_sales_id'], ['sales_id']),
        rel('purchases_to_products', 'purchases', 'products', ['purchase_product_id'], ['product_id']),
      ],
      metrics: [
        // The TPC-DS example's metric: a sum over sales by a sum over stores.
        metric('store_productivity', 'SUM(store_sales.net_paid) / SUM(store.number_employees)'),
        metric('net_paid', 'SUM(store_sales.net_paid)'),
        metric('employees', 'SUM(store.number_employees)'),
        metric('paid_per_store', 'SUM(store_sales.net_paid) / COUNT(store.store_sk)'),
        metric('price_per_link', 'SUM(item.price) / NULLIF(COUNT(item_promo.promo_sk), 0)'),
        metric('price_per_ticket', 'SUM(item.price) / NULLIF(COUNT(store_sales.ticket), 0)'),
        metric('promo_price', 'SUM(item.price)'),
        // The OrionBelt model's metric, and one by counts.
        metric('return_rate', 'SUM(returns.return_amount) / SUM(sales.sales_amount)'),
        metric('return_ratio', 'CAST(COUNT(returns.return_id) AS DECIMAL(12,4)) / NULLIF(COUNT(sales.sales_id), 0)'),
        metric('total_sales', 'SUM(sales.sales_amount)'),
        metric('total_returns', 'SUM(returns.return_amount)'),
        // Form 2 over metrics: each operand at its own home.
        metric('net_sales', 'total_sales - total_returns'),
        // A chasm: two facts sharing products.
        metric('margin', 'SUM(sales.sales_amount) - SUM(purchases.purchase_price)'),
      ],
    }],
  });
}

/**
 * The TPC-DS-shaped star again, over tables without keys, in a model that declares none: each relationship's
 * `to` is its one side, so what it joins on is the key that de-duplicates that side's rows.
 */
function keylessDocument(schema: string): string {
  return stringify({
    namespace: 'nokeys',
    binding: { schema },
    semantic_model: [{
      name: 'nokeys',
      datasets: [
        { name: 'store', source: 'nk_store', fields: [field('store_sk'), field('state'), field('number_employees')] },
        { name: 'store_sales', source: 'nk_store_sales', fields: [field('ticket'), field('store_sk'), field('item_sk'), field('net_paid'), field('channel')] },
        { name: 'item', source: 'nk_item', fields: [field('item_sk'), field('price')] },
        { name: 'promo', source: 'nk_promo', fields: [field('promo_sk'), field('promo_name')] },
        { name: 'item_promo', source: 'nk_item_promo', fields: [field('item_sk'), field('promo_sk')] },
      ],
      relationships: [
        rel('store_sales_to_store', 'store_sales', 'store', ['store_sk'], ['store_sk']),
        rel('store_sales_to_item', 'store_sales', 'item', ['item_sk'], ['item_sk']),
        rel('item_promo_to_item', 'item_promo', 'item', ['item_sk'], ['item_sk']),
        rel('item_promo_to_promo', 'item_promo', 'promo', ['promo_sk'], ['promo_sk']),
      ],
      metrics: [
        metric('store_productivity', 'SUM(store_sales.net_paid) / SUM(store.number_employees)'),
        metric('net_paid', 'SUM(store_sales.net_paid)'),
        metric('employees', 'SUM(store.number_employees)'),
        metric('promo_price', 'SUM(item.price)'),
      ],
    }],
  });
}

/**
 * The compliance prelude's model with a model metric COUNT(*) (vector T-006); `nested`, the same with the
 * nested window of vector T-030, which the service refuses.
 */
function preludeDocument(schema: string, nested: boolean): string {
  return stringify({
    namespace: nested ? 'nested' : 'prelude',
    binding: { schema },
    semantic_model: [{
      name: 'prelude',
      datasets: [
        { name: 'customers', source: 'fp_customers', primary_key: ['id'], fields: [field('id'), field('region'), field('segment')] },
        { name: 'orders', source: 'fp_orders', primary_key: ['id'], fields: [field('id'), field('customer_id'), field('status'), field('amount')] },
      ],
      relationships: [rel('orders_to_customer', 'orders', 'customers', ['customer_id'], ['id'])],
      metrics: [
        metric('total_revenue', 'SUM(orders.amount)'),
        metric('order_count', 'COUNT(orders.id)'),
        metric('row_count', 'COUNT(*)'),
        ...(nested ? [metric('nested_w', 'SUM(SUM(orders.amount) OVER (PARTITION BY orders.customer_id)) OVER ()')] : []),
      ],
    }],
  });
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function moduleFiles(vdb: string, module: string, document: string, schema: string, datasource: string, tables: string[]): Record<string, string> {
  const manifest = stringify({
    name: `${module}-semantic`, version: '1.0.0', namespace: module,
    documents: [{ path: `${module}.osi.yaml`, mediaType: 'application/vnd.osi+yaml', sha256: sha256(document) }],
  });
  const descriptor = stringify({
    name: vdb, version: '1', datasource,
    schemas: [{ name: schema, include: tables }],
    semantic: { module: { uri: `semantic/${module}`, name: `${module}-semantic`, version: '1.0.0', sha256: sha256(manifest) } },
    dataRoles: [{ name: 'clerk', grants: [{ resource: schema, allow: ['select'] }] }],
  });
  return {
    [`bundle/vdbs/${vdb}.yaml`]: descriptor,
    [`bundle/semantic/${module}/manifest.yaml`]: manifest,
    [`bundle/semantic/${module}/${module}.osi.yaml`]: document,
  };
}

export function compositionBundle(schema: string, datasource: string): Record<string, string> {
  return {
    ...moduleFiles(VDB, 'comp', compositionDocument(schema), schema, datasource, TABLES.filter((table) => table.startsWith('cp_'))),
    ...moduleFiles(PRELUDE_VDB, 'prelude', preludeDocument(schema, false), schema, datasource, TABLES.filter((table) => table.startsWith('fp_'))),
    ...moduleFiles(NOKEYS_VDB, 'nokeys', keylessDocument(schema), schema, datasource, KEYLESS),
    ...moduleFiles(NESTED_VDB, 'nested', preludeDocument(schema, true), schema, datasource, TABLES.filter((table) => table.startsWith('fp_'))),
  };
}
