// @ts-check
/**
 * How a queue shows wherever it appears: a link to its page, its badges, whether it holds messages.
 *
 * @import { QueueOverview } from '../../src/server/console-api.ts'
 */
import { h } from './dom.js';

/** @param {string} name */
export const queueLink = (name) => h('a', { href: `#/queue/${encodeURIComponent(name)}` }, name);

/** @param {QueueOverview} queue */
export function badges(queue) {
  return [
    queue.fifo ? h('span', { class: 'badge' }, 'FIFO') : '',
    queue.deadLetterSources.length > 0 ? h('span', { class: 'badge dlq' }, 'DLQ') : '',
    queue.alarm?.state === 'ALARM'
      ? h('span', { class: 'badge alarm' }, queue.alarm.silenced ? 'ALARM (silenced)' : 'ALARM')
      : '',
  ];
}

/** @param {QueueOverview} q */
export const holdsMessages = (q) => q.visible + q.notVisible + q.delayed > 0;
