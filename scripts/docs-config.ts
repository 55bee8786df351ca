// `npm run docs:config`: writes the README's table of environment variables from their schema (lib/env.ts), between
// its markers; test/lib/env.test.ts fails when the committed table differs.
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../lib/config';
import { envTableMarkdown } from '../lib/env';

export const README = path.join(repoRoot, 'README.md');
const START = '<!-- env-table:start -->';
const END = '<!-- env-table:end -->';

/** The README with its table replaced by the one the schema generates. */
export function readmeWithEnvTable(readme: string): string {
  const a = readme.indexOf(START);
  const b = readme.indexOf(END);
  if (a < 0 || b < a) throw new Error(`README.md has no ${START} … ${END} markers`);
  return `${readme.slice(0, a + START.length)}\n${envTableMarkdown()}\n${readme.slice(b)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  fs.writeFileSync(README, readmeWithEnvTable(fs.readFileSync(README, 'utf8')));
  console.log(`wrote the table of environment variables into ${path.relative(process.cwd(), README)}`);
}
