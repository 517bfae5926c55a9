// @ts-check
/**
 * The alarms page (#/alarms): every watched dead-letter queue's alarm, its history, and its silence.
 *
 * @import { AlarmState } from '../../src/core/dlq-alarms.ts'
 * @import { AlarmsAnswer } from '../../src/server/console-api.ts'
 */
import { api, apiPost } from '../shared/api.js';
import { h } from '../shared/dom.js';
import { formatTime, plural } from '../shared/format.js';
import { countAlarms } from '../shared/header.js';
import { queueLink } from '../shared/queue-view.js';
import { every, main } from '../shared/screen.js';
import { attempt } from '../shared/status.js';

/** Every watched dead-letter queue's alarm: its state, its history, and a control to silence it. */
export async function alarmsPage() {
  const list = h('div', { id: 'alarms' });
  /** Which histories are open, by queue, kept across redraws. */
  const closed = new Set();
  /**
   * @param {AlarmState} alarm
   * @param {boolean} silenced
   */
  const setSilence = (alarm, silenced) =>
    attempt(
      async () => {
        await apiPost('/api/alarms/silence', { queue: alarm.queue, silenced });
        await load();
      },
      `${silenced ? 'Silenced' : 'Unsilenced'} the alarm of ${alarm.queue}.`,
    );
  /** @param {AlarmState} alarm */
  const silenceLine = (alarm) => {
    const by = alarm.silence?.by ? ` by ${alarm.silence.by}` : '';
    const when = alarm.silence ? ` at ${formatTime(alarm.silence.at)}` : '';
    if (alarm.silenced)
      return h(
        'p',
        { class: 'silence' },
        `Silenced${alarm.silence ? `${by}${when}` : ' in the config file'}: no log warnings or webhooks. `,
        h(
          'button',
          { type: 'button', class: 'secondary small', onclick: () => setSilence(alarm, false) },
          'Unsilence',
        ),
      );
    return h(
      'p',
      { class: 'silence' },
      `Notifies: log warnings and webhooks${alarm.silence ? ` (unsilenced${by}${when})` : ''}. `,
      h(
        'button',
        { type: 'button', class: 'secondary small', onclick: () => setSilence(alarm, true) },
        'Silence',
      ),
    );
  };
  /** @param {AlarmState} alarm */
  const card = (alarm) => {
    const history = h(
      'details',
      {
        open: !closed.has(alarm.queue),
        ontoggle: (event) =>
          event.currentTarget.open ? closed.delete(alarm.queue) : closed.add(alarm.queue),
      },
      h('summary', {}, `History (${alarm.history.length})`),
      alarm.history.length === 0
        ? h('p', { class: 'muted' }, 'Nothing has happened yet.')
        : h(
            'table',
            { class: 'history' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Time', 'Event', 'What'].map((t) => h('th', { scope: 'col' }, t)),
              ),
            ),
            h(
              'tbody',
              {},
              [...alarm.history]
                .reverse()
                .map((n) =>
                  h(
                    'tr',
                    { 'data-event': n.event },
                    h('td', { class: 'time' }, formatTime(n.at)),
                    h('td', {}, n.event),
                    h('td', {}, n.message),
                  ),
                ),
            ),
          ),
    );
    return h(
      'article',
      { class: `alarm ${alarm.state === 'ALARM' ? 'raised' : ''}`, 'data-alarm': alarm.queue },
      h(
        'h2',
        {},
        queueLink(alarm.queue),
        ' ',
        h('span', { class: `badge ${alarm.state === 'ALARM' ? 'alarm' : 'ok'}` }, alarm.state),
      ),
      h(
        'p',
        {},
        `${plural(alarm.visible, 'message')} visible, threshold ${alarm.threshold}`,
        alarm.since ? `; raised ${formatTime(alarm.since)}` : '',
        '.',
      ),
      silenceLine(alarm),
      history,
    );
  };
  /** @type {string | undefined} */
  let shown;
  const load = async () => {
    /** @type {AlarmsAnswer} */
    const { alarms } = await api('/alarms');
    await countAlarms();
    // Redrawn only when something changed, so that a button keeps its focus between polls.
    const text = JSON.stringify(alarms);
    if (text === shown) return;
    shown = text;
    list.replaceChildren(
      ...(alarms.length === 0
        ? [
            h(
              'p',
              { class: 'muted' },
              'No dead-letter queue is watched yet: a queue is, as soon as another queue’s RedrivePolicy names it.',
            ),
          ]
        : alarms.map(card)),
    );
  };
  main.replaceChildren(
    h('h1', {}, 'Alarms'),
    h(
      'p',
      { class: 'muted' },
      'Every dead-letter queue is watched. Its alarm is raised when it holds more visible messages than its threshold, speaks again each time the count doubles, and is resolved when it falls back; a silenced alarm keeps its state and history but sends no log warning or webhook.',
    ),
    list,
  );
  await load();
  every(2000, load);
}
