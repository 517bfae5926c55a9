import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { type RunningServer, startServer } from '../helpers/server.ts';
import { availability, hasBoto3, PYTHONS } from './clients/clients.ts';

/**
 * SNS through boto3 (every Python client on the machine), against a server with access keys: each request is
 * signed for the service `sns`, which is how the server tells SNS's requests from SQS's.
 */

const KEY = { accessKeyId: 'AKIDSNS', secretAccessKey: 'sns-walkthrough-secret' };
const SCRIPT = join(import.meta.dirname, 'clients', 'sns_walkthrough.py');

describe('SNS through boto3, signed', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ args: ['--credentials', `${KEY.accessKeyId}:${KEY.secretAccessKey}`] });
  });
  after(async () => server.stop());

  for (const [index, client] of PYTHONS.entries()) {
    const { skip, missing } = availability(client, client.bin !== undefined && hasBoto3(client.bin));
    test(`${client.label}: topics, filtered raw delivery, batches, FIFO, errors`, { skip }, async () => {
      if (missing) assert.fail(missing);
      const { stdout } = await promisify(execFile)(client.bin!, [SCRIPT, server.endpoint, `boto${index}`], {
        env: {
          ...process.env,
          AWS_ACCESS_KEY_ID: KEY.accessKeyId,
          AWS_SECRET_ACCESS_KEY: KEY.secretAccessKey,
          AWS_DEFAULT_REGION: 'us-east-1',
        },
        timeout: 120_000,
      });
      assert.match(stdout, /SNS OK/);
      assert.match(
        stdout,
        /refused: Invalid parameter: The MessageGroupId parameter is required for FIFO topics/,
      );
    });
  }
});
