import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { readConfigFile } from '../../packages/server/src/server/config-file.ts';
import { isWebhookUrl } from '../../packages/server/src/server/webhooks.ts';

test('an alarm webhook is an absolute http(s) URL', () => {
  for (const url of ['http://127.0.0.1:8080/hook', 'https://hooks.example/x?y=1'])
    assert.equal(isWebhookUrl(url), true, url);
  for (const url of ['ftp://host/x', 'http://', 'hooks.example/x', '', 42, null])
    assert.equal(isWebhookUrl(url), false, String(url));
});

test('the config file refuses a webhook that is not one, as the flag does', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-webhook-'));
  try {
    const file = join(dir, 'sluice.json');
    writeFileSync(file, JSON.stringify({ alarms: { webhooks: ['http://127.0.0.1:1/ok', 'mailto:ops'] } }));
    assert.throws(() => readConfigFile(file), /"alarms.webhooks" must be a list of http\(s\) URLs/);
    writeFileSync(file, JSON.stringify({ alarms: { webhooks: ['http://127.0.0.1:1/ok'] } }));
    assert.deepEqual(readConfigFile(file).alarms?.webhooks, ['http://127.0.0.1:1/ok']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
