-- Remote MCP authorization (api/oauth/): registered OAuth clients, the key holders' consents, authorization codes and
-- tokens. Codes and tokens are kept only as their SHA-256 hash. A family is what one approval started: its code, and
-- every access and refresh token issued from it through refresh rotation.
create table oauth_clients (
  client_id text primary key,
  -- The client's registration as the authorization server answered it (RFC 7591), JSON text.
  metadata text not null,
  created_at text not null
);
-- One consent per key and client: the scopes the key holder approved last.
create table oauth_grants (
  key_id text not null references api_keys(id),
  client_id text not null references oauth_clients(client_id),
  scopes text not null,
  created_at text not null,
  updated_at text not null,
  primary key (key_id, client_id)
);
create table oauth_codes (
  code_hash text primary key,
  family text not null,
  key_id text not null,
  client_id text not null,
  redirect_uri text not null,
  code_challenge text not null,
  scopes text not null,
  resource text not null,
  expires_at text not null,
  used_at text
);
create index oauth_codes_grant on oauth_codes (key_id, client_id);
create table oauth_tokens (
  token_hash text primary key,
  family text not null,
  kind text not null check (kind in ('access', 'refresh')),
  key_id text not null,
  client_id text not null,
  scopes text not null,
  resource text not null,
  expires_at text not null,
  created_at text not null,
  -- A refresh token once rotated: kept (until it expires) so that its reuse is told from an unknown token.
  rotated_at text
);
create index oauth_tokens_family on oauth_tokens (family);
create index oauth_tokens_grant on oauth_tokens (key_id, client_id);
