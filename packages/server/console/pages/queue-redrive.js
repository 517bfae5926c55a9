// @ts-check
/**
 * A dead-letter queue's redrive form on its page: start a move task back to the sources (or to another
 * queue), follow its progress, cancel it.
 *
 * @import { StartMessageMoveTaskRequest } from '../../src/core/api-types.ts'
 * @import { QueueOverview } from '../../src/server/console-api.ts'
 */
import { arnPrefix, sqs } from '../shared/api.js';
import { field, h } from '../shared/dom.js';
import { every } from '../shared/screen.js';
import { attempt, quietly } from '../shared/status.js';

/**
 * @param {string} name
 * @param {QueueOverview} queue
 * @param {string[]} names every queue's name, for the destination picker
 */
export function redriveForm(name, queue, names) {
  const destination = h(
    'select',
    { id: 'redrive-destination' },
    h('option', { value: '' }, `its source queues (${queue.deadLetterSources.join(', ')})`),
    names
      .filter((other) => other !== name)
      .map((other) => h('option', { value: `${arnPrefix}${other}` }, other)),
  );
  const rate = h('input', {
    type: 'number',
    id: 'redrive-rate',
    min: 1,
    max: 500,
    placeholder: 'server default',
    size: 10,
  });
  const progress = h('progress', { id: 'redrive-progress', max: 1, value: 0 });
  const progressText = h('span', { id: 'redrive-status' }, 'No move task yet.');
  const cancel = h(
    'button',
    { type: 'button', class: 'secondary', id: 'redrive-cancel', hidden: true },
    'Cancel move task',
  );
  /** @type {string | undefined} */
  let handle;
  const showTask = async () => {
    const { Results: tasks = [] } = await sqs('ListMessageMoveTasks', {
      SourceArn: queue.arn,
      MaxResults: 1,
    });
    const task = tasks[0];
    if (!task) return;
    const toMove = task.ApproximateNumberOfMessagesToMove ?? 0;
    progress.max = Math.max(1, toMove);
    progress.value = task.ApproximateNumberOfMessagesMoved ?? 0;
    progressText.textContent = `${task.Status}: ${task.ApproximateNumberOfMessagesMoved} of ${toMove} moved${task.FailureReason ? ` (${task.FailureReason})` : ''}`;
    handle = task.TaskHandle;
    cancel.hidden = !handle;
  };
  cancel.addEventListener('click', () =>
    attempt(async () => {
      await sqs('CancelMessageMoveTask', { TaskHandle: handle });
      await showTask();
    }, 'Move task cancelled.'),
  );
  /** @param {SubmitEvent} event */
  const start = (event) => {
    event.preventDefault();
    /** @type {StartMessageMoveTaskRequest} */
    const input = { SourceArn: queue.arn };
    if (destination.value) input.DestinationArn = destination.value;
    if (rate.value !== '') input.MaxNumberOfMessagesPerSecond = Number(rate.value);
    return attempt(async () => {
      await sqs('StartMessageMoveTask', input);
      await showTask();
    }, 'Move task started.');
  };
  every(1000, showTask);
  queueMicrotask(() => quietly(showTask));
  return h(
    'form',
    { id: 'redrive-form', onsubmit: start },
    h('h2', {}, 'Dead-letter queue redrive'),
    field('Destination', destination),
    field('Messages per second', rate),
    h('div', {}, h('button', { type: 'submit' }, 'Start DLQ redrive'), cancel),
    h('p', { class: 'progress' }, h('label', { class: 'inline' }, 'Progress', progress), ' ', progressText),
  );
}
