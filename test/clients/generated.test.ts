// The committed client is what `npm run client:generate` makes of the document the app serves today: a route, a
// parameter or a schema changed without regenerating the client fails here.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIENT_DIR, DOCUMENT_FILE, OPERATIONS_FILE, SCHEMA_FILE, generateClientFiles, servedDocument } from '../../scripts/client-generate';

describe('clients/typescript generated files', () => {
  it('match what the served /v1/openapi.json generates (run `npm run client:generate` when this fails)', async () => {
    const doc = await servedDocument();
    const files = await generateClientFiles(doc);
    expect(fs.readFileSync(DOCUMENT_FILE, 'utf8')).toBe(files.document);
    expect(fs.readFileSync(SCHEMA_FILE, 'utf8')).toBe(files.schema);
    expect(fs.readFileSync(OPERATIONS_FILE, 'utf8')).toBe(files.operations);
  });

  it('give the client one method per operationId of the document', async () => {
    const doc = (await servedDocument()) as { paths: Record<string, Record<string, { operationId: string }>> };
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    const { OPERATIONS } = await import('../../clients/typescript/operations.js');
    expect(Object.keys(OPERATIONS).sort()).toEqual([...ids].sort());
    const { createClient } = await import('../../clients/typescript/index.js');
    const client = createClient({ baseUrl: 'http://127.0.0.1:9' });
    for (const id of ids) expect(typeof (client as unknown as Record<string, unknown>)[id]).toBe('function');
  });

  it('depend on nothing of the server: the client imports only itself (as Node’s ESM resolution spells it) and openapi-fetch', () => {
    const sources = fs.readdirSync(CLIENT_DIR).filter((f) => f.endsWith('.ts'));
    const imports = sources.flatMap((f) => [...fs.readFileSync(path.join(CLIENT_DIR, f), 'utf8').matchAll(/\bfrom\s+'([^']+)'/g)].map((m) => `${f}: ${m[1]}`));
    expect(imports).toContain('index.ts: openapi-fetch');
    expect(imports.filter((i) => !/: (openapi-fetch|\.\/[\w-]+\.js)$/.test(i))).toEqual([]);
  });
});
