-- Deliveries at scale (docs/performance.md, Alerts): a scan may enqueue a million rows, so a row keeps the
-- transaction's payload fields in typed columns instead of its JSON body (≈ 400 bytes), which is rebuilt at delivery
-- time from them, byte for byte the same (api/store/sqlite/deliveries.ts). seq becomes the rowid (new rows append to
-- the table b-tree) and the id loses its index: it is built from seq (unique by construction) and nothing looks rows up
-- by it.
create table alert_deliveries_new (
  seq integer primary key,
  id text not null,
  alert_id text not null references alerts(id) on delete cascade,
  transaction_id text not null,
  date_mutation text,
  valeur_fonciere real,
  prix_m2 real,
  type_local text,
  surface_reelle_bati real,
  nombre_pieces_principales integer,
  commune text,
  code_postal text,
  latitude real,
  longitude real,
  status text not null check (status in ('pending', 'succeeded', 'failed')),
  attempts integer not null default 0,
  next_attempt_at text,
  last_attempt_at text,
  response_status integer,
  last_error text,
  created_at text not null,
  unique (alert_id, transaction_id)
) strict;
insert into alert_deliveries_new
  select seq, id, alert_id, transaction_id,
    payload ->> '$.transaction.date_mutation', payload ->> '$.transaction.valeur_fonciere',
    payload ->> '$.transaction.prix_m2', payload ->> '$.transaction.type_local',
    payload ->> '$.transaction.surface_reelle_bati', payload ->> '$.transaction.nombre_pieces_principales',
    payload ->> '$.transaction.commune', payload ->> '$.transaction.code_postal',
    payload ->> '$.transaction.latitude', payload ->> '$.transaction.longitude',
    status, attempts, next_attempt_at, last_attempt_at, response_status, last_error, created_at
  from alert_deliveries;
drop table alert_deliveries;
alter table alert_deliveries_new rename to alert_deliveries;
create index alert_deliveries_due on alert_deliveries(next_attempt_at) where status = 'pending';
