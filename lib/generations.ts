// A folder published by whole generations (the lake, the Parquet marts): `<link>` is a symlink to one complete folder
// under `<store>/`. A writer builds the next generation in full beside the current one (unchanged files are hard
// links, so this costs no copy), then switches by renaming a new symlink over the old one: rename(2) is atomic, so
// a reader, or the next run after a kill at any instant, sees the old generation or the new one, never a mix.
// Anything under `<store>/` the link does not point to is a leftover of an interrupted writer.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { env } from './env';

/** Names of temporary files (`x.tmp-<pid>`, `x.tmp`) that a killed writer may leave: never published, never linked. */
export const TEMP_FILE = /\.tmp(-\d+)?$/;

export class GenerationalDir {
  constructor(readonly link: string, readonly store: string) {}

  /** The folder the link points to, or undefined when nothing was ever published. Migrates a legacy plain folder. */
  current(): string | undefined {
    this.migrateLegacy();
    try {
      return path.resolve(path.dirname(this.link), fs.readlinkSync(this.link));
    } catch {
      return undefined;
    }
  }

  /**
   * A data folder made before generations holds a plain folder at `link`: it becomes the first generation. Two
   * steps (move, then link), so a kill between them leaves `<store>/legacy`, which the next call links.
   */
  private migrateLegacy(): void {
    const legacy = path.join(this.store, 'legacy');
    const stat = fs.lstatSync(this.link, { throwIfNoEntry: false });
    if (stat?.isDirectory()) {
      fs.mkdirSync(this.store, { recursive: true });
      fs.renameSync(this.link, legacy);
    }
    if (fs.existsSync(legacy) && !fs.lstatSync(this.link, { throwIfNoEntry: false })) this.pointTo(legacy);
  }

  /**
   * A new, unpublished generation holding hard links to every file of the current one, except temporary files and
   * those `keep` refuses (given their path relative to the generation).
   */
  begin(keep: (rel: string) => boolean = () => true): string {
    const current = this.current();
    fs.mkdirSync(this.store, { recursive: true });
    const next = path.join(this.store, `g-${Date.now().toString(36)}-${process.pid}-${crypto.randomBytes(3).toString('hex')}`);
    fs.mkdirSync(next);
    if (current) linkTree(current, next, '', keep);
    return next;
  }

  /** Switches the link to `next` (one atomic rename) and removes the previous generation. */
  publish(next: string, pausePoint?: string): void {
    const previous = this.current();
    if (pausePoint) maybePauseForTests(pausePoint);
    this.pointTo(next);
    if (previous && previous !== next) fs.rmSync(previous, { recursive: true, force: true });
  }

  private pointTo(dir: string): void {
    fs.mkdirSync(path.dirname(this.link), { recursive: true });
    const tmp = `${this.link}.link-${process.pid}`;
    fs.rmSync(tmp, { force: true });
    fs.symlinkSync(path.relative(path.dirname(this.link), dir), tmp);
    fs.renameSync(tmp, this.link);
  }

  /** Removes unpublished generations and half-made links of killed writers. Call it holding the writers' lock. */
  cleanLeftovers(): void {
    const current = this.current();
    if (fs.existsSync(this.store)) {
      for (const e of fs.readdirSync(this.store)) {
        const p = path.join(this.store, e);
        if (p !== current && /^g-/.test(e)) fs.rmSync(p, { recursive: true, force: true });
      }
    }
    const dir = path.dirname(this.link);
    const base = path.basename(this.link);
    if (fs.existsSync(dir)) {
      for (const e of fs.readdirSync(dir)) if (e.startsWith(`${base}.link-`)) fs.rmSync(path.join(dir, e), { force: true });
    }
  }

  /** Removes the published folder and every generation (a fresh start). */
  remove(): void {
    fs.rmSync(this.link, { recursive: true, force: true });
    fs.rmSync(this.store, { recursive: true, force: true });
  }
}

function linkTree(from: string, to: string, rel: string, keep: (rel: string) => boolean): void {
  for (const e of fs.readdirSync(path.join(from, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) linkTree(from, to, r, keep);
    else if (e.isFile() && !TEMP_FILE.test(e.name) && keep(r)) {
      // folders are made for the files they keep: a partition left out leaves no empty folder behind
      fs.mkdirSync(path.dirname(path.join(to, r)), { recursive: true });
      fs.linkSync(path.join(from, r), path.join(to, r));
    }
  }
}

/**
 * Test hook: FONCIER_TEST_PAUSE=<point> makes the process stop at that named point (it prints `PAUSED <point>` and
 * sleeps) so a test can SIGKILL it exactly there. Inert in production (variable unset).
 */
export function maybePauseForTests(point: string): void {
  if (env().FONCIER_TEST_PAUSE !== point) return;
  process.stdout.write(`PAUSED ${point}\n`);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
}
