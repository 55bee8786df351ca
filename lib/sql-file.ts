// SQL kept in .sql files next to the code that runs it, with `{{name}}` placeholders filled from values computed in
// TypeScript (table lists, generated fragments, literals already quoted with lit()).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Reads `name` from the folder of the module whose `import.meta.url` is `moduleUrl` (or from a subfolder of it). */
export function readSql(moduleUrl: string, name: string): string {
  return fs.readFileSync(path.join(path.dirname(fileURLToPath(moduleUrl)), name), 'utf8');
}

/** Replaces every `{{name}}` (letters, digits, `_`, `.`) with its value; a placeholder without a value is an error. */
export function fillSql(sql: string, vars: Record<string, string>): string {
  return sql.replace(/\{\{([\w.]+)\}\}/g, (_, k: string) => {
    if (!Object.hasOwn(vars, k)) throw new Error(`missing SQL template variable ${k}`);
    return vars[k];
  });
}
