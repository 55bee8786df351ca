-- Portfolio and alerts: per-key properties with their cached estimate, alerts, the durable delivery queue
-- ((alert, transaction) unique), the scan watermark and worker leases.
create table portfolio_properties (
  id text primary key,
  key_id text not null references api_keys (id),
  seq bigint not null,
  data jsonb not null,
  estimate jsonb,
  estimate_valid boolean not null default false,
  estimate_computed_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create unique index portfolio_key_seq on portfolio_properties (key_id, seq);

create table alerts (
  id text primary key,
  key_id text not null references api_keys (id),
  seq bigint not null,
  label text,
  webhook_url text not null,
  secret text not null,
  code_postal text, commune text, code_departement text, type_local text,
  prix_min double precision, prix_max double precision, surface_min double precision, surface_max double precision,
  is_active boolean not null default true,
  deactivated_reason text,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create unique index alerts_key_seq on alerts (key_id, seq);
create index alerts_active on alerts (is_active);

create table alert_deliveries (
  id text primary key,
  seq bigint not null unique,
  alert_id text not null references alerts (id) on delete cascade,
  transaction_id text not null,
  payload jsonb not null,
  status text not null check (status in ('pending', 'succeeded', 'failed')),
  attempts integer not null default 0,
  next_attempt_at timestamptz,
  last_attempt_at timestamptz,
  response_status integer,
  last_error text,
  created_at timestamptz not null,
  unique (alert_id, transaction_id)
);
create index alert_deliveries_due on alert_deliveries (next_attempt_at) where status = 'pending';

create table service_state (name text primary key, value text not null);
-- expires_at in epoch milliseconds, as the SQLite engine keeps it.
create table leases (name text primary key, owner text not null, expires_at bigint not null);
