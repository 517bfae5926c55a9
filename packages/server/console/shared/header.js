// @ts-check
/**
 * The header's Alarms link, which counts the alarms raised and not silenced whatever page is on screen.
 *
 * @import { AlarmsAnswer } from '../../src/server/console-api.ts'
 */
import { api } from './api.js';
import { byId } from './dom.js';

const alarmsLink = byId('nav-alarms');

/** The header's Alarms link counts the alarms raised and not silenced. */
export async function countAlarms() {
  /** @type {AlarmsAnswer} */
  const { alarms } = await api('/alarms');
  const raised = alarms.filter((alarm) => alarm.state === 'ALARM' && !alarm.silenced).length;
  alarmsLink.textContent = raised > 0 ? `Alarms (${raised})` : 'Alarms';
  alarmsLink.classList.toggle('raised', raised > 0);
}
