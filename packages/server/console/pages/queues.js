// @ts-check
/**
 * The queue list (#/): every queue the viewer may read with its counts and recent depth, a name filter, a
 * delete button per queue, and the form that creates a queue.
 *
 * @import { QueueOverview } from '../../src/server/console-api.ts'
 */
import { arnPrefix, loadOverview, queueNames, queueUrl, sqs } from '../shared/api.js';
import { sparkline } from '../shared/charts.js';
import { confirmation, field, h } from '../shared/dom.js';
import { formatAge, plural } from '../shared/format.js';
import { badges, holdsMessages, queueLink } from '../shared/queue-view.js';
import { every, main } from '../shared/screen.js';
import { attempt } from '../shared/status.js';

export async function queueListPage() {
  const filter = h('input', { type: 'search', id: 'filter', placeholder: 'part of a name' });
  const tbody = h('tbody');
  const cut = h('p', { id: 'overview-cut', class: 'muted', hidden: true });
  /** @type {QueueOverview[]} */
  let queues = [];
  /**
   * The queue whose deletion waits for a yes; the list is not redrawn under the question.
   * @type {string | undefined}
   */
  let confirming;

  /** @param {QueueOverview} q */
  const deleteQueue = (q) =>
    attempt(async () => {
      confirming = undefined;
      await sqs('DeleteQueue', { QueueUrl: queueUrl(q.name) });
      await load();
    }, `Deleted queue ${q.name}.`);
  /** @param {QueueOverview} q */
  const deleteCell = (q) => {
    if (confirming === q.name)
      return confirmation(
        `Delete ${q.name} and its ${plural(q.visible + q.notVisible + q.delayed, 'message')}?`,
        ['Yes, delete', `Yes, delete ${q.name}`],
        ['Keep it', `Keep ${q.name}`],
        () => deleteQueue(q),
        () => {
          confirming = undefined;
          render();
        },
      );
    return h(
      'button',
      {
        type: 'button',
        class: 'secondary small',
        'aria-label': `Delete queue ${q.name}`,
        onclick: () => {
          confirming = q.name;
          render();
          /** @type {HTMLElement | null} */ (tbody.querySelector('.confirm button'))?.focus();
        },
      },
      'Delete…',
    );
  };
  const render = () => {
    tbody.replaceChildren(
      ...queues.map((q) =>
        h(
          'tr',
          { 'data-queue': q.name },
          h('td', {}, queueLink(q.name), badges(q)),
          h('td', { 'data-col': 'url', class: 'url' }, queueUrl(q.name)),
          h('td', {}, q.fifo ? 'FIFO' : 'Standard'),
          h('td', { class: 'num', 'data-col': 'visible' }, q.visible),
          h('td', { class: 'num', 'data-col': 'in-flight' }, q.notVisible),
          h('td', { class: 'num', 'data-col': 'delayed' }, q.delayed),
          h('td', { class: 'num' }, holdsMessages(q) ? formatAge(q.oldestAgeSeconds) : '–'),
          h('td', {}, sparkline(q.sparkline, q.name)),
          h('td', { class: 'actions' }, deleteCell(q)),
        ),
      ),
    );
    if (queues.length === 0)
      tbody.append(
        h(
          'tr',
          {},
          h(
            'td',
            { colspan: 9, class: 'muted' },
            filter.value.trim() ? 'No queue matches.' : 'No queues yet: create one below.',
          ),
        ),
      );
  };
  const load = async () => {
    const data = await loadOverview({ filter: filter.value.trim() });
    queues = data.queues;
    cut.hidden = data.matching <= queues.length;
    cut.textContent = `Showing the first ${queues.length} of ${data.matching} queues by name; filter to narrow.`;
    render();
    await createForm.refreshPicker();
  };
  // The filter runs on the server (the overview is capped), so typing waits for a pause before asking.
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let typing;
  filter.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => attempt(load), 200);
  });
  const createForm = createQueueSection(load);

  main.replaceChildren(
    h('h1', {}, 'Queues'),
    h(
      'section',
      {},
      h('h2', {}, 'All queues'),
      field('Filter by name', filter),
      cut,
      h(
        'table',
        { id: 'queues' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Name', 'URL', 'Type', 'Visible', 'In flight', 'Delayed', 'Oldest', 'Visible, recent', ''].map(
              (t) => h('th', { scope: 'col' }, t),
            ),
          ),
        ),
        tbody,
      ),
    ),
    createForm.section,
  );
  await load();
  every(2000, () => (confirming === undefined ? load() : undefined));
}

/** @param {() => Promise<void>} reload */
function createQueueSection(reload) {
  const dlqSelect = h('select', { id: 'new-dlq' });
  const name = h('input', {
    id: 'new-name',
    required: true,
    pattern: '[A-Za-z0-9_-]{1,80}(\\.fifo)?',
    size: 30,
  });
  const fifo = h('input', { type: 'checkbox', id: 'new-fifo' });
  const maxReceives = h('input', { type: 'number', id: 'new-max-receives', min: 1, max: 1000, value: 3 });
  const visibility = h('input', {
    type: 'number',
    id: 'new-visibility',
    min: 0,
    max: 43200,
    placeholder: '30',
  });
  /** @param {SubmitEvent} event */
  const create = async (event) => {
    event.preventDefault();
    const queueName = name.value.trim();
    /** @type {Record<string, string>} */
    const attributes = {};
    if (fifo.checked) attributes.FifoQueue = 'true';
    if (visibility.value !== '') attributes.VisibilityTimeout = visibility.value;
    if (dlqSelect.value) {
      attributes.RedrivePolicy = JSON.stringify({
        deadLetterTargetArn: `${arnPrefix}${dlqSelect.value}`,
        maxReceiveCount: Number(maxReceives.value),
      });
    }
    await attempt(async () => {
      await sqs('CreateQueue', { QueueName: queueName, Attributes: attributes });
      name.value = '';
      await reload();
    }, `Created queue ${queueName}.`);
  };
  return {
    async refreshPicker() {
      const names = await queueNames();
      const chosen = dlqSelect.value;
      dlqSelect.replaceChildren(
        h('option', { value: '' }, '(none)'),
        ...names.map((queueName) => h('option', { value: queueName }, queueName)),
      );
      dlqSelect.value = names.includes(chosen) ? chosen : '';
    },
    section: h(
      'section',
      {},
      h('h2', {}, 'Create a queue'),
      h(
        'form',
        { id: 'create-queue', onsubmit: create },
        field('Name (FIFO names end in .fifo)', name),
        h('label', { class: 'inline' }, fifo, 'FIFO'),
        field('Visibility timeout (s)', visibility),
        field('Dead-letter queue', dlqSelect),
        field('Max receives before the DLQ', maxReceives),
        h('div', {}, h('button', { type: 'submit' }, 'Create queue')),
      ),
    ),
  };
}
