-- What several API replicas share beyond the single-process engine.

-- One row per running replica, its lease renewed by a heartbeat (server time: the database's clock is the one clock
-- every replica agrees on). A replica whose lease expired is dead for the others: any live replica refunds its pending
-- charges (credit_ledger.owner = replicas.id) and deletes the row.
create table replicas (
  id text primary key,
  host text not null,
  pid integer not null,
  started_at timestamptz not null default clock_timestamp(),
  heartbeat_at timestamptz not null default clock_timestamp(),
  expires_at timestamptz not null
);

-- The per-key sliding 60-second window of the rate limit, shared by every replica: the accepted hits of the window
-- (epoch milliseconds), at most `limit` of them. One row per key, updated under its row lock by rate_hit().
create table rate_windows (
  key_id text primary key,
  hits bigint[] not null
);

-- One hit of `key`: drops the hits older than the window, refuses when `lim` remain, else records `now_ms`. Returns
-- whether it was accepted, the hits left in the window after it, and the milliseconds until one more is allowed.
-- The insert-or-update locks the key's row, so concurrent hits on any replica are counted one after the other.
-- Committed without waiting for the WAL flush: a crash of the server may forget the last hits of a window (never
-- credits), and a hit costs half as much on a durable server.
create function rate_hit(key text, now_ms bigint, window_ms bigint, lim integer,
                         out allowed boolean, out remaining integer, out retry_after_ms bigint)
language plpgsql as $$
declare
  kept bigint[];
begin
  perform set_config('synchronous_commit', 'off', true);
  insert into rate_windows as w (key_id, hits) values (key, '{}')
    on conflict (key_id) do update set hits = w.hits
    returning array(select h from unnest(w.hits) h where h > now_ms - window_ms order by h) into kept;
  if cardinality(kept) >= lim then
    allowed := false;
    remaining := 0;
    retry_after_ms := kept[cardinality(kept) - lim + 1] + window_ms - now_ms;
    update rate_windows set hits = kept where key_id = key;
  else
    allowed := true;
    remaining := lim - cardinality(kept) - 1;
    retry_after_ms := 0;
    update rate_windows set hits = kept || now_ms where key_id = key;
  end if;
end;
$$;

-- A delivery is claimed by one replica at a time (select … for update skip locked, then this lease): another replica
-- takes it only once the lease has expired, i.e. its holder died or stalled past the receiver's deadline.
alter table alert_deliveries add column claimed_by text;
alter table alert_deliveries add column claimed_until timestamptz;

-- Jobs done once for the whole service (the alert scan of a serving build, the daily scan of a day): the first replica
-- to insert the row runs it; another takes over only if it is unfinished and its lease expired.
create table service_jobs (
  name text primary key,
  owner text not null,
  started_at timestamptz not null,
  expires_at timestamptz not null,
  finished_at timestamptz
);
