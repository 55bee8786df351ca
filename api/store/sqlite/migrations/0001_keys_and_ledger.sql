-- API keys (only their SHA-256 hash) with their two credit buckets, and the credit ledger.
create table api_keys (
  id text primary key,
  key_hash text not null unique,
  prefix text not null,
  label text not null default '',
  plan text not null check (plan in ('Free', 'Indie', 'Agent', 'Scale', 'Enterprise')),
  is_active integer not null default 1 check (is_active in (0, 1)),
  balance integer not null check (balance >= 0),
  topup integer not null default 0 check (topup >= 0),
  period text not null,
  created_at text not null,
  revoked_at text
) strict;
create index api_keys_prefix on api_keys(prefix);

-- Every movement of credits; for each key, sum(delta) equals balance + topup, and sum(topup_delta) equals topup.
create table credit_ledger (
  id integer primary key autoincrement,
  key_id text not null references api_keys(id),
  at text not null,
  delta integer not null,
  topup_delta integer not null default 0,
  reason text not null check (reason in ('create', 'charge', 'refund', 'reset', 'topup')),
  request_id text
) strict;
create index credit_ledger_key_request on credit_ledger(key_id, request_id);
-- Makes refunds idempotent even if two processes race to refund the same request.
create unique index credit_ledger_one_refund on credit_ledger(key_id, request_id) where reason = 'refund';
