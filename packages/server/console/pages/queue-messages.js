// @ts-check
/**
 * A queue page's messages: the send form, the poll form with the messages it received (each with a Delete
 * button and what the delete did), and the purge button.
 *
 * @import { Message, SendMessageRequest } from '../../src/core/api-types.ts'
 * @import { QueueOverview } from '../../src/server/console-api.ts'
 */
import { ServerError, serverNow, sqs } from '../shared/api.js';
import { confirmation, field, h } from '../shared/dom.js';
import { formatTime, plural, prettyBody } from '../shared/format.js';
import { queueLink } from '../shared/queue-view.js';
import { attempt, say } from '../shared/status.js';

/**
 * Where a polled message came from and until when its receipt handle lasts; `refresh` redraws the page's counts.
 * @typedef {{ url: string, queue: QueueOverview, refresh: () => Promise<void>, handleLapsesAt: number }} Received
 */

/**
 * The value of the input or select `selector` in an attribute's row of the send form.
 * @param {Element} row
 * @param {string} selector
 */
const valueIn = (row, selector) =>
  /** @type {HTMLInputElement | HTMLSelectElement} */ (row.querySelector(selector)).value;

/**
 * Send, poll and purge; `refresh` redraws the page's counts after each.
 * @param {string} name
 * @param {string} url
 * @param {QueueOverview} queue
 * @param {() => Promise<void>} refresh
 */
export function messagesPanel(name, url, queue, refresh) {
  const fifoQueue = queue.fifo;
  const body = h('textarea', { id: 'send-body', required: true });
  const delay = h('input', { type: 'number', id: 'send-delay', min: 0, max: 900, placeholder: '0', size: 5 });
  const group = h('input', { id: 'send-group', size: 14 });
  const dedup = h('input', { id: 'send-dedup', size: 14 });
  const attributeRows = h('div', { id: 'send-attributes' });
  const addAttribute = () => {
    const n = attributeRows.children.length + 1;
    attributeRows.append(
      h(
        'div',
        { class: 'attribute-row' },
        field(`Attribute ${n} name`, h('input', { class: 'attr-name', size: 12 })),
        field(
          'type',
          h(
            'select',
            { class: 'attr-type' },
            ['String', 'Number', 'Binary'].map((t) => h('option', { value: t }, t)),
          ),
        ),
        field('value', h('input', { class: 'attr-value', size: 14 })),
      ),
    );
  };
  /** @param {SubmitEvent} event */
  const send = async (event) => {
    event.preventDefault();
    /** @type {SendMessageRequest} */
    const input = { QueueUrl: url, MessageBody: body.value };
    if (!fifoQueue && delay.value !== '') input.DelaySeconds = Number(delay.value);
    if (group.value) input.MessageGroupId = group.value;
    if (dedup.value) input.MessageDeduplicationId = dedup.value;
    /** @type {NonNullable<SendMessageRequest['MessageAttributes']>} */
    const attributes = {};
    for (const row of attributeRows.children) {
      const key = valueIn(row, '.attr-name').trim();
      if (!key) continue;
      const type = valueIn(row, '.attr-type');
      const value = valueIn(row, '.attr-value');
      attributes[key] =
        type === 'Binary'
          ? { DataType: type, BinaryValue: btoa(value) }
          : { DataType: type, StringValue: value };
    }
    if (Object.keys(attributes).length > 0) input.MessageAttributes = attributes;
    await attempt(async () => {
      const output = await sqs('SendMessage', input);
      say(`Sent message ${output.MessageId}.`);
      await refresh();
    });
  };

  const visibility = h('input', {
    type: 'number',
    id: 'poll-visibility',
    min: 0,
    max: 43200,
    value: 30,
    size: 6,
  });
  const max = h('input', { type: 'number', id: 'poll-max', min: 1, max: 10, value: 10, size: 4 });
  const results = h('div', { id: 'poll-results', 'aria-live': 'polite' });
  /** @param {SubmitEvent} event */
  const poll = async (event) => {
    event.preventDefault();
    await attempt(async () => {
      const visibilitySeconds = Number(visibility.value);
      const output = await sqs('ReceiveMessage', {
        QueueUrl: url,
        MaxNumberOfMessages: Number(max.value),
        VisibilityTimeout: visibilitySeconds,
        WaitTimeSeconds: 0,
        AttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      });
      const received = { url, queue, refresh, handleLapsesAt: serverNow() + visibilitySeconds * 1000 };
      const messages = output.Messages ?? [];
      results.replaceChildren(
        h(
          'p',
          {},
          `${plural(messages.length, 'message')} received, invisible to others for ${visibilitySeconds} s.`,
        ),
        ...messages.map((m) => renderMessage(m, received)),
      );
      await refresh();
    });
  };

  const purgeBox = h('span', { id: 'purge-confirm' });
  const purgeButton = h('button', { type: 'button', class: 'danger', id: 'purge' }, 'Purge queue…');
  purgeButton.addEventListener('click', () => {
    purgeBox.replaceChildren(
      confirmation(
        `Delete every message in ${name}?`,
        ['Yes, purge', 'Yes, purge'],
        ['Keep the messages', 'Keep the messages'],
        async () => {
          purgeBox.replaceChildren();
          await attempt(async () => {
            await sqs('PurgeQueue', { QueueUrl: url });
            results.replaceChildren();
            await refresh();
          }, `Purged ${name}.`);
        },
        () => {
          purgeBox.replaceChildren();
          purgeButton.focus();
        },
      ),
    );
    purgeBox.querySelector('button')?.focus();
  });

  return {
    sendForm: h(
      'form',
      { id: 'send-form', onsubmit: send },
      h('h2', {}, 'Send a message'),
      field('Body', body),
      h(
        'div',
        {},
        fifoQueue ? '' : field('Delay (s)', delay),
        field(fifoQueue ? 'Message group id (required)' : 'Message group id (fair queues)', group),
        fifoQueue ? field('Deduplication id', dedup) : '',
      ),
      attributeRows,
      h(
        'div',
        {},
        h('button', { type: 'submit' }, 'Send message'),
        h('button', { type: 'button', class: 'secondary', onclick: addAttribute }, 'Add attribute'),
      ),
    ),
    pollForm: h(
      'form',
      { id: 'poll-form', onsubmit: poll },
      h('h2', {}, 'Poll for messages'),
      field('Visibility timeout (s)', visibility),
      field('Up to', max),
      h(
        'div',
        {},
        h('button', { type: 'submit' }, 'Poll'),
        // A link (it opens a page, in a new tab too) that looks like the buttons beside it.
        h(
          'a',
          {
            class: 'button secondary',
            id: 'browse-messages',
            href: `#/messages/${encodeURIComponent(name)}`,
            title: 'Search, replay and delete messages without receiving them',
          },
          'Browse messages',
        ),
        purgeButton,
        purgeBox,
      ),
    ),
    results,
  };
}

/**
 * A received message with its Delete button; `received` says where from and when its handle lapses, and
 * refreshes the page's counts.
 * @param {Message} m
 * @param {Received} received
 */
function renderMessage(m, received) {
  const attributes = m.Attributes ?? {};
  const deleteButton = h('button', { type: 'button', class: 'secondary' }, 'Delete');
  const outcome = h('div', { class: 'outcome', role: 'status' });
  const box = h(
    'article',
    { class: 'message', 'data-message-id': m.MessageId },
    h('pre', { class: 'body' }, prettyBody(m.Body ?? '')),
    h(
      'dl',
      { class: 'attrs' },
      h('dt', {}, 'MessageId'),
      h('dd', {}, m.MessageId),
      h('dt', {}, 'Receive count'),
      h('dd', { class: 'receive-count' }, attributes.ApproximateReceiveCount ?? '?'),
      h('dt', {}, 'Sent'),
      h('dd', {}, attributes.SentTimestamp ? formatTime(Number(attributes.SentTimestamp)) : '?'),
      h('dt', {}, 'Handle valid until'),
      h('dd', {}, formatTime(received.handleLapsesAt)),
      attributes.MessageGroupId ? [h('dt', {}, 'Group'), h('dd', {}, attributes.MessageGroupId)] : '',
      attributes.DeadLetterQueueSourceArn
        ? [h('dt', {}, 'Dead-lettered from'), h('dd', {}, attributes.DeadLetterQueueSourceArn)]
        : '',
      Object.entries(m.MessageAttributes ?? {}).flatMap(([key, value]) => [
        h('dt', {}, `${key} (${value.DataType})`),
        h('dd', {}, value.StringValue ?? value.BinaryValue ?? ''),
      ]),
    ),
    deleteButton,
    outcome,
  );
  const remove = async () => {
    try {
      await sqs('DeleteMessage', { QueueUrl: received.url, ReceiptHandle: m.ReceiptHandle });
    } catch (error) {
      if (!(error instanceof ServerError)) throw error;
      say(error.message, 'error');
      outcome.className = 'outcome error';
      outcome.replaceChildren(
        h('strong', {}, 'Not deleted. '),
        `The server answered ${error.code}: ${error.detail} `,
        whyItStays(error, received),
      );
      return;
    }
    // The time now, as the server counts it (the refresh reads it), tells whether the handle had lapsed.
    await received.refresh();
    box.replaceChildren(
      h(
        'div',
        { class: 'outcome' },
        serverNow() < received.handleLapsesAt
          ? `Deleted ${m.MessageId}: the server accepted DeleteMessage while the message was in flight under this handle.`
          : lapsedDelete(m.MessageId, received),
      ),
    );
    say(`DeleteMessage succeeded for ${m.MessageId}.`);
  };
  deleteButton.addEventListener('click', () => attempt(remove));
  return box;
}

/**
 * SQS answers a delete with success both when it deleted the message and when the message had already
 * gone, so after a lapsed handle the console says both what happened and what it cannot know.
 */
/**
 * @param {string | undefined} messageId
 * @param {Received} received
 */
function lapsedDelete(messageId, received) {
  const dlq = received.queue.deadLetterQueue;
  return [
    `DeleteMessage succeeded for ${messageId}, but this handle's visibility timeout had lapsed at ${formatTime(received.handleLapsesAt)}. `,
    'Either the message was still in the queue and is deleted now (a standard queue takes any handle it issued, even after another receive, unless the server refuses stale handles with --strict-receipt-handles), ',
    'or it had already left — deleted by another consumer',
    dlq ? [', or moved to the dead-letter queue ', queueLink(dlq), ' after its last allowed receive'] : '',
    ' — and the server answers the same success. The answer does not say which.',
  ];
}

/**
 * Why a refused delete leaves the message where it is.
 * @param {ServerError} error
 * @param {Received} received
 */
function whyItStays(error, received) {
  if (error.code === 'InvalidParameterValueException' || error.code === 'InvalidParameterValue')
    return received.queue.fifo
      ? `The message stays in the queue: on a FIFO queue a receipt handle works only while its visibility timeout lasts, and this one lapsed at ${formatTime(received.handleLapsesAt)}. Poll again to receive the message with a new handle.`
      : 'The message stays in the queue.';
  if (error.code === 'ReceiptHandleIsInvalid')
    return /strict receipt handles/.test(error.detail)
      ? 'The message stays in the queue, with the consumer that received it since or visible for the next: this queue refuses stale handles (strict receipt handles). Poll again to receive it with a new handle.'
      : 'The message stays in the queue: the server does not know this handle (was the queue deleted and created again?).';
  if (error.code === 'AccessDeniedException' || error.code === 'AccessDenied')
    return 'The message stays in the queue: this key may not delete its messages.';
  return 'The message stays in the queue.';
}
