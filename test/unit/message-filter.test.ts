import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchesAll, parseFilter } from '../../packages/server/src/core/message-filter.ts';

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
});
