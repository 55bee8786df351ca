-- The key holder's request log (api/routes/account/request-log.ts): one row per authenticated call, kept 31 days.
-- Databases written before this migration may already hold the table, created then outside the migrations with this
-- very shape: "if not exists" adopts it, rows included.
create table if not exists request_log (
  id integer primary key,
  key_id text not null,
  at text not null,
  request_id text not null,
  endpoint text not null,
  transport text not null,
  status integer not null,
  credits integer not null
);
create index if not exists request_log_key_at on request_log (key_id, at);
