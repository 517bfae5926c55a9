import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { removeDataDir, SLUICE_CLI, startServer } from '../helpers/server.ts';

const IMPORT_LOG = new URL('../helpers/import-log.mjs', import.meta.url).href;

describe('sluice serve on the embedded store', () => {
  it('loads neither the PostgreSQL driver nor the AWS SDK, which only --store postgres and redrive need', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-imports-'));
    const log = join(dir, 'imports.txt');
    const server = await startServer({
      command: [process.execPath, '--import', IMPORT_LOG, ...SLUICE_CLI],
      env: { SLUICE_IMPORT_LOG: log },
    });
    try {
      await fetch(`${server.endpoint}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.ListQueues' },
        body: '{}',
      });
      const imported = new Set(readFileSync(log, 'utf8').split('\n'));
      // The log works: the store's own driver is in it.
      assert.ok(imported.has('better-sqlite3'), `better-sqlite3 missing from ${[...imported].join(', ')}`);
      assert.equal(imported.has('pg'), false, 'pg was imported');
      assert.deepEqual(
        [...imported].filter((name) => name.startsWith('@aws-sdk/') || name.startsWith('@smithy/')),
        [],
      );
    } finally {
      await server.stop();
      removeDataDir(server.dataDir);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
