import type { BrowsedMessage } from '../core/triage.ts';
import { type TableColumn, textTable, utcTime } from './table.ts';
import { safeText } from './terminal-text.ts';

/** A message's state as people read it. */
export function stateOf(message: BrowsedMessage): string {
  return message.state === 'inFlight' ? 'in flight' : message.state;
}

const COLUMNS: Array<TableColumn<BrowsedMessage>> = [
  { title: 'message id', value: (m) => m.messageId },
  { title: 'state', value: stateOf },
  { title: 'receives', value: (m) => String(m.receiveCount), numeric: true },
  { title: 'sent (UTC)', value: (m) => utcTime(m.sentAt) },
  { title: 'origin', value: (m) => m.origin?.queue ?? '' },
];
/** The narrowest the body column gets, whatever the terminal's width. */
const BODY_MIN = 20;
/** The body column's width when the output is not a terminal. */
const BODY_UNBOUNDED = 80;

/**
 * The messages as a table, one line each, the body last and cut to fit `width` (a terminal's columns; when
 * undefined, to 80 characters). Every field is printed escaped (see safeText).
 */
export function messageTable(messages: readonly BrowsedMessage[], width: number | undefined): string {
  const others = textTable(COLUMNS, messages).split('\n');
  const used = Math.max(...others.map((line) => line.length)) + 2;
  const bodyWidth = width === undefined ? BODY_UNBOUNDED : Math.max(BODY_MIN, width - used);
  return textTable([...COLUMNS, { title: 'body', value: (m) => m.body, maxWidth: bodyWidth }], messages);
}

/** One message, every field on its own line, escaped (see safeText); the body in full, on one line. */
export function messageDetail(message: BrowsedMessage): string {
  const attributes = Object.entries(message.messageAttributes ?? {}).map(
    ([name, value]) => `${name} (${value.DataType}) = ${value.StringValue ?? value.BinaryValue ?? ''}`,
  );
  const fields: Array<[string, string | undefined]> = [
    ['message id', message.messageId],
    ['state', stateOf(message)],
    ['receives', String(message.receiveCount)],
    [
      'first received',
      message.firstReceivedAt === undefined ? undefined : `${utcTime(message.firstReceivedAt)} UTC`,
    ],
    ['sent', `${utcTime(message.sentAt)} UTC`],
    ['group', message.groupId],
    ['origin', message.origin && `${message.origin.queue} (${message.origin.arn})`],
    ['why here', message.failureReason],
    ['attributes', attributes.length === 0 ? 'none' : attributes[0]],
    ...attributes.slice(1).map((line): [string, string] => ['', line]),
    ['body', `${Buffer.byteLength(message.body)} bytes`],
  ];
  const present = fields.filter((field): field is [string, string] => field[1] !== undefined);
  const width = Math.max(...present.map(([name]) => name.length)) + 2;
  const lines = present.map(([name, value]) => `${name.padEnd(width)}${safeText(value)}`);
  return [...lines, safeText(message.body)].join('\n');
}
