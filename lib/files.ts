// Small file-system helpers shared by the pipeline, the marts and the API.
import fs from 'node:fs';

/**
 * Writes a small file through a temporary name in the same folder and a rename, so a reader sees the old content or
 * the new one, never half of it; the temporary file is removed if the write fails.
 */
export function writeFileAtomic(file: string, content: string | Uint8Array): void {
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    fs.writeFileSync(tmp, content);
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
}

/** Whether a process with this pid exists on this host (one we may not signal, EPERM, exists too). */
export function pidIsAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
