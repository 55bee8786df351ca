-- A delivery keeps the transaction's payload fields in typed columns instead of its JSON body, rebuilt at delivery
-- time from them byte for byte. seq orders the queue (primary key); the id is built from seq.
create table alert_deliveries_new (
  seq bigint primary key,
  id text not null,
  alert_id text not null references alerts (id) on delete cascade,
  transaction_id text not null,
  date_mutation text,
  valeur_fonciere double precision,
  prix_m2 double precision,
  type_local text,
  surface_reelle_bati double precision,
  nombre_pieces_principales integer,
  commune text,
  code_postal text,
  latitude double precision,
  longitude double precision,
  status text not null check (status in ('pending', 'succeeded', 'failed')),
  attempts integer not null default 0,
  next_attempt_at timestamptz,
  last_attempt_at timestamptz,
  response_status integer,
  last_error text,
  created_at timestamptz not null,
  unique (alert_id, transaction_id)
);
insert into alert_deliveries_new
  select seq, id, alert_id, transaction_id,
    payload #>> '{transaction,date_mutation}', (payload #>> '{transaction,valeur_fonciere}')::double precision,
    (payload #>> '{transaction,prix_m2}')::double precision, payload #>> '{transaction,type_local}',
    (payload #>> '{transaction,surface_reelle_bati}')::double precision, (payload #>> '{transaction,nombre_pieces_principales}')::integer,
    payload #>> '{transaction,commune}', payload #>> '{transaction,code_postal}',
    (payload #>> '{transaction,latitude}')::double precision, (payload #>> '{transaction,longitude}')::double precision,
    status, attempts, next_attempt_at, last_attempt_at, response_status, last_error, created_at
  from alert_deliveries;
drop table alert_deliveries;
alter table alert_deliveries_new rename to alert_deliveries;
alter index alert_deliveries_new_pkey rename to alert_deliveries_pkey;
alter index alert_deliveries_new_alert_id_transaction_id_key rename to alert_deliveries_alert_id_transaction_id_key;
create index alert_deliveries_due on alert_deliveries (next_attempt_at) where status = 'pending';
-- The queue's sequence: enqueueing replicas draw from it concurrently (the SQLite engine counts under its write lock).
create sequence alert_deliveries_seq owned by alert_deliveries.seq;
select setval('alert_deliveries_seq', coalesce((select max(seq) from alert_deliveries), 0) + 1, false);
