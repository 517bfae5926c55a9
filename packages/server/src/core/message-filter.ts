/**
 * Which messages `sluice redrive --filter` moves, and which the console's and API's message search finds. A
 * filter is `SUBJECT=VALUE` (equal) or `SUBJECT~REGEX` (matches), where SUBJECT is
 *   id               the message id
 *   attr.NAME        a message attribute's string value (String, Number and their custom types)
 *   body.PATH        a field of a JSON body, PATH in dots (`body.customer.tier`, `body.items.0.sku`)
 *   body             the whole body as text
 * Several filters must all match. A message whose body is not JSON matches no `body.PATH` filter.
 */
export interface MessageFilter {
  text: string;
  subject: { kind: 'id' } | { kind: 'attribute'; name: string } | { kind: 'body'; path: string[] };
  test: (value: string) => boolean;
}

export interface FilterableMessage {
  MessageId?: string;
  Body?: string;
  MessageAttributes?: Record<string, { StringValue?: string; DataType?: string }>;
}

export function parseFilter(text: string): MessageFilter {
  const match = /^([^=~]+)([=~])(.*)$/s.exec(text);
  if (!match)
    throw new Error(`filter "${text}" must look like id=ID, attr.NAME=VALUE, body.PATH=VALUE or body~REGEX`);
  const [, subjectText = '', operator, value = ''] = match;
  let test: (candidate: string) => boolean;
  if (operator === '=') test = (candidate) => candidate === value;
  else {
    let pattern: RegExp;
    try {
      pattern = new RegExp(value);
    } catch (error) {
      throw new Error(`filter "${text}": ${(error as Error).message}`);
    }
    test = (candidate) => pattern.test(candidate);
  }
  if (subjectText === 'id') return { text, subject: { kind: 'id' }, test };
  if (subjectText.startsWith('attr.') && subjectText.length > 5)
    return { text, subject: { kind: 'attribute', name: subjectText.slice(5) }, test };
  if (subjectText === 'body') return { text, subject: { kind: 'body', path: [] }, test };
  if (subjectText.startsWith('body.') && subjectText.length > 5)
    return { text, subject: { kind: 'body', path: subjectText.slice(5).split('.') }, test };
  throw new Error(`filter "${text}": the subject must be id, attr.NAME, body or body.PATH`);
}

/** The search box's plain text: the body contains it, as typed (no pattern). */
export function bodyContains(text: string): MessageFilter {
  return {
    text: `body contains ${JSON.stringify(text)}`,
    subject: { kind: 'body', path: [] },
    test: (body) => body.includes(text),
  };
}

export function matchesAll(filters: readonly MessageFilter[], message: FilterableMessage): boolean {
  let json: unknown;
  let parsed = false;
  return filters.every((filter) => {
    const { subject } = filter;
    if (subject.kind === 'id') return message.MessageId !== undefined && filter.test(message.MessageId);
    if (subject.kind === 'attribute') {
      const value = message.MessageAttributes?.[subject.name]?.StringValue;
      return value !== undefined && filter.test(value);
    }
    const body = message.Body ?? '';
    if (subject.path.length === 0) return filter.test(body);
    if (!parsed) {
      parsed = true;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
    }
    let value: unknown = json;
    for (const key of subject.path) {
      if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return false;
      value = (value as Record<string, unknown>)[key];
    }
    if (value === null || value === undefined) return false;
    return filter.test(typeof value === 'object' ? JSON.stringify(value) : String(value));
  });
}
