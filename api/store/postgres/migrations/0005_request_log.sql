-- The key holder's request log (31 days): one row per authenticated call with its final cost.
create table request_log (
  id bigint generated always as identity primary key,
  key_id text not null,
  at timestamptz not null,
  request_id text not null,
  endpoint text not null,
  transport text not null,
  status integer not null,
  credits bigint not null
);
create index request_log_key_at on request_log (key_id, at);
