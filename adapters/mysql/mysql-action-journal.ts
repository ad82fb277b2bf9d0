import type { ActionJournalSql } from '../../core/plugin-api/adapter-kit.js';

/** The database (MySQL's schema) of the service's own tables: not a VDB's, and left out of the role sync's reading. */
export const JOURNAL_SCHEMA = 'vdb_service';

/** An ISO-8601 UTC text of a DATETIME(6) kept in UTC. */
const iso = (column: string) => `date_format(${column}, '%Y-%m-%dT%H:%i:%s.%fZ')`;

/** One run with its steps, as JSON text: a function of its own, as a stored function may not call itself. */
const RUN_JSON = `create or replace function vdb_service.action_run_json(wanted varchar(64)) returns longtext character set utf8mb4
  reads sql data sql security definer
begin
  declare answer longtext character set utf8mb4 default null;
  select json_object('run', r.run_id, 'action', r.action, 'state', r.state, 'request', json_extract(r.request, '$'), 'idempotencyKey', r.idempotency_key,
    'instance', r.instance, 'owner', r.owner, 'startedAt', ${iso('r.started_at')}, 'finishedAt', ${iso('r.finished_at')}, 'leaseUntil', ${iso('r.lease_until')},
    'response', json_extract(r.response, '$'), 'problem', json_extract(r.problem, '$'),
    'steps', coalesce((select json_arrayagg(json_object('position', s.position, 'name', s.name, 'status', s.status, 'affectedRows', s.affected_rows,
      'compensation', json_extract(s.compensation, '$'), 'compensationStatus', s.compensation_status, 'doneAt', ${iso('s.done_at')},
      'compensatedAt', ${iso('s.compensated_at')}, 'problem', s.problem) order by s.position) from vdb_service.action_steps s where s.run_id = r.run_id), json_array()))
  into answer from vdb_service.action_runs r where r.run_id = wanted;
  return answer;
end`;

/** The checks every writing command starts with: only the run's owner writes its steps. */
const OWNED = (states: string) => `
    select r.run_id into found_run from vdb_service.action_runs r
    where r.run_id = json_value(payload, '$.run') and r.owner = json_value(payload, '$.owner') and r.state in (${states}) for update;
    if found_run is null then
      signal sqlstate '55006' set message_text = 'vdb_service.action_journal: the run is not this process''s any more';
    end if;`;

const JOURNAL = `create or replace function vdb_service.action_journal(secret varchar(64), command varchar(20), payload longtext character set utf8mb4) returns longtext character set utf8mb4
  modifies sql data sql security definer
begin
  declare found_run varchar(64) default null;
  declare answer longtext character set utf8mb4 default null;
  declare duplicate int default 0;
  declare continue handler for not found set found_run = null;
  declare continue handler for 1062 set duplicate = 1;
  if not exists (select 1 from vdb_service.action_secret s where s.secret = secret) then
    signal sqlstate '42000' set message_text = 'vdb_service.action_journal: only the service may write the journal';
  end if;
  case command
  when 'begin' then
    if json_value(payload, '$.key') is not null then
      -- a key older than its time to live is free again
      update vdb_service.action_runs set idempotency_key = null
      where idempotency_key = json_value(payload, '$.key') and started_at < utc_timestamp(6) - interval json_value(payload, '$.ttl') second;
    end if;
    taken: loop
      set duplicate = 0;
      insert into vdb_service.action_runs (run_id, action, state, request, idempotency_key, body_hash, instance, owner, lease_until)
      values (json_value(payload, '$.run'), json_value(payload, '$.action'), 'running', json_extract(payload, '$.request'), json_value(payload, '$.key'),
        json_value(payload, '$.hash'), json_value(payload, '$.instance'), json_value(payload, '$.owner'), utc_timestamp(6) + interval json_value(payload, '$.lease') second);
      if duplicate = 0 then return null; end if;
      -- a locking read: the winner committed after this statement's snapshot, which a plain read would not show
      select json_object('run', r.run_id, 'state', r.state, 'hash', r.body_hash, 'response', json_extract(r.response, '$')) into answer
      from vdb_service.action_runs r where r.idempotency_key = json_value(payload, '$.key') lock in share mode;
      -- none: the key was freed between the insert and the read, so the insert is tried again
      if answer is not null then return answer; end if;
    end loop taken;
  when 'step' then
    if json_extract(payload, '$.begin') is not null then
      -- a run without a key is opened by its first step, in that operation's transaction
      insert into vdb_service.action_runs (run_id, action, state, request, body_hash, instance, owner, lease_until)
      values (json_value(payload, '$.run'), json_value(payload, '$.begin.action'), 'running', json_extract(payload, '$.begin.request'),
        json_value(payload, '$.begin.hash'), json_value(payload, '$.begin.instance'), json_value(payload, '$.begin.owner'),
        utc_timestamp(6) + interval json_value(payload, '$.begin.lease') second);
    end if;${OWNED("'running'")}
    insert into vdb_service.action_steps (run_id, position, name, status, affected_rows, compensation)
    values (json_value(payload, '$.run'), json_value(payload, '$.position'), json_value(payload, '$.name'), json_value(payload, '$.status'),
      coalesce(json_value(payload, '$.rows'), 0), json_extract(payload, '$.compensation'))
    on duplicate key update status = values(status), affected_rows = values(affected_rows), compensation = values(compensation), done_at = utc_timestamp(6);
    if json_extract(payload, '$.finish') is not null then
      -- the last operation closes the run with its answer, in the same transaction
      update vdb_service.action_runs set state = 'completed', response = json_extract(payload, '$.finish'), finished_at = utc_timestamp(6)
      where run_id = json_value(payload, '$.run');
    end if;
    return null;
  when 'compensated' then${OWNED("'running', 'compensating'")}
    -- each compensation at most once: a step compensated already is not compensated again
    select s.run_id into found_run from vdb_service.action_steps s
    where s.run_id = json_value(payload, '$.run') and s.position = json_value(payload, '$.position') and s.compensation_status <> 'compensated' for update;
    if found_run is null then
      signal sqlstate '55006' set message_text = 'vdb_service.action_journal: the step is compensated already';
    end if;
    update vdb_service.action_steps set compensation_status = json_value(payload, '$.status'), compensated_at = utc_timestamp(6), problem = json_value(payload, '$.problem')
    where run_id = json_value(payload, '$.run') and position = json_value(payload, '$.position');
    return null;
  when 'state' then
    update vdb_service.action_runs set
      response = coalesce(json_extract(payload, '$.response'), response), problem = coalesce(json_extract(payload, '$.problem'), problem),
      finished_at = if(json_value(payload, '$.state') in ('running', 'compensating'), null, utc_timestamp(6)),
      -- a run recovery undid leaves its key free: a retry runs the action anew
      idempotency_key = if(json_value(payload, '$.state') = 'recovered', null, idempotency_key),
      lease_until = if(json_value(payload, '$.lease') is null, lease_until, utc_timestamp(6) + interval json_value(payload, '$.lease') second),
      state = json_value(payload, '$.state')
    where run_id = json_value(payload, '$.run');
    return null;
  when 'lease' then
    update vdb_service.action_runs set lease_until = utc_timestamp(6) + interval json_value(payload, '$.lease') second
    where run_id = json_value(payload, '$.run') and owner = json_value(payload, '$.owner') and state in ('running', 'compensating');
    return null;
  when 'claim' then
    -- one instance recovers each run: the row is locked until the claim commits, others skip it
    select r.run_id into found_run from vdb_service.action_runs r
    where r.state in ('running', 'compensating')
      and (r.lease_until < utc_timestamp(6) or (r.instance = json_value(payload, '$.instance') and r.owner <> json_value(payload, '$.owner')))
    order by r.started_at limit 1 for update skip locked;
    if found_run is null then return null; end if;
    update vdb_service.action_runs set owner = json_value(payload, '$.owner'), state = 'compensating',
      lease_until = utc_timestamp(6) + interval json_value(payload, '$.lease') second
    where run_id = found_run;
    return vdb_service.action_run_json(found_run);
  when 'get' then
    return vdb_service.action_run_json(json_value(payload, '$.run'));
  when 'list' then
    select coalesce(json_arrayagg(x.summary order by x.started_at desc), json_array()) into answer from (
      select json_object('run', r.run_id, 'action', r.action, 'state', r.state, 'instance', r.instance,
        'startedAt', ${iso('r.started_at')}, 'finishedAt', ${iso('r.finished_at')}) as summary, r.started_at
      from vdb_service.action_runs r
      where (json_value(payload, '$.state') is null or r.state = json_value(payload, '$.state'))
        and (json_value(payload, '$.action') is null or r.action = json_value(payload, '$.action'))
      order by r.started_at desc limit 500) x;
    return answer;
  when 'purge' then
    -- finished runs past the keys' time to live: their answers can no longer be asked for
    delete from vdb_service.action_runs
    where state in ('completed', 'failed', 'recovered') and finished_at < utc_timestamp(6) - interval json_value(payload, '$.ttl') second;
    return null;
  else
    signal sqlstate '22023' set message_text = 'vdb_service.action_journal: unknown command';
  end case;
  return null;
end`;

/**
 * The journal of action runs on MySQL and MariaDB (docs/actions.md#the-journal): database `vdb_service`, its
 * tables readable and writable by the service's login alone, and a stored function running as its definer
 * (SQL SECURITY DEFINER), the only way in. Each data role's login may execute it (caller statements run on
 * those logins), but it refuses any call without the journal's secret, which sits in a table only the
 * service's login reads: a caller's login can neither read nor forge the journal.
 */
export function mysqlActionJournal(quote: (name: string) => string, host: string): ActionJournalSql {
  return {
    setupSql: [
      // several instances may start at once: one creates, the others find it made
      "select get_lock('vdb_service.action_journal', 60)",
      `create database if not exists ${JOURNAL_SCHEMA} character set utf8mb4 collate utf8mb4_bin`,
      'create table if not exists vdb_service.action_secret (secret varchar(64) not null)',
      `insert into vdb_service.action_secret (secret)
select sha2(concat(uuid(), rand(), utc_timestamp(6), connection_id()), 256) from dual where not exists (select 1 from vdb_service.action_secret)`,
      `create table if not exists vdb_service.action_runs (
  run_id varchar(64) not null primary key,
  action varchar(255) not null,
  state varchar(20) not null,
  request longtext not null,
  idempotency_key varchar(64) unique,
  body_hash varchar(64),
  response longtext,
  instance varchar(255) not null,
  owner varchar(64) not null,
  lease_until datetime(6) not null,
  started_at datetime(6) not null default utc_timestamp(6),
  finished_at datetime(6),
  problem longtext,
  key action_runs_open (state, lease_until)) engine = InnoDB default charset = utf8mb4 collate = utf8mb4_bin`,
      `create table if not exists vdb_service.action_steps (
  run_id varchar(64) not null,
  position int not null,
  name varchar(255) not null,
  status varchar(20) not null,
  affected_rows bigint not null default 0,
  compensation longtext,
  compensation_status varchar(20) not null default 'none',
  done_at datetime(6) not null default utc_timestamp(6),
  compensated_at datetime(6),
  problem text,
  primary key (run_id, position),
  foreign key (run_id) references vdb_service.action_runs (run_id) on delete cascade) engine = InnoDB default charset = utf8mb4 collate = utf8mb4_bin`,
      RUN_JSON,
      JOURNAL,
      "select release_lock('vdb_service.action_journal')",
    ],
    secretSql: 'select secret from vdb_service.action_secret',
    callSql: 'select vdb_service.action_journal(?, ?, ?) as result',
    grantSql: (role) => [`grant execute on function ${JOURNAL_SCHEMA}.action_journal to ${quote(role)}@${host}`],
  };
}
