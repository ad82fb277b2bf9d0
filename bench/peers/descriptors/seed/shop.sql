-- A copy of the peers harness's seed.sql for the PGlite variant of bench/peers.mjs: schema shop, 1,000 customers.
DROP SCHEMA IF EXISTS shop CASCADE;
CREATE SCHEMA shop;
CREATE TABLE shop.customers (
  id integer PRIMARY KEY,
  email text NOT NULL UNIQUE,
  name text NOT NULL,
  region text NOT NULL
);
INSERT INTO shop.customers VALUES (1, 'ada@example.com', 'Ada Lovelace', 'EU');
INSERT INTO shop.customers
  SELECT g, 'user' || g || '@example.com', 'User ' || g, (ARRAY['EU', 'US', 'APAC'])[1 + g % 3]
  FROM generate_series(2, 1000) AS g;
