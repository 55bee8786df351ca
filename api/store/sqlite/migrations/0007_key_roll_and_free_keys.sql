-- Rolling a key's secret: the key keeps its row (id, plan, credits, portfolio, alerts, history) and gets a new secret
-- in key_hash; the secret it replaced may keep working until previous_expires_at (a grace period of up to 7 days,
-- chosen by the holder), looked up by its own unique index. One previous secret at most: rolling again replaces it.
alter table api_keys add column previous_hash text;
alter table api_keys add column previous_prefix text;
alter table api_keys add column previous_expires_at text;
create unique index api_keys_previous_hash on api_keys(previous_hash) where previous_hash is not null;

-- Free-plan keys issued to visitors without an operator: how many each client address received per UTC day. Rows of
-- past days are deleted at the next issue, so an address is kept one day at most.
create table free_key_grants (
  day text not null,
  address text not null,
  issued integer not null check (issued > 0),
  primary key (day, address)
) strict;
