import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  CreateEventSourceMappingCommand,
  DeleteEventSourceMappingCommand,
  GetEventSourceMappingCommand,
  ListEventSourceMappingsCommand,
  ListTagsCommand,
  TagResourceCommand,
  UntagResourceCommand,
  UpdateEventSourceMappingCommand,
} from '@aws-sdk/client-lambda';
import { eventually } from '../helpers/client-toolkit.ts';
import { ACCOUNT, describeMappings, REGION } from '../helpers/event-source-mappings.ts';
import { SLUICE_CLI } from '../helpers/server.ts';
import { hasBoto3, PYTHONS } from './clients/clients.ts';

const run = promisify(execFile);
const boto3Python = PYTHONS.find((python) => python.protocol === 'json')?.bin;

/**
 * Lambda event source mappings against a really started server (test mode, so time rules move with the
 * clock) and a real HTTP function served over the Invoke API: the API's shapes and errors, through the JS
 * SDK's Lambda client and boto3's. Polling, batches and failures are in
 * event-source-mappings-delivery.test.ts; FIFO order, filters, states and concurrency in
 * event-source-mappings-fifo-states.test.ts.
 */

describeMappings((m) => {
  const { queue, bodiesOf, isEmpty, create, sendAll } = m;

  describe('event source mappings: the API', () => {
    it('creates a mapping with Lambda defaults, and gets, lists, updates and deletes it', async () => {
      const q = await queue();
      const created = await m.lambda.send(
        new CreateEventSourceMappingCommand({
          EventSourceArn: q.arn,
          FunctionName: 'api-fn',
          Enabled: false,
        }),
      );
      assert.match(created.UUID!, /^[0-9a-f-]{36}$/);
      assert.equal(created.State, 'Creating');
      assert.equal(created.StateTransitionReason, 'USER_INITIATED');
      assert.equal(created.BatchSize, 10);
      assert.equal(created.MaximumBatchingWindowInSeconds, 0);
      assert.equal(created.EventSourceArn, q.arn);
      assert.equal(created.FunctionArn, `arn:aws:lambda:${REGION}:${ACCOUNT}:function:api-fn`);
      assert.deepEqual(created.FunctionResponseTypes, []);
      assert.ok(created.LastModified instanceof Date);
      // On the server's clock, which the tests move.
      assert.ok(Math.abs(created.LastModified.getTime() - (await m.server.now())) < 60_000);

      const got = await m.lambda.send(new GetEventSourceMappingCommand({ UUID: created.UUID }));
      assert.equal(got.State, 'Disabled');
      // Not execFileSync: a server in this process (PostgreSQL's) must go on answering.
      const { stdout: stats } = await run(process.execPath, [
        ...SLUICE_CLI,
        'stats',
        q.name,
        '--endpoint',
        m.server.endpoint,
      ]);
      assert.match(
        stats,
        new RegExp(`event source mappings:\\n.*\\n${created.UUID}\\s+api-fn\\s+Disabled\\s+10\\s+0`),
      );

      const updated = await m.lambda.send(
        new UpdateEventSourceMappingCommand({
          UUID: created.UUID,
          BatchSize: 100,
          MaximumBatchingWindowInSeconds: 5,
          FunctionResponseTypes: ['ReportBatchItemFailures'],
          ScalingConfig: { MaximumConcurrency: 3 },
          FilterCriteria: { Filters: [{ Pattern: '{"body": {"kind": ["a"]}}' }] },
        }),
      );
      assert.equal(updated.State, 'Updating');
      assert.equal(updated.BatchSize, 100);
      assert.deepEqual(updated.FunctionResponseTypes, ['ReportBatchItemFailures']);
      assert.deepEqual(updated.ScalingConfig, { MaximumConcurrency: 3 });
      assert.deepEqual(updated.FilterCriteria, { Filters: [{ Pattern: '{"body": {"kind": ["a"]}}' }] });

      const listed = await m.lambda.send(new ListEventSourceMappingsCommand({ EventSourceArn: q.arn }));
      assert.deepEqual(
        listed.EventSourceMappings?.map((mapping) => mapping.UUID),
        [created.UUID],
      );
      const byFunction = await m.lambda.send(
        new ListEventSourceMappingsCommand({
          FunctionName: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:api-fn`,
        }),
      );
      assert.deepEqual(
        byFunction.EventSourceMappings?.map((mapping) => mapping.UUID),
        [created.UUID],
      );

      const deleted = await m.lambda.send(new DeleteEventSourceMappingCommand({ UUID: created.UUID }));
      assert.equal(deleted.State, 'Deleting');
      await assert.rejects(m.lambda.send(new GetEventSourceMappingCommand({ UUID: created.UUID })), {
        name: 'ResourceNotFoundException',
      });
    });

    it('keeps the Tags given at create, and serves ListTags, TagResource and UntagResource on its ARN', async () => {
      const q = await queue();
      const created = await m.lambda.send(
        new CreateEventSourceMappingCommand({
          EventSourceArn: q.arn,
          FunctionName: 'tags-fn',
          Enabled: false,
          Tags: { team: 'orders', cost: 'ops' },
        }),
      );
      const Resource = created.EventSourceMappingArn!;
      assert.equal(Resource, `arn:aws:lambda:${REGION}:${ACCOUNT}:event-source-mapping:${created.UUID}`);
      assert.deepEqual((await m.lambda.send(new ListTagsCommand({ Resource }))).Tags, {
        team: 'orders',
        cost: 'ops',
      });
      await m.lambda.send(new TagResourceCommand({ Resource, Tags: { env: 'dev', cost: 'shared' } }));
      await m.lambda.send(new UntagResourceCommand({ Resource, TagKeys: ['team', 'absent'] }));
      assert.deepEqual((await m.lambda.send(new ListTagsCommand({ Resource }))).Tags, {
        cost: 'shared',
        env: 'dev',
      });
      // An update keeps them; the mapping's own answers carry none (Lambda's EventSourceMappingConfiguration has no Tags).
      const updated = await m.lambda.send(
        new UpdateEventSourceMappingCommand({ UUID: created.UUID, BatchSize: 3 }),
      );
      assert.equal('Tags' in updated, false);
      assert.deepEqual((await m.lambda.send(new ListTagsCommand({ Resource }))).Tags, {
        cost: 'shared',
        env: 'dev',
      });
      await assert.rejects(
        m.lambda.send(new TagResourceCommand({ Resource, Tags: { 'aws:reserved': 'x' } })),
        {
          name: 'InvalidParameterValueException',
        },
      );
      await m.lambda.send(new DeleteEventSourceMappingCommand({ UUID: created.UUID }));
      await assert.rejects(m.lambda.send(new ListTagsCommand({ Resource })), {
        name: 'ResourceNotFoundException',
      });
      await assert.rejects(
        m.lambda.send(
          new ListTagsCommand({
            Resource: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:no-such-function`,
          }),
        ),
        { name: 'ResourceNotFoundException' },
      );
    });

    it('takes one of two mappings created at once for the same queue and function, refusing the other', async () => {
      const q = await queue();
      const results = await Promise.allSettled(
        [1, 2, 3].map(() =>
          m.lambda.send(
            new CreateEventSourceMappingCommand({
              EventSourceArn: q.arn,
              FunctionName: 'race-fn',
              Enabled: false,
            }),
          ),
        ),
      );
      assert.deepEqual(
        results
          .map((result) => (result.status === 'fulfilled' ? 'created' : (result.reason as Error).name))
          .sort(),
        ['ResourceConflictException', 'ResourceConflictException', 'created'],
      );
      const listed = await m.lambda.send(new ListEventSourceMappingsCommand({ EventSourceArn: q.arn }));
      assert.equal(listed.EventSourceMappings?.length, 1);
    });

    it('keeps every change of writes made at once to one mapping: taggings and an update', async () => {
      const q = await queue();
      const created = await create({
        EventSourceArn: q.arn,
        FunctionName: 'write-race-fn',
        Enabled: false,
      });
      const Resource = created.EventSourceMappingArn!;
      await Promise.all([
        ...['a', 'b', 'c'].map((key) =>
          m.lambda.send(new TagResourceCommand({ Resource, Tags: { [key]: key } })),
        ),
        m.lambda.send(new UpdateEventSourceMappingCommand({ UUID: created.UUID, BatchSize: 7 })),
      ]);
      assert.deepEqual((await m.lambda.send(new ListTagsCommand({ Resource }))).Tags, {
        a: 'a',
        b: 'b',
        c: 'c',
      });
      assert.equal(
        (await m.lambda.send(new GetEventSourceMappingCommand({ UUID: created.UUID }))).BatchSize,
        7,
      );
    });

    it('pages the list with Marker and MaxItems', async () => {
      const q = await queue();
      const made: string[] = [];
      for (const name of ['page-a', 'page-b', 'page-c'])
        made.push(
          (
            await m.lambda.send(
              new CreateEventSourceMappingCommand({
                EventSourceArn: q.arn,
                FunctionName: name,
                Enabled: false,
              }),
            )
          ).UUID!,
        );
      const first = await m.lambda.send(
        new ListEventSourceMappingsCommand({ EventSourceArn: q.arn, MaxItems: 2 }),
      );
      assert.equal(first.EventSourceMappings?.length, 2);
      assert.ok(first.NextMarker);
      const second = await m.lambda.send(
        new ListEventSourceMappingsCommand({
          EventSourceArn: q.arn,
          MaxItems: 2,
          Marker: first.NextMarker,
        }),
      );
      assert.equal(second.NextMarker, undefined);
      assert.deepEqual(
        [...first.EventSourceMappings!, ...second.EventSourceMappings!].map((mapping) => mapping.UUID),
        made,
      );
    });

    it("answers Lambda's errors for bad settings", async () => {
      const q = await queue();
      const fifo = await queue({}, true);
      const refusal = async (
        input: ConstructorParameters<typeof CreateEventSourceMappingCommand>[0],
        name: string,
        message: RegExp,
      ) =>
        assert.rejects(
          m.lambda.send(new CreateEventSourceMappingCommand(input)),
          (error: Error & { $metadata?: { httpStatusCode?: number } }) => {
            assert.equal(error.name, name);
            assert.match(error.message, message);
            return true;
          },
        );
      await refusal(
        { EventSourceArn: `arn:aws:sqs:${REGION}:${ACCOUNT}:no-such-queue`, FunctionName: 'f' },
        'InvalidParameterValueException',
        /NonExistentQueue/,
      );
      await refusal(
        { EventSourceArn: q.arn, FunctionName: 'f', BatchSize: 11 },
        'InvalidParameterValueException',
        /batch window/,
      );
      await refusal(
        { EventSourceArn: q.arn, FunctionName: 'f', BatchSize: 10_001, MaximumBatchingWindowInSeconds: 1 },
        'ValidationException',
        /batchSize/,
      );
      await refusal(
        { EventSourceArn: fifo.arn, FunctionName: 'f', BatchSize: 11 },
        'InvalidParameterValueException',
        /FIFO/,
      );
      await refusal(
        { EventSourceArn: q.arn, FunctionName: 'f', ScalingConfig: { MaximumConcurrency: 1 } },
        'ValidationException',
        /^1 validation error detected: Value '1' at 'scalingConfig.maximumConcurrency' failed to satisfy constraint: Member must have value greater than or equal to 2$/,
      );
      await refusal(
        { EventSourceArn: q.arn, FunctionName: 'f', ScalingConfig: { MaximumConcurrency: 1001 } },
        'ValidationException',
        /^1 validation error detected: Value '1001' at 'scalingConfig.maximumConcurrency' failed to satisfy constraint: Member must have value less than or equal to 1000$/,
      );
      // The bounds themselves are taken (botocore's model: MaximumConcurrency min 2, max 1000).
      for (const [name, bound] of [
        ['bound-2', 2],
        ['bound-1000', 1000],
      ] as const) {
        const made = await create({
          EventSourceArn: q.arn,
          FunctionName: name,
          Enabled: false,
          ScalingConfig: { MaximumConcurrency: bound },
        });
        assert.deepEqual(made.ScalingConfig, { MaximumConcurrency: bound });
      }
      await refusal(
        {
          EventSourceArn: q.arn,
          FunctionName: 'f',
          FilterCriteria: { Filters: [{ Pattern: '{"body": 1}' }] },
        },
        'InvalidParameterValueException',
        /^Invalid filter pattern definition\.$/,
      );
      await refusal(
        { EventSourceArn: q.arn, FunctionName: 'f', StartingPosition: 'LATEST' },
        'InvalidParameterValueException',
        /StartingPosition is not valid for SQS/,
      );
      const short = await queue({ VisibilityTimeout: '2' });
      await refusal(
        { EventSourceArn: short.arn, FunctionName: 'f' },
        'InvalidParameterValueException',
        /^Queue visibility timeout: 2 seconds is less than Function timeout: 3 seconds$/,
      );
      await m.lambda.send(
        new CreateEventSourceMappingCommand({ EventSourceArn: q.arn, FunctionName: 'dup', Enabled: false }),
      );
      await refusal(
        { EventSourceArn: q.arn, FunctionName: 'dup' },
        'ResourceConflictException',
        /already exists/,
      );
      await assert.rejects(
        m.lambda.send(new GetEventSourceMappingCommand({ UUID: '00000000-0000-0000-0000-000000000000' })),
        {
          name: 'ResourceNotFoundException',
        },
      );
    });
  });

  /** Runs a boto3 script against the server with `lambda` and `sqs` clients; it prints one JSON value. */
  async function boto3(script: string): Promise<unknown> {
    const program = `
import boto3, json, sys
from botocore.exceptions import ClientError
session = boto3.session.Session(aws_access_key_id='test', aws_secret_access_key='test', region_name='${REGION}')
lam = session.client('lambda', endpoint_url='${m.server.endpoint}')
sqs = session.client('sqs', endpoint_url='${m.server.endpoint}')
def error_of(call):
    try:
        call()
        return None
    except ClientError as e:
        return {'code': e.response['Error']['Code'], 'message': e.response['Error']['Message'], 'status': e.response['ResponseMetadata']['HTTPStatusCode']}
${script}
`;
    return JSON.parse((await run(boto3Python!, ['-c', program], { timeout: 60_000 })).stdout);
  }

  describe('event source mappings: boto3', {
    skip: boto3Python && hasBoto3(boto3Python) ? false : 'no pyenv boto3',
  }, () => {
    it("manages a mapping with boto3's Lambda client, which the function then serves", async () => {
      const q = await queue();
      const result = (await boto3(`
created = lam.create_event_source_mapping(EventSourceArn='${q.arn}', FunctionName='boto-fn', BatchSize=5,
    FunctionResponseTypes=['ReportBatchItemFailures'], ScalingConfig={'MaximumConcurrency': 2}, Tags={'team': 'boto'})
uuid = created['UUID']
got = lam.get_event_source_mapping(UUID=uuid)
listed = lam.list_event_source_mappings(FunctionName='boto-fn')
updated = lam.update_event_source_mapping(UUID=uuid, BatchSize=7)
print(json.dumps({
    'uuid': uuid,
    'created': {k: created[k] for k in ('State', 'BatchSize', 'FunctionArn', 'EventSourceArn', 'FunctionResponseTypes', 'ScalingConfig')},
    'lastModified': created['LastModified'].timestamp(),
    'got': got['State'],
    'listed': [m['UUID'] for m in listed['EventSourceMappings']],
    'updated': [updated['State'], updated['BatchSize']],
    'tags': lam.list_tags(Resource=created['EventSourceMappingArn'])['Tags'],
    'missing': error_of(lambda: lam.get_event_source_mapping(UUID='00000000-0000-0000-0000-000000000000')),
    'bad': error_of(lambda: lam.create_event_source_mapping(EventSourceArn='${q.arn}', FunctionName='x', BatchSize=20)),
    'conflict': error_of(lambda: lam.create_event_source_mapping(EventSourceArn='${q.arn}', FunctionName='boto-fn')),
}))
`)) as Record<string, unknown>;
      assert.deepEqual(result.created, {
        State: 'Creating',
        BatchSize: 5,
        FunctionArn: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:boto-fn`,
        EventSourceArn: q.arn,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: 2 },
      });
      assert.ok(Math.abs((result.lastModified as number) * 1000 - (await m.server.now())) < 60_000);
      assert.equal(result.got, 'Enabled');
      assert.deepEqual(result.listed, [result.uuid]);
      assert.deepEqual(result.updated, ['Updating', 7]);
      assert.deepEqual(result.tags, { team: 'boto' });
      assert.deepEqual(result.missing, {
        code: 'ResourceNotFoundException',
        message: 'The resource you requested does not exist.',
        status: 404,
      });
      assert.equal((result.bad as { code: string }).code, 'InvalidParameterValueException');
      assert.equal((result.conflict as { status: number }).status, 409);
      await sendAll(q.url, ['from-boto3']);
      await eventually(() => bodiesOf('boto-fn').flat().includes('from-boto3'), 'the invocation');
      await eventually(() => isEmpty(q.url), 'the record deleted');
      await boto3(`lam.delete_event_source_mapping(UUID='${result.uuid as string}'); print('null')`);
      await assert.rejects(m.lambda.send(new GetEventSourceMappingCommand({ UUID: result.uuid as string })), {
        name: 'ResourceNotFoundException',
      });
    });
  });
});
