-- Portfolio and alerts (docs/decisions.md, Portfolio and alerts; Webhooks): per-key properties with their cached
-- estimate, alerts, the durable delivery queue ((alert, transaction) unique), the scan watermark and worker leases.
create table portfolio_properties (
  id text primary key,
  key_id text not null references api_keys(id),
  seq integer not null,
  data text not null,
  estimate text,
  estimate_valid integer not null default 0 check (estimate_valid in (0, 1)),
  estimate_computed_at text,
  created_at text not null,
  updated_at text not null
) strict;
create unique index portfolio_key_seq on portfolio_properties(key_id, seq);

create table alerts (
  id text primary key,
  key_id text not null references api_keys(id),
  seq integer not null,
  label text,
  webhook_url text not null,
  secret text not null,
  code_postal text, commune text, code_departement text, type_local text,
  prix_min real, prix_max real, surface_min real, surface_max real,
  is_active integer not null default 1 check (is_active in (0, 1)),
  deactivated_reason text,
  created_at text not null,
  updated_at text not null
) strict;
create unique index alerts_key_seq on alerts(key_id, seq);
create index alerts_active on alerts(is_active);

create table alert_deliveries (
  id text primary key,
  seq integer not null unique,
  alert_id text not null references alerts(id) on delete cascade,
  transaction_id text not null,
  payload text not null,
  status text not null check (status in ('pending', 'succeeded', 'failed')),
  attempts integer not null default 0,
  next_attempt_at text,
  last_attempt_at text,
  response_status integer,
  last_error text,
  created_at text not null,
  unique (alert_id, transaction_id)
) strict;
create index alert_deliveries_due on alert_deliveries(next_attempt_at) where status = 'pending';

create table service_state (name text primary key, value text not null) strict;
create table leases (name text primary key, owner text not null, expires_at integer not null) strict;
