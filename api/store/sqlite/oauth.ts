// Remote MCP authorization in SQLite (the interface: OAuthStore in ../types.ts): clients, consents, codes and tokens.
import type Database from 'better-sqlite3';
import type { NewOAuthToken, OAuthClientRow, OAuthCodeRow, OAuthGrantRow, OAuthStore, OAuthTokenRow } from '../types';

const TOKEN_COLUMNS = 'token_hash, family, kind, key_id, client_id, scopes, resource, expires_at, created_at, rotated_at';

export class SqliteOAuth implements OAuthStore {
  constructor(private readonly db: Database.Database) {}

  private insertTokens(tokens: NewOAuthToken[]): void {
    const insert = this.db.prepare(
      `insert into oauth_tokens (token_hash, family, kind, key_id, client_id, scopes, resource, expires_at, created_at)
       values (@token_hash, @family, @kind, @key_id, @client_id, @scopes, @resource, @expires_at, @created_at)`,
    );
    for (const t of tokens) insert.run(t);
  }

  private hasGrant(keyId: string, clientId: string): boolean {
    return this.db.prepare('select 1 from oauth_grants where key_id = ? and client_id = ?').get(keyId, clientId) !== undefined;
  }

  async registerClient(row: OAuthClientRow): Promise<void> {
    this.db.prepare('insert into oauth_clients (client_id, metadata, created_at) values (@client_id, @metadata, @created_at)').run(row);
  }

  async getClient(clientId: string): Promise<OAuthClientRow | undefined> {
    return this.db.prepare('select client_id, metadata, created_at from oauth_clients where client_id = ?').get(clientId) as OAuthClientRow | undefined;
  }

  async approve(code: Omit<OAuthCodeRow, 'used_at'>, at: string): Promise<void> {
    this.db
      .transaction(() => {
        this.db
          .prepare(
            `insert into oauth_grants (key_id, client_id, scopes, created_at, updated_at) values (?, ?, ?, ?, ?)
             on conflict (key_id, client_id) do update set scopes = excluded.scopes, updated_at = excluded.updated_at`,
          )
          .run(code.key_id, code.client_id, code.scopes, at, at);
        this.db
          .prepare(
            `insert into oauth_codes (code_hash, family, key_id, client_id, redirect_uri, code_challenge, scopes, resource, expires_at)
             values (@code_hash, @family, @key_id, @client_id, @redirect_uri, @code_challenge, @scopes, @resource, @expires_at)`,
          )
          .run(code);
      })
      .immediate();
  }

  async findCode(codeHash: string): Promise<OAuthCodeRow | undefined> {
    return this.db.prepare('select * from oauth_codes where code_hash = ?').get(codeHash) as OAuthCodeRow | undefined;
  }

  async useCode(codeHash: string, at: string): Promise<{ code: OAuthCodeRow; reused: boolean } | undefined> {
    return this.db
      .transaction(() => {
        const code = this.db.prepare('select * from oauth_codes where code_hash = ?').get(codeHash) as OAuthCodeRow | undefined;
        if (!code) return undefined;
        if (code.used_at !== null) {
          this.db.prepare('delete from oauth_tokens where family = ?').run(code.family);
          return { code, reused: true };
        }
        this.db.prepare('update oauth_codes set used_at = ? where code_hash = ?').run(at, codeHash);
        return { code: { ...code, used_at: at }, reused: false };
      })
      .immediate();
  }

  async issue(tokens: NewOAuthToken[]): Promise<boolean> {
    return this.db
      .transaction(() => {
        if (tokens.some((t) => !this.hasGrant(t.key_id, t.client_id))) return false;
        this.insertTokens(tokens);
        return true;
      })
      .immediate();
  }

  async rotate(tokenHash: string, clientId: string, at: string, next: NewOAuthToken[]): Promise<{ old: OAuthTokenRow; reused: boolean } | undefined> {
    return this.db
      .transaction(() => {
        const old = this.db
          .prepare(`select ${TOKEN_COLUMNS} from oauth_tokens where token_hash = ? and kind = 'refresh' and client_id = ? and expires_at > ?`)
          .get(tokenHash, clientId, at) as OAuthTokenRow | undefined;
        if (!old) return undefined;
        if (old.rotated_at !== null) {
          this.db.prepare('delete from oauth_tokens where family = ?').run(old.family);
          return { old, reused: true };
        }
        if (!this.hasGrant(old.key_id, old.client_id)) return undefined;
        this.db.prepare('update oauth_tokens set rotated_at = ? where token_hash = ?').run(at, tokenHash);
        this.insertTokens(next);
        return { old, reused: false };
      })
      .immediate();
  }

  async findToken(tokenHash: string): Promise<OAuthTokenRow | undefined> {
    return this.db.prepare(`select ${TOKEN_COLUMNS} from oauth_tokens where token_hash = ?`).get(tokenHash) as OAuthTokenRow | undefined;
  }

  async revokeToken(tokenHash: string, clientId: string): Promise<boolean> {
    return this.db
      .transaction(() => {
        const t = this.db.prepare('select kind, family from oauth_tokens where token_hash = ? and client_id = ?').get(tokenHash, clientId) as
          | Pick<OAuthTokenRow, 'kind' | 'family'>
          | undefined;
        if (!t) return false;
        if (t.kind === 'refresh') this.db.prepare('delete from oauth_tokens where family = ?').run(t.family);
        else this.db.prepare('delete from oauth_tokens where token_hash = ?').run(tokenHash);
        return true;
      })
      .immediate();
  }

  async grants(keyId: string): Promise<Array<OAuthGrantRow & { metadata: string }>> {
    return this.db
      .prepare(
        `select g.key_id, g.client_id, g.scopes, g.created_at, g.updated_at, c.metadata
         from oauth_grants g join oauth_clients c on c.client_id = g.client_id
         where g.key_id = ? order by g.created_at, g.client_id`,
      )
      .all(keyId) as Array<OAuthGrantRow & { metadata: string }>;
  }

  async revokeGrant(keyId: string, clientId: string): Promise<boolean> {
    return this.db
      .transaction(() => {
        const n = this.db.prepare('delete from oauth_grants where key_id = ? and client_id = ?').run(keyId, clientId).changes;
        this.db.prepare('delete from oauth_codes where key_id = ? and client_id = ?').run(keyId, clientId);
        this.db.prepare('delete from oauth_tokens where key_id = ? and client_id = ?').run(keyId, clientId);
        return n > 0;
      })
      .immediate();
  }

  async prune(before: string): Promise<void> {
    this.db.prepare('delete from oauth_codes where expires_at < ?').run(before);
    this.db.prepare('delete from oauth_tokens where expires_at < ?').run(before);
  }
}
