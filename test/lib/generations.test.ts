// lib/generations.ts: a folder published by whole generations behind a symlink.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GenerationalDir } from '../../lib/generations';
import { tempDir } from '../helpers/samples';

const read = (dir: string) => Object.fromEntries(fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })
  .filter((f) => fs.statSync(path.join(dir, f)).isFile()).sort().map((f) => [f, fs.readFileSync(path.join(dir, f), 'utf8')]));

describe('GenerationalDir', () => {
  it('builds the next generation from hard links, publishes it with one rename, and drops the previous one', () => {
    const root = tempDir();
    const g = new GenerationalDir(path.join(root, 'lake'), path.join(root, '.lake', 'generations'));
    expect(g.current()).toBeUndefined();
    const first = g.begin();
    fs.mkdirSync(path.join(first, 'a'));
    fs.writeFileSync(path.join(first, 'a', 'x'), '1');
    fs.writeFileSync(path.join(first, 'y'), '2');
    g.publish(first);
    expect(read(path.join(root, 'lake'))).toEqual({ 'a/x': '1', y: '2' });

    const second = g.begin((rel) => rel !== 'y');
    expect(fs.statSync(path.join(second, 'a', 'x')).ino).toBe(fs.statSync(path.join(first, 'a', 'x')).ino); // a link, not a copy
    fs.writeFileSync(path.join(second, 'z'), '3');
    expect(read(path.join(root, 'lake'))).toEqual({ 'a/x': '1', y: '2' }); // unpublished: invisible
    g.publish(second);
    expect(read(path.join(root, 'lake'))).toEqual({ 'a/x': '1', z: '3' });
    expect(fs.existsSync(first)).toBe(false);
  });

  it('migrates a plain folder, even when a kill came between its move and its link, and cleans unpublished generations', () => {
    const root = tempDir();
    const link = path.join(root, 'lake');
    const store = path.join(root, '.lake', 'generations');
    fs.mkdirSync(link);
    fs.writeFileSync(path.join(link, 'manifest.json'), '{}');
    // the move happened, the link did not (a kill between the two steps)
    fs.mkdirSync(store, { recursive: true });
    fs.renameSync(link, path.join(store, 'legacy'));
    const g = new GenerationalDir(link, store);
    expect(g.current()).toBe(path.join(store, 'legacy'));
    expect(read(link)).toEqual({ 'manifest.json': '{}' });

    const orphan = g.begin();
    fs.writeFileSync(path.join(orphan, 'half'), 'x');
    fs.writeFileSync(path.join(g.current()!, 'manifest.json.tmp-123'), 'partial');
    g.cleanLeftovers();
    expect(fs.readdirSync(store)).toEqual(['legacy']);
    // temporary files are never carried into a new generation
    const next = g.begin();
    expect(fs.readdirSync(next)).toEqual(['manifest.json']);
  });
});
