-- Keys (only their SHA-256 hash), plans, the two credit buckets and the credit ledger. Credits are integers (bigint):
-- money-like values are never floating point. Timestamps are timestamptz, written from the application's clock with
-- millisecond precision and read back as the same ISO 8601 UTC strings the SQLite engine stores.
create table api_keys (
  id text primary key,
  key_hash text not null unique,
  prefix text not null,
  label text not null default '',
  plan text not null check (plan in ('Free', 'Indie', 'Agent', 'Scale', 'Enterprise')),
  is_active boolean not null default true,
  balance bigint not null check (balance >= 0),
  topup bigint not null default 0 check (topup >= 0),
  period text not null check (period ~ '^\d{4}-\d{2}$'),
  created_at timestamptz not null,
  revoked_at timestamptz
);
create index api_keys_prefix on api_keys (prefix);

-- Every movement of credits; for each key, sum(delta) equals balance + topup, and sum(topup_delta) equals topup.
create table credit_ledger (
  id bigint generated always as identity primary key,
  key_id text not null references api_keys (id),
  at timestamptz not null,
  delta bigint not null,
  topup_delta bigint not null default 0,
  reason text not null check (reason in ('create', 'charge', 'refund', 'reset', 'topup')),
  request_id text
);
create index credit_ledger_key_request on credit_ledger (key_id, request_id);
create unique index credit_ledger_one_refund on credit_ledger (key_id, request_id) where reason = 'refund';
