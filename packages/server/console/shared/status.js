// @ts-check
/** The status area under the header: what the last action did, or what background work failed at. */
import { byId, h } from './dom.js';

const statusLine = byId('status');
/** Counts what the status area said, so that an action can tell whether its work said something. */
let statusSaid = 0;
/** Whether the status area shows the failure of background work (a refresh), not an action's outcome. */
let statusFromBackground = false;

/** @typedef {'success' | 'info' | 'warning' | 'error'} StatusKind */

/**
 * The status area under the header says what the last action did, as `kind`: success, info, warning (done
 * in part) or error. It stays until the next action replaces or clears it, and a Dismiss button clears it.
 * @param {string} message
 * @param {StatusKind} [kind]
 */
export function say(message, kind = 'success') {
  statusSaid += 1;
  statusFromBackground = false;
  if (message === '') {
    statusLine.className = '';
    statusLine.replaceChildren();
    return;
  }
  statusLine.className = kind;
  statusLine.replaceChildren(
    h('span', { class: 'status-text' }, message),
    h('button', { type: 'button', class: 'dismiss', 'aria-label': 'Dismiss', onclick: () => say('') }, '×'),
  );
}

/** @param {unknown} error */
const messageOf = (error) => (error instanceof Error ? error.message : String(error));

/**
 * Runs an action of a button or form. What it says (`done`, or what `work` said itself, or its failure)
 * replaces what the status area said before; an action that says nothing clears it, so that an outcome
 * never outlives the next action.
 * @param {() => unknown} work
 * @param {string} [done]
 */
export async function attempt(work, done) {
  const before = statusSaid;
  try {
    await work();
    if (done) say(done);
    else if (statusSaid === before) say('');
  } catch (error) {
    say(messageOf(error), 'error');
  }
}

/**
 * Runs background work (a page's refresh, the alarm count): a failure shows in the status area, and goes once
 * the work succeeds again, but what an action said stays.
 * @param {() => unknown} work
 */
export async function quietly(work) {
  try {
    await work();
    if (statusFromBackground) say('');
  } catch (error) {
    say(messageOf(error), 'error');
    statusFromBackground = true;
  }
}
