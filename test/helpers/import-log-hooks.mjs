// The module hooks of import-log.mjs. They run on the loader's thread and only record: resolution goes on
// unchanged.
import { appendFileSync } from 'node:fs';

let file;

export function initialize(data) {
  file = data.file;
}

export async function resolve(specifier, context, nextResolve) {
  // Bare specifiers only: packages, not the project's own relative files or node: built-ins.
  if (!/^(\.|\/|node:|file:)/.test(specifier)) appendFileSync(file, `${specifier}\n`);
  return nextResolve(specifier, context);
}
