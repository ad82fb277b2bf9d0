-- Seed of the demo's crm_db: a second embedded PGlite beside retail_db, so that a question can read both
-- (docs/federation.md). The sales regions of retail_db's customers, with who manages each and the year's
-- revenue target, and the account manager's segment of some customers. Fixed values, as in retail.sql.

create schema crm;

create table crm.regions (
  name text primary key,
  manager text not null,
  revenue_target numeric(12, 2) not null
);

create table crm.segments (
  customer_id integer primary key,
  segment text not null check (segment in ('key account', 'growth', 'at risk'))
);

insert into crm.regions (name, manager, revenue_target) values
  ('North', 'Ines Moreau', 2500.00),
  ('South', 'Jonas Ito', 2000.00),
  ('East', 'Keira Costa', 2200.00),
  ('West', 'Luca Berg', 1800.00),
  ('Central', 'Maya Okafor', 2400.00);

-- every seventh customer is a key account, every eleventh (not seventh) one at risk, every fifth other one growth
insert into crm.segments (customer_id, segment)
select i, case when i % 7 = 0 then 'key account' when i % 11 = 0 then 'at risk' else 'growth' end
from generate_series(1, 60) as i
where i % 7 = 0 or i % 11 = 0 or i % 5 = 0;
