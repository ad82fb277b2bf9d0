import type { ActionJournalSql } from '../../core/plugin-api/adapter-kit.js';

/**
 * The journal of action runs on PostgreSQL (docs/actions.md#the-journal): schema `vdb_service`, its tables
 * readable and writable by their owner alone (the service's login), and one SECURITY DEFINER function, the
 * only way in. PUBLIC may call it (so a caller's role can journal an operation inside the operation's own
 * transaction), but it refuses any call without the journal's secret, which sits in a table only the owner
 * reads: a caller's role can neither read nor forge the journal.
 */
const SETUP = [
  // several instances may start at once: one creates, the others find it made
  'select pg_catalog.pg_advisory_xact_lock(7316, 31)',
  'create schema if not exists vdb_service',
  'create table if not exists vdb_service.action_secret (secret text not null)',
  `insert into vdb_service.action_secret (secret)
select pg_catalog.md5(pg_catalog.random()::text || pg_catalog.clock_timestamp()::text) || pg_catalog.md5(pg_catalog.random()::text || pg_catalog.pg_backend_pid()::text)
where not exists (select 1 from vdb_service.action_secret)`,
  `create table if not exists vdb_service.action_runs (
  run_id text primary key,
  action text not null,
  state text not null,
  request jsonb not null,
  idempotency_key text unique,
  body_hash text,
  response jsonb,
  instance text not null,
  owner text not null,
  lease_until timestamptz not null,
  started_at timestamptz not null default pg_catalog.clock_timestamp(),
  finished_at timestamptz,
  problem jsonb)`,
  'create index if not exists action_runs_open on vdb_service.action_runs (state, lease_until)',
  `create table if not exists vdb_service.action_steps (
  run_id text not null references vdb_service.action_runs on delete cascade,
  position integer not null,
  name text not null,
  status text not null,
  affected_rows bigint not null default 0,
  compensation jsonb,
  compensation_status text not null default 'none',
  done_at timestamptz not null default pg_catalog.clock_timestamp(),
  compensated_at timestamptz,
  problem text,
  primary key (run_id, position))`,
  'revoke all on all tables in schema vdb_service from public',
  'grant usage on schema vdb_service to public',
  `create or replace function vdb_service.action_journal(secret text, command text, payload jsonb) returns text
language plpgsql security definer set search_path = pg_catalog, vdb_service as $$
declare
  found_run text;
  answer jsonb;
begin
  if not exists (select 1 from vdb_service.action_secret s where s.secret = action_journal.secret) then
    raise exception 'vdb_service.action_journal: only the service may write the journal' using errcode = '42501';
  end if;
  case command
  when 'begin' then
    if payload->>'key' is not null then
      -- a key older than its time to live is free again
      update vdb_service.action_runs set idempotency_key = null
      where idempotency_key = payload->>'key' and started_at < clock_timestamp() - make_interval(secs => (payload->>'ttl')::float8);
    end if;
    loop
      insert into vdb_service.action_runs (run_id, action, state, request, idempotency_key, body_hash, instance, owner, lease_until)
      values (payload->>'run', payload->>'action', 'running', payload->'request', payload->>'key', payload->>'hash', payload->>'instance', payload->>'owner',
        clock_timestamp() + make_interval(secs => (payload->>'lease')::float8))
      on conflict (idempotency_key) do nothing;
      if found then return null; end if;
      select jsonb_build_object('run', r.run_id, 'state', r.state, 'hash', r.body_hash, 'response', r.response) into answer
      from vdb_service.action_runs r where r.idempotency_key = payload->>'key';
      -- none: the key was freed between the insert and the read, so the insert is tried again
      if answer is not null then return answer::text; end if;
    end loop;
  when 'step' then
    if payload->'begin' is not null then
      -- a run without a key is opened by its first step, in that operation's transaction
      insert into vdb_service.action_runs (run_id, action, state, request, body_hash, instance, owner, lease_until)
      values (payload->>'run', payload->'begin'->>'action', 'running', payload->'begin'->'request', payload->'begin'->>'hash',
        payload->'begin'->>'instance', payload->'begin'->>'owner', clock_timestamp() + make_interval(secs => (payload->'begin'->>'lease')::float8));
    end if;
    -- only the run's owner writes its steps: a run recovery took over refuses the operation of the process that lost it
    perform 1 from vdb_service.action_runs r where r.run_id = payload->>'run' and r.owner = payload->>'owner' and r.state = any(array['running']) for update;
    if not found then
      raise exception 'vdb_service.action_journal: run % is not this process''s any more', payload->>'run' using errcode = '55006';
    end if;
    insert into vdb_service.action_steps (run_id, position, name, status, affected_rows, compensation)
    values (payload->>'run', (payload->>'position')::int, payload->>'name', payload->>'status', coalesce((payload->>'rows')::bigint, 0), payload->'compensation')
    on conflict (run_id, position) do update set status = excluded.status, affected_rows = excluded.affected_rows,
      compensation = coalesce(excluded.compensation, action_steps.compensation), done_at = clock_timestamp();
    if payload->'finish' is not null then
      -- the last operation closes the run with its answer, in the same transaction
      update vdb_service.action_runs set state = 'completed', response = payload->'finish', finished_at = clock_timestamp()
      where run_id = payload->>'run';
    end if;
    return null;
  when 'compensated' then
    -- only the run's owner writes its steps: a run recovery took over refuses the operation of the process that lost it
    perform 1 from vdb_service.action_runs r where r.run_id = payload->>'run' and r.owner = payload->>'owner' and r.state = any(array['running', 'compensating']) for update;
    if not found then
      raise exception 'vdb_service.action_journal: run % is not this process''s any more', payload->>'run' using errcode = '55006';
    end if;
    -- each compensation at most once: a step compensated already is not compensated again
    update vdb_service.action_steps set compensation_status = payload->>'status', compensated_at = clock_timestamp(), problem = payload->>'problem'
    where run_id = payload->>'run' and position = (payload->>'position')::int and compensation_status <> 'compensated';
    if not found then
      raise exception 'vdb_service.action_journal: step % of run % is compensated already', payload->>'position', payload->>'run' using errcode = '55006';
    end if;
    return null;
  when 'state' then
    update vdb_service.action_runs set state = payload->>'state', response = coalesce(payload->'response', response), problem = coalesce(payload->'problem', problem),
      finished_at = case when payload->>'state' in ('running', 'compensating') then null else clock_timestamp() end,
      -- a run recovery undid leaves its key free: a retry runs the action anew
      idempotency_key = case when payload->>'state' = 'recovered' then null else idempotency_key end,
      lease_until = case when payload->>'lease' is not null then clock_timestamp() + make_interval(secs => (payload->>'lease')::float8) else lease_until end
    where run_id = payload->>'run';
    return null;
  when 'lease' then
    update vdb_service.action_runs set lease_until = clock_timestamp() + make_interval(secs => (payload->>'lease')::float8)
    where run_id = payload->>'run' and owner = payload->>'owner' and state in ('running', 'compensating');
    return null;
  when 'claim' then
    -- one instance recovers each run: the row is locked until the claim commits, others skip it
    select r.run_id into found_run from vdb_service.action_runs r
    where r.state in ('running', 'compensating')
      and (r.lease_until < clock_timestamp() or (r.instance = payload->>'instance' and r.owner <> payload->>'owner'))
    order by r.started_at limit 1 for update skip locked;
    if found_run is null then return null; end if;
    update vdb_service.action_runs set owner = payload->>'owner', state = 'compensating',
      lease_until = clock_timestamp() + make_interval(secs => (payload->>'lease')::float8)
    where run_id = found_run;
    return vdb_service.action_journal(secret, 'get', jsonb_build_object('run', found_run));
  when 'get' then
    select jsonb_build_object('run', r.run_id, 'action', r.action, 'state', r.state, 'request', r.request, 'idempotencyKey', r.idempotency_key,
      'instance', r.instance, 'owner', r.owner, 'startedAt', r.started_at, 'finishedAt', r.finished_at, 'leaseUntil', r.lease_until, 'response', r.response, 'problem', r.problem,
      'steps', coalesce((select jsonb_agg(jsonb_build_object('position', s.position, 'name', s.name, 'status', s.status, 'affectedRows', s.affected_rows,
        'compensation', s.compensation, 'compensationStatus', s.compensation_status, 'doneAt', s.done_at, 'compensatedAt', s.compensated_at, 'problem', s.problem)
        order by s.position) from vdb_service.action_steps s where s.run_id = r.run_id), '[]'::jsonb)) into answer
    from vdb_service.action_runs r where r.run_id = payload->>'run';
    return answer::text;
  when 'list' then
    select coalesce(jsonb_agg(x.summary order by x.started_at desc), '[]'::jsonb) into answer from (
      select jsonb_build_object('run', r.run_id, 'action', r.action, 'state', r.state, 'instance', r.instance,
        'startedAt', r.started_at, 'finishedAt', r.finished_at) as summary, r.started_at
      from vdb_service.action_runs r
      where (payload->>'state' is null or r.state = payload->>'state') and (payload->>'action' is null or r.action = payload->>'action')
      order by r.started_at desc limit (payload->>'limit')::int) x;
    return answer::text;
  when 'purge' then
    -- finished runs past the keys' time to live: their answers can no longer be asked for
    delete from vdb_service.action_runs
    where state in ('completed', 'failed', 'recovered') and finished_at < clock_timestamp() - make_interval(secs => (payload->>'ttl')::float8);
    return null;
  else
    raise exception 'vdb_service.action_journal: unknown command %', command using errcode = '22023';
  end case;
end
$$`,
];

export const POSTGRES_ACTION_JOURNAL: ActionJournalSql = {
  setupSql: SETUP,
  secretSql: 'select secret from vdb_service.action_secret',
  callSql: 'select vdb_service.action_journal(?, ?, cast(? as jsonb)) as result',
  grantSql: () => [],
};
