// Remote MCP authorization on PostgreSQL: the same records and rules as the SQLite engine (../sqlite/oauth.ts). A code
// and a refresh token are taken under a row lock, so two replicas cannot both use one.
import type pg from 'pg';
import type { NewOAuthToken, OAuthClientRow, OAuthCodeRow, OAuthGrantRow, OAuthStore, OAuthTokenRow } from '../types';
import { inTransaction } from './pool';

const TOKEN_COLUMNS = 'token_hash, family, kind, key_id, client_id, scopes, resource, expires_at, created_at, rotated_at';
const CODE_COLUMNS = 'code_hash, family, key_id, client_id, redirect_uri, code_challenge, scopes, resource, expires_at, used_at';

async function insertTokens(c: pg.PoolClient, tokens: NewOAuthToken[]): Promise<void> {
  for (const t of tokens) {
    await c.query(
      `insert into oauth_tokens (token_hash, family, kind, key_id, client_id, scopes, resource, expires_at, created_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [t.token_hash, t.family, t.kind, t.key_id, t.client_id, t.scopes, t.resource, t.expires_at, t.created_at],
    );
  }
}

/** Whether the consent exists, locking it (share) so that a revocation waits for the tokens being issued under it. */
async function hasGrant(c: pg.PoolClient, keyId: string, clientId: string): Promise<boolean> {
  const { rowCount } = await c.query('select 1 from oauth_grants where key_id = $1 and client_id = $2 for share', [keyId, clientId]);
  return Boolean(rowCount);
}

export class PgOAuth implements OAuthStore {
  constructor(private readonly pool: pg.Pool) {}

  async registerClient(row: OAuthClientRow): Promise<void> {
    await this.pool.query('insert into oauth_clients (client_id, metadata, created_at) values ($1, $2, $3)', [row.client_id, row.metadata, row.created_at]);
  }

  async getClient(clientId: string): Promise<OAuthClientRow | undefined> {
    const { rows } = await this.pool.query<OAuthClientRow>('select client_id, metadata, created_at from oauth_clients where client_id = $1', [clientId]);
    return rows[0];
  }

  async approve(code: Omit<OAuthCodeRow, 'used_at'>, at: string): Promise<void> {
    await inTransaction(this.pool, async (c) => {
      await c.query(
        `insert into oauth_grants (key_id, client_id, scopes, created_at, updated_at) values ($1, $2, $3, $4, $4)
         on conflict (key_id, client_id) do update set scopes = excluded.scopes, updated_at = excluded.updated_at`,
        [code.key_id, code.client_id, code.scopes, at],
      );
      await c.query(
        `insert into oauth_codes (code_hash, family, key_id, client_id, redirect_uri, code_challenge, scopes, resource, expires_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [code.code_hash, code.family, code.key_id, code.client_id, code.redirect_uri, code.code_challenge, code.scopes, code.resource, code.expires_at],
      );
    });
  }

  async findCode(codeHash: string): Promise<OAuthCodeRow | undefined> {
    const { rows } = await this.pool.query<OAuthCodeRow>(`select ${CODE_COLUMNS} from oauth_codes where code_hash = $1`, [codeHash]);
    return rows[0];
  }

  async useCode(codeHash: string, at: string): Promise<{ code: OAuthCodeRow; reused: boolean } | undefined> {
    return inTransaction(this.pool, async (c) => {
      const { rows } = await c.query<OAuthCodeRow>(`select ${CODE_COLUMNS} from oauth_codes where code_hash = $1 for update`, [codeHash]);
      const code = rows[0];
      if (!code) return undefined;
      if (code.used_at !== null) {
        await c.query('delete from oauth_tokens where family = $1', [code.family]);
        return { code, reused: true };
      }
      await c.query('update oauth_codes set used_at = $1 where code_hash = $2', [at, codeHash]);
      return { code: { ...code, used_at: at }, reused: false };
    });
  }

  async issue(tokens: NewOAuthToken[]): Promise<boolean> {
    return inTransaction(this.pool, async (c) => {
      for (const t of tokens) if (!(await hasGrant(c, t.key_id, t.client_id))) return false;
      await insertTokens(c, tokens);
      return true;
    });
  }

  async rotate(tokenHash: string, clientId: string, at: string, next: NewOAuthToken[]): Promise<{ old: OAuthTokenRow; reused: boolean } | undefined> {
    return inTransaction(this.pool, async (c) => {
      const { rows } = await c.query<OAuthTokenRow>(
        `select ${TOKEN_COLUMNS} from oauth_tokens where token_hash = $1 and kind = 'refresh' and client_id = $2 and expires_at > $3 for update`,
        [tokenHash, clientId, at],
      );
      const old = rows[0];
      if (!old) return undefined;
      if (old.rotated_at !== null) {
        await c.query('delete from oauth_tokens where family = $1', [old.family]);
        return { old, reused: true };
      }
      if (!(await hasGrant(c, old.key_id, old.client_id))) return undefined;
      await c.query('update oauth_tokens set rotated_at = $1 where token_hash = $2', [at, tokenHash]);
      await insertTokens(c, next);
      return { old, reused: false };
    });
  }

  async findToken(tokenHash: string): Promise<OAuthTokenRow | undefined> {
    const { rows } = await this.pool.query<OAuthTokenRow>(`select ${TOKEN_COLUMNS} from oauth_tokens where token_hash = $1`, [tokenHash]);
    return rows[0];
  }

  async revokeToken(tokenHash: string, clientId: string): Promise<boolean> {
    return inTransaction(this.pool, async (c) => {
      const { rows } = await c.query<Pick<OAuthTokenRow, 'kind' | 'family'>>('select kind, family from oauth_tokens where token_hash = $1 and client_id = $2', [tokenHash, clientId]);
      const t = rows[0];
      if (!t) return false;
      if (t.kind === 'refresh') await c.query('delete from oauth_tokens where family = $1', [t.family]);
      else await c.query('delete from oauth_tokens where token_hash = $1', [tokenHash]);
      return true;
    });
  }

  async grants(keyId: string): Promise<Array<OAuthGrantRow & { metadata: string }>> {
    const { rows } = await this.pool.query<OAuthGrantRow & { metadata: string }>(
      `select g.key_id, g.client_id, g.scopes, g.created_at, g.updated_at, c.metadata
       from oauth_grants g join oauth_clients c on c.client_id = g.client_id
       where g.key_id = $1 order by g.created_at, g.client_id`,
      [keyId],
    );
    return rows;
  }

  async revokeGrant(keyId: string, clientId: string): Promise<boolean> {
    return inTransaction(this.pool, async (c) => {
      const { rowCount } = await c.query('delete from oauth_grants where key_id = $1 and client_id = $2', [keyId, clientId]);
      await c.query('delete from oauth_codes where key_id = $1 and client_id = $2', [keyId, clientId]);
      await c.query('delete from oauth_tokens where key_id = $1 and client_id = $2', [keyId, clientId]);
      return Boolean(rowCount);
    });
  }

  async prune(before: string): Promise<void> {
    await this.pool.query('delete from oauth_codes where expires_at < $1', [before]);
    await this.pool.query('delete from oauth_tokens where expires_at < $1', [before]);
  }
}
