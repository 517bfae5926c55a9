import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  AddPermissionCommand,
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  RemovePermissionCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
  SQSServiceException,
} from '@aws-sdk/client-sqs';
import { NEEDS_OWN_SERVER, type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * The queue owner and a key of another account, both signing with the real SDK: the other account gets
 * in only where the queue's Policy (set directly or by AddPermission) lets it.
 */
const OWNER = { accessKeyId: 'AKIDOWNER', secretAccessKey: 'owner-secret' };
const PARTNER = { accessKeyId: 'AKIDPARTNER', secretAccessKey: 'partner-secret', accountId: '111122223333' };

describe('queue policies for another account', { skip: NEEDS_OWN_SERVER }, () => {
  let server: RunningServer;
  let owner: SQSClient;
  let partner: SQSClient;
  before(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sluice-policy-'));
    const config = join(dataDir, 'keys.json');
    writeFileSync(config, JSON.stringify({ credentials: [OWNER, PARTNER] }));
    server = await startServer({ dataDir, args: ['--config', config] });
    const client = (key: { accessKeyId: string; secretAccessKey: string }) =>
      sqsClient(server.endpoint, {
        credentials: { accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey },
      });
    owner = client(OWNER);
    partner = client(PARTNER);
  });
  after(async () => {
    owner?.destroy();
    partner?.destroy();
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
  });

  const denied = async (call: Promise<unknown>) => {
    await assert.rejects(
      call,
      (error: unknown) => error instanceof SQSServiceException && /AccessDenied/.test(error.name),
    );
  };
  const createQueue = async (name: string) =>
    (await owner.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl as string;

  it('AddPermission opens only the named actions, in the statement shape AWS writes; RemovePermission closes them', async () => {
    const queueUrl = await createQueue('policy-add');
    await denied(partner.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'no' })));
    await owner.send(
      new AddPermissionCommand({
        QueueUrl: queueUrl,
        Label: 'partner-send',
        AWSAccountIds: [PARTNER.accountId],
        Actions: ['SendMessage'],
      }),
    );
    const { Attributes } = await owner.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['Policy', 'QueueArn'] }),
    );
    assert.deepEqual(JSON.parse(Attributes?.Policy ?? '{}').Statement, [
      {
        Sid: 'partner-send',
        Effect: 'Allow',
        Principal: { AWS: `arn:aws:iam::${PARTNER.accountId}:root` },
        Action: 'SQS:SendMessage',
        Resource: Attributes?.QueueArn,
      },
    ]);
    await partner.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'yes' }));
    // Batches are authorized as the action they batch, as in SQS.
    const batch = await partner.send(
      new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: [{ Id: 'a', MessageBody: 'b' }] }),
    );
    assert.equal(batch.Successful?.length, 1);
    await denied(partner.send(new ReceiveMessageCommand({ QueueUrl: queueUrl })));
    await denied(partner.send(new ListQueuesCommand({})));
    const received = await owner.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 }),
    );
    assert.deepEqual(received.Messages?.map((message) => message.Body).sort(), ['b', 'yes']);
    // Several accounts and actions are written as lists, which the policy is read from just the same.
    await owner.send(
      new AddPermissionCommand({
        QueueUrl: queueUrl,
        Label: 'partner-receive',
        AWSAccountIds: ['999988887777', PARTNER.accountId],
        Actions: ['ChangeMessageVisibility', 'ReceiveMessage'],
      }),
    );
    await partner.send(new ReceiveMessageCommand({ QueueUrl: queueUrl }));
    await owner.send(new RemovePermissionCommand({ QueueUrl: queueUrl, Label: 'partner-send' }));
    await denied(partner.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'closed' })));
    await owner.send(new RemovePermissionCommand({ QueueUrl: queueUrl, Label: 'partner-receive' }));
    await denied(partner.send(new ReceiveMessageCommand({ QueueUrl: queueUrl })));
  });

  it('an explicit Deny wins over an Allow; conditions on aws:SourceAccount decide', async () => {
    const queueUrl = await createQueue('policy-deny');
    const { Attributes } = await owner.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    const arn = Attributes?.QueueArn as string;
    const setPolicy = (...Statement: Record<string, unknown>[]) =>
      owner.send(
        new SetQueueAttributesCommand({
          QueueUrl: queueUrl,
          Attributes: { Policy: JSON.stringify({ Version: '2012-10-17', Statement }) },
        }),
      );
    await setPolicy(
      { Effect: 'Allow', Principal: '*', Action: 'sqs:*', Resource: arn },
      { Effect: 'Deny', Principal: { AWS: PARTNER.accountId }, Action: 'sqs:ReceiveMessage', Resource: arn },
    );
    await partner.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'allowed' }));
    await denied(partner.send(new ReceiveMessageCommand({ QueueUrl: queueUrl })));
    // The owner is not subject to the queue's policy.
    assert.equal((await owner.send(new ReceiveMessageCommand({ QueueUrl: queueUrl }))).Messages?.length, 1);

    await setPolicy({
      Effect: 'Allow',
      Principal: { AWS: '*' },
      Action: 'SQS:Send*',
      Resource: 'arn:aws:sqs:*:*:policy-*',
      Condition: { StringEquals: { 'aws:SourceAccount': PARTNER.accountId } },
    });
    await denied(partner.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'no source' })));
    const withSourceAccount = new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'with source' });
    withSourceAccount.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { headers: Record<string, string> };
        request.headers['x-amz-source-account'] = PARTNER.accountId;
        return next(args);
      },
      { step: 'build' },
    );
    await partner.send(withSourceAccount);
  });

  it('matches a policy of many wildcards at once: as a regular expression it held the server for minutes', async () => {
    const queueUrl = await createQueue('a'.repeat(80));
    const Statement = { Effect: 'Allow', Principal: '*', Action: 'sqs:*', Resource: `*${'a*'.repeat(12)}b` };
    await owner.send(
      new SetQueueAttributesCommand({
        QueueUrl: queueUrl,
        Attributes: { Policy: JSON.stringify({ Version: '2012-10-17', Statement }) },
      }),
    );
    // The ARN does not end in b: no match, so no access. A backtracking matcher would not answer at all.
    await denied(
      partner.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x' }), {
        abortSignal: AbortSignal.timeout(60_000),
      }),
    );
  });
});
