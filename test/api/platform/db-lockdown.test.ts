// The API's DuckDB connection reads only its own database file and writes nowhere, and GET /health
// shows the serving file's name and vintage, never its path.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServingDb } from '../../../api/db';
import { lit } from '../../../lib/duck';
import { buildSampleData, startTestApi, type TestApi } from '../../helpers/api';
import { tempDir } from '../../helpers/samples';

let api: TestApi;
let file: string;
let outside: string;
beforeAll(async () => {
  // A private copy: the test writes a file beside the serving database.
  api = await startTestApi({ dataRoot: await buildSampleData() });
  file = api.ctx.db.file!;
  outside = tempDir('foncier-outside-');
  fs.writeFileSync(path.join(outside, 'secret.csv'), 'a,b\n1,2\n');
  fs.writeFileSync(path.join(path.dirname(file), 'beside.csv'), 'a,b\n1,2\n');
  fs.copyFileSync(file, path.join(outside, 'copy.duckdb'));
});
afterAll(() => api.close());

const serving = () => path.dirname(file);
const fails = (sql: string) => expect(api.ctx.db.query(sql), sql).rejects.toThrow();

describe('the serving connection', () => {
  it('refuses COPY … TO anywhere: the CURRENT pointer, the serving folder, elsewhere', async () => {
    const pointer = fs.readFileSync(path.join(serving(), 'CURRENT'), 'utf8');
    await fails(`COPY (select 'evil.duckdb') TO ${lit(path.join(serving(), 'CURRENT'))} (FORMAT csv, HEADER false)`);
    await fails(`COPY (select 1) TO ${lit(path.join(serving(), 'new.csv'))}`);
    await fails(`COPY (select 1) TO ${lit(path.join(outside, 'out.csv'))}`);
    await fails(`COPY ventes TO ${lit(path.join(outside, 'out.parquet'))} (FORMAT parquet)`);
    await fails(`EXPORT DATABASE ${lit(path.join(outside, 'export'))}`);
    expect(fs.readFileSync(path.join(serving(), 'CURRENT'), 'utf8')).toBe(pointer);
    expect(fs.existsSync(path.join(serving(), 'new.csv'))).toBe(false);
    expect(fs.readdirSync(outside).sort()).toEqual(['copy.duckdb', 'secret.csv']);
  });

  it('refuses ATTACH of any other database, read_csv and friends, SET, RESET, INSTALL and LOAD', async () => {
    await fails(`ATTACH ${lit(path.join(outside, 'copy.duckdb'))} AS other (READ_ONLY)`);
    await fails(`ATTACH ${lit(path.join(outside, 'new.duckdb'))} AS fresh`);
    await fails(`ATTACH ':memory:' AS mem`);
    await fails(`ATTACH ${lit(path.join(api.dataRoot, 'api.sqlite'))} AS keys (TYPE sqlite)`);
    await fails(`select * from read_csv(${lit(path.join(outside, 'secret.csv'))})`);
    await fails(`select * from read_csv(${lit(path.join(serving(), 'beside.csv'))})`);
    await fails(`select * from read_csv('/etc/passwd', sep = ':')`);
    await fails(`select * from read_text(${lit(path.join(serving(), 'CURRENT'))})`);
    await fails(`select * from glob(${lit(path.join(api.dataRoot, '*'))})`);
    await fails(`select * from read_parquet(${lit(path.join(api.dataRoot, 'lake', '**', '*.parquet'))})`);
    for (const set of ['SET threads = 1', "SET memory_limit = '64GB'", 'SET enable_external_access = true', `SET allowed_directories = ['/']`, 'RESET lock_configuration']) {
      await fails(set);
    }
    await fails('INSTALL spatial');
    await fails('LOAD spatial');
    await fails('LOAD httpfs');
    await fails('CREATE TABLE intruder AS SELECT 1');
    await fails('DELETE FROM ventes');
    // The file itself is still served.
    const [{ n }] = await api.ctx.db.query<{ n: number }>('select count(*) as n from ventes');
    expect(n).toBeGreaterThan(0);
  });

  it('never replays a WAL left beside a published file (the one path DuckDB still lets its own connection write)', async () => {
    await api.ctx.db.query(`COPY (select 'junk') TO ${lit(`${file}.wal`)}`).catch(() => undefined);
    const again = new ServingDb({ dataRoot: api.dataRoot });
    try {
      await again.start();
      expect(fs.existsSync(`${file}.wal`)).toBe(false);
      const [{ n }] = await again.query<{ n: number }>('select count(*) as n from ventes');
      expect(n).toBeGreaterThan(0);
    } finally {
      await again.close();
    }
  });
});

describe('GET /health', () => {
  it("shows the serving file's name and DVF vintage, never a path", async () => {
    const r = await api.get('/health');
    expect(r.status).toBe(200);
    // Independently: the latest publication date among the DVF partitions of the lake's manifest.
    const manifest = JSON.parse(fs.readFileSync(path.join(api.dataRoot, 'lake', 'manifest.json'), 'utf8'));
    const latest = (Object.values(manifest.sources.dvf.partitions) as Array<{ vintage: string }>).map((p) => p.vintage).sort().at(-1);
    expect(latest).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(r.body).toEqual({ status: 'ok', serving_database: { name: path.basename(file), vintage: latest }, state_database: { engine: 'sqlite', reachable: true } });
    const text = JSON.stringify(r.body);
    expect(text).not.toContain(api.dataRoot);
    expect(text).not.toContain('/');
  });

  it('answers 503 no_data without a serving database', async () => {
    const empty = await startTestApi({ dataRoot: tempDir('foncier-empty-') });
    try {
      const r = await empty.get('/health');
      expect(r.status).toBe(503);
      expect(r.body).toEqual({ status: 'no_data', serving_database: null, state_database: { engine: 'sqlite', reachable: true } });
    } finally {
      await empty.close();
    }
  });
});
