-- Seed of the demo's retail_db: embedded PGlite (PGlite 0.5 reports PostgreSQL 18.6); plain PostgreSQL that
-- gives identical rows on PostgreSQL 15.
-- Rows come from generate_series with fixed arithmetic (the product catalog is a written list), never
-- random(), so each fresh database holds the same data and tests and docs can quote it. Intervals use
-- hours and minutes only: days and months added to a timestamptz follow the session time zone (DST),
-- fixed durations do not.
-- Rows: 60 customers, 30 products, 150 orders, 375 order lines.

create schema sales;

create table sales.customers (
  id serial primary key,
  email text not null unique,
  name text not null,
  region text not null,
  created_at timestamptz not null default now()
);

create table sales.products (
  id serial primary key,
  sku text not null unique,
  name text not null,
  category text not null,
  unit_price numeric(10, 2) not null check (unit_price >= 0),
  stock integer not null default 0 check (stock >= 0),
  active boolean not null default true
);

create table sales.orders (
  id serial primary key,
  customer_id integer not null references sales.customers (id),
  status text not null default 'pending'
    check (status in ('pending', 'paid', 'shipped', 'delivered', 'cancelled')),
  ordered_at timestamptz not null default now(),
  total numeric(12, 2) not null default 0 check (total >= 0),
  notes jsonb,
  reference uuid unique
);

create table sales.order_lines (
  order_id integer not null references sales.orders (id) on delete cascade,
  line_no integer not null check (line_no > 0),
  product_id integer not null references sales.products (id),
  quantity integer not null check (quantity > 0),
  unit_price numeric(10, 2) not null check (unit_price >= 0),
  primary key (order_id, line_no)
);

create index orders_customer_id_idx on sales.orders (customer_id);
create index order_lines_product_id_idx on sales.order_lines (product_id);

-- Ids are given explicitly so references below do not depend on insertion order; the sequences are moved
-- past them at the end. First and last names pair up uniquely: customer i takes first name (i-1) % 20 and
-- a last name shifted by 3 for each further round of 20.
insert into sales.customers (id, email, name, region, created_at)
select i,
       lower(first_name || '.' || last_name) || '@example.com',
       first_name || ' ' || last_name,
       (array['North', 'South', 'East', 'West', 'Central'])[(i * 3) % 5 + 1],
       timestamptz '2023-01-02 09:00:00+00' + (i - 1) * interval '144 hours' + (i * 7 % 10) * interval '1 hour'
from generate_series(1, 60) as i
cross join lateral (
  select (array['Ada', 'Ben', 'Chloe', 'Daniel', 'Elena', 'Farid', 'Grace', 'Hiro', 'Ines', 'Jonas',
                'Keira', 'Luca', 'Maya', 'Noah', 'Olga', 'Pedro', 'Quinn', 'Rosa', 'Sami', 'Tessa'])[(i - 1) % 20 + 1] as first_name,
         (array['Adams', 'Berg', 'Costa', 'Dubois', 'Evans', 'Fischer', 'Garcia', 'Hansen', 'Ito', 'Jensen',
                'Kowalski', 'Lopez', 'Moreau', 'Nakamura', 'Okafor', 'Petrov', 'Quist', 'Rossi', 'Silva', 'Tanaka'])
           [((i - 1) * 7 + (i - 1) / 20 * 3) % 20 + 1] as last_name
) as names;

-- The catalog is a written list (names must fit their category); stock and the inactive items are derived.
insert into sales.products (id, sku, name, category, unit_price, stock, active)
select id, prefix || '-' || lpad(id::text, 4, '0'), name, category, price, (id * 37) % 150, id % 11 <> 0
from (values
  (1, 'BEV', 'Sparkling Water 1L', 'Beverages', 1.20),
  (2, 'BEV', 'Cold Brew Coffee 250ml', 'Beverages', 3.50),
  (3, 'BEV', 'Green Tea, 20 bags', 'Beverages', 4.25),
  (4, 'BEV', 'Orange Juice 1L', 'Beverages', 2.95),
  (5, 'BEV', 'Oat Milk 1L', 'Beverages', 2.40),
  (6, 'SNK', 'Sea Salt Crisps 150g', 'Snacks', 1.85),
  (7, 'SNK', 'Dark Chocolate 70% 100g', 'Snacks', 2.60),
  (8, 'SNK', 'Trail Mix 300g', 'Snacks', 5.40),
  (9, 'SNK', 'Rice Crackers 120g', 'Snacks', 1.95),
  (10, 'SNK', 'Protein Bar, Peanut', 'Snacks', 2.10),
  (11, 'HOU', 'Dish Soap 500ml', 'Household', 2.30),
  (12, 'HOU', 'Laundry Detergent 2L', 'Household', 9.90),
  (13, 'HOU', 'Paper Towels, 6 rolls', 'Household', 6.75),
  (14, 'HOU', 'Trash Bags 30L, 40 pcs', 'Household', 4.80),
  (15, 'HOU', 'Microfiber Cloths, 5 pcs', 'Household', 7.50),
  (16, 'PER', 'Toothpaste 75ml', 'Personal Care', 2.85),
  (17, 'PER', 'Shampoo 400ml', 'Personal Care', 5.95),
  (18, 'PER', 'Hand Cream 100ml', 'Personal Care', 4.40),
  (19, 'PER', 'Bamboo Toothbrush', 'Personal Care', 3.20),
  (20, 'PER', 'Sunscreen SPF 50', 'Personal Care', 11.90),
  (21, 'ELE', 'USB-C Cable 1m', 'Electronics', 8.99),
  (22, 'ELE', 'AA Batteries, 8 pcs', 'Electronics', 6.49),
  (23, 'ELE', 'Wireless Mouse', 'Electronics', 19.90),
  (24, 'ELE', 'LED Bulb E27 9W', 'Electronics', 3.99),
  (25, 'ELE', 'Bluetooth Earbuds', 'Electronics', 39.00),
  (26, 'STA', 'A5 Notebook, dotted', 'Stationery', 6.20),
  (27, 'STA', 'Gel Pens, 10 pcs', 'Stationery', 7.80),
  (28, 'STA', 'Sticky Notes, 12 pads', 'Stationery', 5.10),
  (29, 'STA', 'Desk Organizer', 'Stationery', 14.50),
  (30, 'STA', 'Highlighters, 6 colors', 'Stationery', 4.60)
) as catalog (id, prefix, name, category, price);

-- Orders spread over 2024, about one every 55 hours. Customers 56-60 have none (the modulus is 55), which
-- the view below shows as zero rather than leaving them out. Recent orders are still in flight.
insert into sales.orders (id, customer_id, status, ordered_at, notes)
select i,
       (i * 17) % 55 + 1,
       case
         when i % 23 = 0 then 'cancelled'
         when i > 140 then 'pending'
         when i > 130 then 'paid'
         when i > 115 then 'shipped'
         else 'delivered'
       end,
       timestamptz '2024-01-03 10:00:00+00' + (i - 1) * interval '55 hours' + (i * 37 % 600) * interval '1 minute',
       case
         when i % 9 = 0 then jsonb_build_object('gift_wrap', true, 'message', 'Happy birthday!')
         when i % 13 = 0 then jsonb_build_object('delivery', jsonb_build_object('window', 'evening', 'leave_at_door', true))
         when i % 17 = 0 then jsonb_build_object('coupon', 'WELCOME10')
       end
from generate_series(1, 150) as i;

-- 1 to 4 lines per order; the line's products are distinct (offsets 11, 22, 3, 14 modulo 30). The line
-- keeps the price paid: catalog price, 10% off on some lines.
insert into sales.order_lines (order_id, line_no, product_id, quantity, unit_price)
select o.id, l.line_no, p.id, (o.id + l.line_no * 3) % 5 + 1,
       round(p.unit_price * case when (o.id + l.line_no) % 13 = 0 then 0.9 else 1 end, 2)
from sales.orders as o
cross join lateral generate_series(1, o.id % 4 + 1) as l (line_no)
join sales.products as p on p.id = (o.id * 7 + l.line_no * 11) % 30 + 1;

update sales.orders as o
set total = l.total
from (select order_id, sum(quantity * unit_price) as total from sales.order_lines group by order_id) as l
where l.order_id = o.id;

select setval(pg_get_serial_sequence('sales.customers', 'id'), (select max(id) from sales.customers));
select setval(pg_get_serial_sequence('sales.products', 'id'), (select max(id) from sales.products));
select setval(pg_get_serial_sequence('sales.orders', 'id'), (select max(id) from sales.orders));

-- Used from version 2 of the retail VDB on. Cancelled orders count neither as orders nor as revenue.
create view sales.customer_order_totals as
select c.id as customer_id,
       c.name,
       c.region,
       count(o.id)::integer as order_count,
       coalesce(sum(o.total), 0)::numeric(12, 2) as revenue
from sales.customers as c
left join sales.orders as o on o.customer_id = c.id and o.status <> 'cancelled'
group by c.id, c.name, c.region;
