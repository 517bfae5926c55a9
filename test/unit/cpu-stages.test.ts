import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type CallFrame,
  type CpuProfile,
  lineStages,
  stageOf,
  stageRows,
  stageSamples,
} from '../../bench/cpu-stages.ts';

const SERVER = '/work/sluice/packages/server/dist';
const rounded = (shares: Map<string, number>) =>
  new Map([...shares].map(([stage, share]) => [stage, Math.round(share * 1000) / 1000]));
const frame = (functionName: string, url = ''): CallFrame => ({ functionName, url, lineNumber: 0 });
const store = (name: string): CallFrame => frame(name, `file://${SERVER}/store/sqlite/sqlite-store.js`);
const core = (name: string): CallFrame => frame(name, `file://${SERVER}/core/sqs-service.js`);

describe('bench --cpu-stages: a sample goes to the stage of its innermost telling frame', () => {
  test("the group commit's functions are commit/fsync, the store's other code store JS", () => {
    assert.equal(stageOf([store('flush')]), 'commit/fsync');
    assert.equal(
      stageOf([store('syncLoop'), frame('processTicksAndRejections', 'node:internal/process/task_queues')]),
      'commit/fsync',
    );
    assert.equal(stageOf([store('rowToMessage'), store('receive')]), 'store JS');
    assert.equal(
      stageOf([
        frame('pragma', 'file:///x/node_modules/better-sqlite3/lib/methods/pragma.js'),
        store('open'),
      ]),
      'store statements',
    );
  });

  test("a server function's samples split by line: statement calls and JSON calls are their own stages", () => {
    const source: Record<string, string[]> = {
      [store('').url]: [
        'const cached = this.queueCache.get(name);',
        'const rows = this.statements.selectVisible.all(queueId, now, limit);',
        'return rows.map(toMessage);',
        'this.statements.rememberAttempt.run(id, JSON.stringify(claims));',
      ],
      [frame('', `file://${SERVER}/protocol/json.js`).url]: [
        'const body = JSON.parse(text);',
        'return check(body);',
      ],
    };
    const lines = (url: string) => source[url] ?? null;
    const receive = {
      id: 1,
      callFrame: store('receive'),
      positionTicks: [
        { line: 1, ticks: 1 },
        { line: 2, ticks: 6 },
        { line: 3, ticks: 2 },
        { line: 4, ticks: 1 },
      ],
    };
    assert.deepEqual(
      rounded(lineStages(receive, [receive.callFrame], lines)),
      new Map([
        ['store JS', 0.3],
        ['store statements', 0.7],
      ]),
    );
    const decode = {
      id: 2,
      callFrame: frame('decode', `file://${SERVER}/protocol/json.js`),
      positionTicks: [
        { line: 1, ticks: 3 },
        { line: 2, ticks: 1 },
      ],
    };
    assert.deepEqual(
      rounded(lineStages(decode, [decode.callFrame], lines)),
      new Map([
        ['JSON', 0.75],
        ['protocol', 0.25],
      ]),
    );
    const flush = { id: 3, callFrame: store('flush'), positionTicks: [{ line: 2, ticks: 5 }] };
    assert.deepEqual(lineStages(flush, [flush.callFrame], lines), new Map([['commit/fsync', 1]]));
  });

  test('builtins and node internals other than HTTP are their caller', () => {
    assert.equal(stageOf([frame('update', 'node:internal/crypto/hash'), core('md5')]), 'core');
    assert.equal(stageOf([frame('decode', `file://${SERVER}/protocol/json.js`)]), 'protocol');
    assert.equal(stageOf([frame('writeGeneric', 'node:internal/stream_base_commons')]), 'HTTP');
    assert.equal(stageOf([frame('handle', `file://${SERVER}/server/http-server.js`)]), 'HTTP');
    assert.equal(stageOf([frame('observe', `file://${SERVER}/server/metric-families.js`)]), 'other');
    assert.equal(stageOf([frame('wake', `file://${SERVER}/core/long-poll.js`), store('flush')]), 'wake');
    assert.equal(stageOf([frame('(garbage collector)')]), 'GC');
    assert.equal(stageOf([frame('(program)')]), 'other');
    assert.equal(stageOf([frame('processTicksAndRejections', 'node:internal/process/task_queues')]), 'other');
  });
});

describe('bench --cpu-stages: samples to µs per message', () => {
  // root -> http handler -> protocol decode; root -> (idle); root -> (garbage collector)
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame('(root)'), children: [2, 4, 5] },
      { id: 2, callFrame: frame('handle', `file://${SERVER}/server/http-server.js`), children: [3] },
      { id: 3, callFrame: frame('decode', `file://${SERVER}/protocol/json.js`) },
      { id: 4, callFrame: frame('(idle)') },
      { id: 5, callFrame: frame('(garbage collector)') },
    ],
    startTime: 1_000,
    endTime: 1_600,
    samples: [3, 3, 2, 4, 5, 3],
    timeDeltas: [100, 100, 100, 100, 100, 100],
  };

  test('only samples inside the window count, idle ones apart', () => {
    const all = stageSamples(profile, undefined, undefined, () => null);
    assert.equal(all.busy, 5);
    assert.equal(all.idle, 1);
    assert.equal(all.byStage.protocol, 3);
    assert.equal(all.byStage.HTTP, 1);
    assert.equal(all.byStage.GC, 1);
    const window = stageSamples(profile, 1_150, 1_450, () => null);
    assert.deepEqual([window.busy, window.idle, window.byStage.protocol], [2, 1, 1]);
  });

  test("the main thread's CPU is shared out by samples; other threads are the rest of the process", () => {
    const rows = stageRows(
      stageSamples(profile, undefined, undefined, () => null),
      0.5,
      0.8,
      1_000,
    );
    const us = (stage: string) => rows.find((r) => r.stage === stage)?.usPerMsg;
    assert.equal(us('protocol'), 300);
    assert.equal(us('HTTP'), 100);
    assert.equal(us('main thread'), 500);
    assert.equal(us('other threads'), 300);
    assert.equal(us('server total'), 800);
  });
});
