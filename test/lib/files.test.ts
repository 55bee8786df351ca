import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pidIsAlive, writeFileAtomic } from '../../lib/files';
import { fillSql, readSql } from '../../lib/sql-file';
import { tempDir } from '../helpers/samples';

describe('writeFileAtomic', () => {
  it('replaces the content whole and leaves no temporary file', () => {
    const dir = tempDir('foncier-atomic-');
    const file = path.join(dir, 'CURRENT');
    writeFileAtomic(file, 'old\n');
    writeFileAtomic(file, 'new\n');
    expect(fs.readFileSync(file, 'utf8')).toBe('new\n');
    expect(fs.readdirSync(dir)).toEqual(['CURRENT']);
  });

  it('keeps the old content and removes its temporary file when the write fails', () => {
    const dir = tempDir('foncier-atomic-');
    const file = path.join(dir, 'stamp.json');
    writeFileAtomic(file, 'old');
    // A directory where the file should be: the rename fails after the temporary file was written.
    const target = path.join(dir, 'busy');
    fs.mkdirSync(path.join(target, 'inside'), { recursive: true });
    expect(() => writeFileAtomic(target, 'x')).toThrow();
    expect(fs.readdirSync(dir).sort()).toEqual(['busy', 'stamp.json']);
    expect(fs.readFileSync(file, 'utf8')).toBe('old');
  });
});

describe('pidIsAlive', () => {
  it('is true for this process and false for an exited one', () => {
    expect(pidIsAlive(process.pid)).toBe(true);
    const child = spawnSync(process.execPath, ['-e', '']);
    expect(child.status).toBe(0);
    expect(pidIsAlive(child.pid!)).toBe(false);
    expect(pidIsAlive(0)).toBe(false);
    expect(pidIsAlive(Number.NaN)).toBe(false);
  });
});

describe('SQL files', () => {
  it('fills every placeholder and names a missing one', () => {
    expect(fillSql('select {{cols}} from {{t.name}} where a = {{cols}}', { cols: 'a', 't.name': 'x' })).toBe('select a from x where a = a');
    expect(() => fillSql('select {{cols}} from {{table}}', { cols: 'a' })).toThrow('missing SQL template variable table');
    // An inherited property is not a value.
    expect(() => fillSql('{{toString}}', {})).toThrow('missing SQL template variable toString');
  });

  it('reads a file next to the calling module', () => {
    expect(readSql(import.meta.url, path.basename(import.meta.url))).toContain("describe('SQL files'");
  });
});
