// @ts-check
/** The page on screen: the element it draws into, and its timers, stopped when the route changes. */
import { byId } from './dom.js';
import { quietly } from './status.js';

export const main = byId('main');
/** @type {ReturnType<typeof setInterval>[]} */
let timers = [];

/**
 * Runs `work` every `ms` while the page is on screen, as background work (see `quietly`).
 * @param {number} ms
 * @param {() => unknown} work
 */
export function every(ms, work) {
  timers.push(setInterval(() => quietly(work), ms));
}

/** Stops the timers of the page that was on screen. */
export function stopTimers() {
  for (const timer of timers) clearInterval(timer);
  timers = [];
}
