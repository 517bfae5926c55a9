import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type TestServer, useServer } from '../helpers/server.ts';
import { AwsCli, fifoWalkthrough, walkthrough } from './clients/aws-cli.ts';
import { availability, CLIS, hasBoto3, PYTHONS, run } from './clients/clients.ts';

/**
 * Sluice driven by every real SQS client on the machine, over both wire protocols: boto3 1.26 and
 * AWS CLI 2.9 from Debian speak Query, boto3 1.43 and AWS CLI 1.45 from pyenv speak JSON.
 * The clients run concurrently (each on its own queues): a CLI call costs over a second of start-up,
 * and concurrent clients are also what a real server sees.
 */

const SCENARIO_PY = new URL('./clients/scenario.py', import.meta.url).pathname;

/**
 * Limits that catch a hang, not slowness: six Python clients start at once on this 2-core machine, each CLI
 * call costs a second or more of start-up, and a walkthrough of dozens of calls took over 90 s under load.
 */
const SCENARIO_TIMEOUT_MS = 180_000;
const CLI_FLOW_TIMEOUT_MS = 300_000;

describe('real SQS clients', { concurrency: true }, () => {
  let server: TestServer;
  before(async () => {
    server = await useServer();
  });
  after(async () => {
    await server?.close();
  });

  describe('python scenario (boto3)', { concurrency: true }, () => {
    for (const client of PYTHONS) {
      const { skip, missing } = availability(client, client.bin !== undefined && hasBoto3(client.bin));
      test(`${client.label} over ${client.protocol}`, { skip, timeout: SCENARIO_TIMEOUT_MS }, async () => {
        assert.ok(!missing, missing);
        const result = await run(client.bin!, [SCENARIO_PY, server.endpoint]);
        const output = `${result.stdout}${result.stderr}`;
        assert.match(output, new RegExp(`^PROTOCOL=${client.protocol}$`, 'm'), `wrong protocol:\n${output}`);
        assert.equal(result.code, 0, `scenario.py failed under ${client.label}:\n${output}`);
        assert.match(output, /^SCENARIO PASSED/m);
      });
    }
  });

  describe('AWS CLI', { concurrency: true }, () => {
    for (const client of CLIS) {
      const { skip, missing } = availability(client, client.bin !== undefined);
      const flows = {
        'the SQS lesson walkthrough': (cli: AwsCli) => walkthrough(cli, client.protocol),
        'a FIFO queue': fifoWalkthrough,
      };
      for (const [flow, drive] of Object.entries(flows)) {
        test(`${client.label} (${client.protocol}): ${flow}`, {
          skip,
          timeout: CLI_FLOW_TIMEOUT_MS,
        }, async () => {
          assert.ok(!missing, missing);
          const cli = new AwsCli(client.bin!, server.endpoint);
          try {
            await drive(cli);
          } catch (error) {
            const message = error instanceof Error ? error.message : String(error);
            throw new Error(`${message}\n--- ${client.label} transcript ---\n${cli.output()}`, {
              cause: error,
            });
          }
        });
      }
    }
  });
});
