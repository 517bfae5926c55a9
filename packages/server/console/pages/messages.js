// @ts-check
/**
 * A queue's messages (#/messages/NAME), for dead-letter triage: search them without receiving them, page
 * through, and replay (edited, if need be) or delete the selection.
 *
 * @import { BrowsedMessage, BrowsePage, TriageReport } from '../../src/core/triage.ts'
 * @import { MessageAttributes } from '../../src/shared/sqs-values.ts'
 */
import { api, apiPost, queueNames } from '../shared/api.js';
import { confirmation, field, h } from '../shared/dom.js';
import { formatTime, plural } from '../shared/format.js';
import { queueLink } from '../shared/queue-view.js';
import { main } from '../shared/screen.js';
import { attempt, say } from '../shared/status.js';

/**
 * GET /api/messages's answer (server/triage-api.ts): a page of the queue's messages.
 * @typedef {{ queue: string } & BrowsePage} MessagesAnswer
 */

/**
 * What a replay or delete did, in one line: how many, and each skipped message with its reason.
 * @param {string} verb
 * @param {TriageReport} report
 */
function triageSummary(verb, report) {
  /** @type {Record<string, string>} */
  const reasons = { inFlight: 'in flight (a consumer holds it)', missing: 'no longer in the queue' };
  const skipped = report.skipped.map((s) => `${s.messageId}: ${reasons[s.reason] ?? s.reason}`);
  const more = report.truncated ? ' More matched than one request takes: repeat.' : '';
  return `${verb} ${plural(report.done.length, 'message')}.${
    skipped.length > 0 ? ` Skipped ${skipped.length}: ${skipped.join('; ')}.` : ''
  }${more}`;
}

/**
 * A queue's messages as they are, without receiving them: search, page through, and replay or delete the
 * selection, each message atomically on the server; a message a consumer holds is skipped and said so.
 */
/** @param {string} name */
export async function messagesPage(name) {
  const text = h('input', { type: 'search', id: 'search-text', placeholder: 'text in the body' });
  const filter = h('input', {
    type: 'text',
    id: 'search-filter',
    placeholder: 'attr.kind=refund  body.customer.id=42  id=…',
    size: 34,
  });
  const list = h('div', { id: 'message-list' });
  const pager = h('p', { class: 'pager' });
  const destinations = h(
    'select',
    { id: 'replay-destination' },
    h('option', { value: '' }, 'each message’s origin'),
  );
  for (const queue of await queueNames())
    if (queue !== name) destinations.append(h('option', { value: queue }, queue));
  const confirmBox = h('span', { id: 'delete-confirm' });
  /** Cursors of the pages before this one, to go back; the current page's own cursor last. */
  /** @type {(string | undefined)[]} */
  const cursors = [undefined];
  /** @type {string | undefined} */
  let next;
  /** @type {BrowsedMessage[]} */
  let shown = [];
  /** @type {Set<string>} */
  const selected = new Set();

  const query = () => {
    const params = new URLSearchParams({ queue: name, limit: '20' });
    if (text.value) params.set('text', text.value);
    for (const part of filter.value.split(/\s+/).filter(Boolean)) params.append('filter', part);
    return params;
  };
  const selection = () => [...selected];
  const load = async () => {
    const params = query();
    const after = cursors.at(-1);
    if (after) params.set('after', after);
    /** @type {MessagesAnswer} */
    const page = await api(`/api/messages?${params}`);
    next = page.next;
    shown = page.messages;
    for (const id of [...selected]) if (!shown.some((m) => m.messageId === id)) selected.delete(id);
    render();
  };
  /**
   * @param {string} verb
   * @param {string} path
   * @param {object} [extra]
   */
  const act = async (verb, path, extra = {}) => {
    /** @type {TriageReport} */
    const report = await apiPost(path, { queue: name, ids: selection(), ...extra });
    selected.clear();
    await load();
    say(triageSummary(verb, report), report.skipped.length > 0 ? 'warning' : 'success');
  };
  /** @param {{ body?: string, messageAttributes?: MessageAttributes }} [extra] */
  const replay = (extra = {}) =>
    attempt(() =>
      act('Replayed', '/api/messages/replay', {
        ...(destinations.value ? { destination: destinations.value } : {}),
        ...extra,
      }),
    );
  const askDelete = () => {
    if (selected.size === 0) return say('Select messages first.', 'error');
    confirmBox.replaceChildren(
      confirmation(
        `Delete ${plural(selected.size, 'message')} from ${name}?`,
        ['Yes, delete', 'Yes, delete the selected messages'],
        ['Keep them', 'Keep the selected messages'],
        async () => {
          confirmBox.replaceChildren();
          await attempt(() => act('Deleted', '/api/messages/delete'));
        },
        () => confirmBox.replaceChildren(),
      ),
    );
    confirmBox.querySelector('button')?.focus();
  };

  /** @param {BrowsedMessage} message */
  const row = (message) => {
    const box = h('input', {
      type: 'checkbox',
      checked: selected.has(message.messageId),
      'aria-label': `select ${message.messageId}`,
      onchange: (event) =>
        event.currentTarget.checked ? selected.add(message.messageId) : selected.delete(message.messageId),
    });
    const edited = h('textarea', { rows: 4, cols: 60, class: 'edit-body' }, message.body);
    const shownAttributes = JSON.stringify(message.messageAttributes ?? {}, null, 2);
    const editedAttributes = h('textarea', { rows: 4, cols: 60, class: 'edit-attributes' }, shownAttributes);
    const attributes = Object.entries(message.messageAttributes ?? {}).map(
      ([key, value]) => `${key} (${value.DataType}) = ${value.StringValue ?? value.BinaryValue}`,
    );
    return h(
      'tr',
      { 'data-message': message.messageId, 'data-state': message.state },
      h('td', {}, box),
      h(
        'td',
        {},
        h('code', {}, message.messageId),
        h('div', { class: 'muted small' }, `sent ${formatTime(message.sentAt)}`),
      ),
      h(
        'td',
        {},
        message.state === 'inFlight' ? h('span', { class: 'badge alarm' }, 'in flight') : message.state,
      ),
      h('td', { class: 'number' }, String(message.receiveCount)),
      h(
        'td',
        {},
        message.origin ? queueLink(message.origin.queue) : h('span', { class: 'muted' }, 'none'),
        message.failureReason ? h('div', { class: 'muted small' }, message.failureReason) : '',
      ),
      h(
        'td',
        { class: 'body' },
        h(
          'details',
          {},
          h('summary', {}, message.body.length > 80 ? `${message.body.slice(0, 80)}…` : message.body),
          attributes.length > 0 ? h('p', { class: 'small' }, 'Attributes: ', attributes.join(', ')) : '',
          message.groupId ? h('p', { class: 'small' }, `Group: ${message.groupId}`) : '',
          field('Body to replay with', edited),
          field('Message attributes to replay with (JSON)', editedAttributes),
          h(
            'button',
            {
              type: 'button',
              class: 'secondary small',
              onclick: () => {
                /** @type {{ body?: string, messageAttributes?: MessageAttributes }} */
                const changes = edited.value === message.body ? {} : { body: edited.value };
                if (editedAttributes.value !== shownAttributes) {
                  try {
                    changes.messageAttributes = JSON.parse(editedAttributes.value);
                  } catch {
                    return say(
                      'The message attributes must be JSON: {"name": {"DataType": "String", "StringValue": "…"}}.',
                      'error',
                    );
                  }
                }
                selected.clear();
                selected.add(message.messageId);
                return replay(changes);
              },
            },
            'Replay this message',
          ),
        ),
      ),
    );
  };
  const render = () => {
    list.replaceChildren(
      shown.length === 0
        ? h('p', { class: 'muted' }, cursors.length > 1 ? 'No more messages.' : 'No messages match.')
        : h(
            'table',
            { class: 'messages' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['', 'Message', 'State', 'Receives', 'Origin and reason', 'Body'].map((t) =>
                  h('th', { scope: 'col' }, t),
                ),
              ),
            ),
            h('tbody', {}, shown.map(row)),
          ),
    );
    pager.replaceChildren(
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          id: 'page-back',
          disabled: cursors.length === 1,
          onclick: () => {
            cursors.pop();
            return attempt(load);
          },
        },
        '← Previous',
      ),
      ' ',
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          id: 'page-next',
          disabled: next === undefined,
          onclick: () => {
            cursors.push(next);
            return attempt(load);
          },
        },
        'Next →',
      ),
    );
  };

  main.replaceChildren(
    h('p', { class: 'crumbs' }, h('a', { href: `#/queue/${encodeURIComponent(name)}` }, `← ${name}`)),
    h('h1', {}, `Messages of ${name}`),
    h(
      'p',
      { class: 'muted' },
      'Shown as they are, without receiving them: no receive is counted and nothing is hidden from consumers. A message a consumer holds (in flight) is left alone by replays and deletes.',
    ),
    h(
      'form',
      {
        id: 'search-form',
        onsubmit: (event) => {
          event.preventDefault();
          cursors.splice(1);
          selected.clear();
          return attempt(load);
        },
      },
      field('Body contains', text),
      field('Filters', filter),
      h('button', { type: 'submit' }, 'Search'),
    ),
    h(
      'p',
      { id: 'triage-actions' },
      field('Replay to', destinations),
      ' ',
      h('button', { type: 'button', id: 'replay-selected', onclick: () => replay() }, 'Replay selected'),
      ' ',
      h(
        'button',
        { type: 'button', class: 'danger', id: 'delete-selected', onclick: askDelete },
        'Delete selected…',
      ),
      confirmBox,
    ),
    list,
    pager,
  );
  await load();
}
