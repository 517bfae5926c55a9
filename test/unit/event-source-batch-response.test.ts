import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  reportedFailures,
  withLaterGroupRecords,
} from '../../packages/server/src/core/event-source/batch-response.ts';

const ids = new Set(['m1', 'm2', 'm3']);

describe('ReportBatchItemFailures answers, as Lambda reads them', () => {
  it('takes an empty or null answer or list as success', () => {
    for (const body of ['', '   ', 'null', '{}', '{"batchItemFailures": null}', '{"batchItemFailures": []}'])
      assert.deepEqual(reportedFailures(body, ids), new Set(), body);
  });

  it('leaves the reported records', () => {
    assert.deepEqual(
      reportedFailures('{"batchItemFailures": [{"itemIdentifier": "m2"}, {"itemIdentifier": "m3"}]}', ids),
      new Set(['m2', 'm3']),
    );
  });

  it('fails the whole batch on an answer that is not JSON, or an identifier null, empty, unknown or misnamed', () => {
    for (const body of [
      'not json',
      '[1]',
      '"text"',
      '{"batchItemFailures": "m1"}',
      '{"batchItemFailures": [{"itemIdentifier": null}]}',
      '{"batchItemFailures": [{"itemIdentifier": ""}]}',
      '{"batchItemFailures": [{"itemIdentifier": "m9"}]}',
      '{"batchItemFailures": [{"itemIdentifer": "m1"}]}',
      '{"batchItemFailures": [{"itemIdentifier": 1}]}',
    ])
      assert.equal(reportedFailures(body, ids), 'all', body);
  });
});

describe('FIFO: a group after a failure', () => {
  it("leaves the failed record's later records of its group, and only those", () => {
    const records = [
      { messageId: 'a1', groupId: 'A' },
      { messageId: 'b1', groupId: 'B' },
      { messageId: 'a2', groupId: 'A' },
      { messageId: 'b2', groupId: 'B' },
      { messageId: 'a3', groupId: 'A' },
    ];
    assert.deepEqual(withLaterGroupRecords(records, new Set(['a2'])), new Set(['a2', 'a3']));
    assert.deepEqual(withLaterGroupRecords(records, new Set(['b1'])), new Set(['b1', 'b2']));
    assert.deepEqual(withLaterGroupRecords(records, new Set()), new Set());
  });
});
