import assert from 'node:assert/strict';
import { it } from 'node:test';
import Database from 'better-sqlite3';
import { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.ts';

/**
 * A bare `LIMIT ?` is compiled again at every run (statements.ts says why); the store's statements bind their
 * limits in an expression. Every statement the store prepares when it opens is looked at.
 */
it('no statement of the SQLite store binds a bare LIMIT parameter', async () => {
  const sources: string[] = [];
  const prepare = Database.prototype.prepare;
  Database.prototype.prepare = function (this: Database.Database, source: string) {
    sources.push(source);
    return prepare.call(this, source);
  } as typeof prepare;
  try {
    const store = new SqliteStore({ dataDir: ':memory:' });
    await store.close();
  } finally {
    Database.prototype.prepare = prepare;
  }
  const withLimit = sources.filter((source) => /\bLIMIT\b/i.test(source));
  assert.ok(withLimit.length >= 10, `only ${withLimit.length} statements with a LIMIT were seen`);
  const bare = withLimit.filter((source) => /\bLIMIT\s+[?@:$]/i.test(source));
  assert.deepEqual(
    bare.map((source) => source.replace(/\s+/g, ' ')),
    [],
  );
});
