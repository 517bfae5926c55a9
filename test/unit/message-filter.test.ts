import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  FilterWorkError,
  instructionsBound,
  MESSAGE_WORK_MAX,
  matchesAll,
  parseFilter,
  parseFilters,
  type WorkMeter,
} from '../../packages/server/src/core/message-filter.ts';

describe('sluice redrive --filter', () => {
  const message = {
    Body: JSON.stringify({ customer: { id: 42, tier: 'gold' }, items: [{ sku: 'A-1' }], note: null }),
    MessageAttributes: {
      kind: { DataType: 'String', StringValue: 'refund' },
      n: { DataType: 'Number', StringValue: '7' },
    },
  };
  const matches = (...filters: string[]) => matchesAll(filters.map(parseFilter), message);

  it('matches attributes and JSON body fields by equality and by regular expression', () => {
    assert.equal(matches('attr.kind=refund'), true);
    assert.equal(matches('attr.kind=charge'), false);
    assert.equal(matches('attr.n~^[0-9]$'), true);
    assert.equal(matches('attr.missing=x'), false);
    assert.equal(matches('body.customer.id=42'), true);
    assert.equal(matches('body.customer.tier~^go'), true);
    assert.equal(matches('body.items.0.sku=A-1'), true);
    assert.equal(matches('body.customer.name=x'), false);
    assert.equal(matches('body.note=null'), false, 'a null field matches nothing');
    assert.equal(matches('body~"tier":"gold"'), true);
    assert.equal(matches('attr.kind=refund', 'body.customer.tier=basic'), false, 'all filters must match');
    assert.equal(matchesAll([parseFilter('body.a=1')], { Body: 'not json' }), false);
  });

  it('keeps = and ~ inside the value after the first operator', () => {
    assert.equal(
      matchesAll([parseFilter('attr.q=a=b~c')], { MessageAttributes: { q: { StringValue: 'a=b~c' } } }),
      true,
    );
  });

  it('refuses filters it cannot read', () => {
    for (const bad of ['nonsense', 'attr.=x', 'body.=x', 'header.x=1', 'body~(']) {
      assert.throws(() => parseFilter(bad), /filter/, bad);
    }
  });

  it('reads patterns as RE2: linear in time, so no backreferences or lookarounds', () => {
    const hostile = { Body: `${'a'.repeat(64)}!` };
    assert.equal(matchesAll([parseFilter('body~^(a+)+$')], hostile), false);
    assert.equal(matchesAll([parseFilter('body~^(a+)+!$')], hostile), true);
    assert.equal(matchesAll([parseFilter('body~(?i)^A+!$')], hostile), true, 'inline flags');
    for (const bad of ['body~(a)\\1', 'body~a(?=b)', 'body~(?<=a)b'])
      assert.throws(() => parseFilter(bad), /RE2 syntax/, bad);
  });

  it('bounds a search: 20 filters, 10,000 instructions of patterns, and the work of matching one message', () => {
    assert.throws(() => parseFilters(Array.from({ length: 21 }, () => 'id=x')), /at most 20 filters/);
    // Literal text is one instruction a character: fifty message ids in one alternation are about 2,000.
    const ids = Array.from({ length: 50 }, () => randomUUID().replaceAll('-', '\\-'));
    assert.equal(parseFilters([`id~^(?:${ids.join('|')})$`]).length, 1);
    assert.equal(parseFilters([`body~${'x{1000}'.repeat(5)}`, `attr.x~${'y{1000}'.repeat(4)}`]).length, 2);
    assert.throws(
      () => parseFilters([`body~${'x{1000}'.repeat(5)}`, `attr.x~${'y{1000}'.repeat(5)}`]),
      /come to 10004 instructions together/,
    );
    // Nested repeats multiply, read off the text before anything is compiled.
    assert.throws(() => parseFilter('body~(?:(?:(?:a{10}){10}){10}){10}'), /instructions together/);
    const [filter] = parseFilters(['body~[ab]*a[ab]{20}$']);
    const meter: WorkMeter = { work: 0 };
    const fits = 'ab'.repeat(Math.floor(MESSAGE_WORK_MAX / filter!.workPerCharacter / 2));
    assert.equal(matchesAll([filter!], { Body: fits }, meter), false);
    assert.equal(meter.work, filter!.workPerCharacter * fits.length);
    assert.throws(
      () => matchesAll([filter!], { MessageId: 'm-1', Body: `${fits}ab` }, meter),
      (error: unknown) => error instanceof FilterWorkError && /on message m-1/.test(error.message),
    );
  });

  it("reads an upper bound of a pattern's RE2 program off its text", () => {
    for (const [pattern, actual] of [
      ['x{1000}', 1002],
      ['(?:(?:a{30}){30})', 902],
      ['a{2,5}', 10],
      ['a{3,}', 6],
      ['[]a]{10}', 12],
      ['\\p{Greek}{10}', 12],
      ['^(refund|charge|void)$', 24],
      ['(?:ab|cd){400}', 2002],
    ] as const)
      assert.ok(
        instructionsBound(pattern) >= actual,
        `${pattern}: ${instructionsBound(pattern)} < ${actual}`,
      );
  });
});
