// Killing the pipeline in the middle of a partition leaves the lake readable and identical to before.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSource } from '../../pipeline/run';
import { killAtPause, snapshotFiles } from '../helpers/crash';
import { lakeGlob, queryParquet, sampleTree, tempDir } from '../helpers/samples';

/** What a reader can see: every *.parquet file of the lake and the manifest, with their hashes. */
const snapshot = (dataRoot: string) => snapshotFiles(path.join(dataRoot, 'lake'), (n) => n.endsWith('.parquet') || n === 'manifest.json');

function runCliUntilPaused(args: string[], env: Record<string, string>): Promise<string> {
  return killAtPause('pipeline/cli.ts', args, env);
}

describe('interrupted import', () => {
  it('a kill between staging and swap leaves the lake identical and readable; the next run completes', async () => {
    const tree = sampleTree();
    const data = tempDir();
    await runSource({ source: 'dvf', fromDir: tree, annees: [2021], departements: ['33'], dataRoot: data, now: new Date('2025-01-01T00:00:00Z') });
    const before = snapshot(data);
    const [{ n: rowsBefore }] = await queryParquet(`select count(*) n from ${lakeGlob(data)}`);

    await runCliUntilPaused(['dvf', '--departements', '33', '--annees', '2021', '--from-dir', tree, '--force', '--no-marts'],
      { DATA_DIR: data, FONCIER_TEST_PAUSE: 'before-swap' });

    expect(snapshot(data)).toEqual(before);
    const [{ n: rowsAfterKill }] = await queryParquet(`select count(*) n from ${lakeGlob(data)}`);
    expect(rowsAfterKill).toBe(rowsBefore);
    // the killed run left its unpublished generation (lib/generations.ts) and its lock behind: the next run must
    // cope with both
    const generations = path.join(data, '.lake', 'generations');
    expect(fs.readdirSync(generations)).toHaveLength(2);

    const [outcome] = await runSource({ source: 'dvf', fromDir: tree, annees: [2021], departements: ['33'], dataRoot: data, force: true });
    expect(outcome.status).toBe('imported');
    expect(fs.readdirSync(path.join(data, 'lake', 'dvf', 'code_departement=33', 'annee=2021'))).toEqual(['data.parquet']);
    expect(fs.readdirSync(generations)).toHaveLength(1);
    const [{ n: rowsAfter }] = await queryParquet(`select count(*) n from ${lakeGlob(data)}`);
    expect(rowsAfter).toBe(rowsBefore);
  });
});
