// @ts-check
/**
 * A queue's page (#/queue/NAME): its links and alarm first, then what people come for (send, poll, purge,
 * redrive; in queue-messages.js and queue-redrive.js), its figures and charts, its attributes and tags
 * (queue-settings.js).
 *
 * @import { AlarmState } from '../../src/core/dlq-alarms.ts'
 * @import { AlarmsAnswer, HistoryAnswer, QueueOverview, RecentRates } from '../../src/server/console-api.ts'
 * @import { HistoryRange } from '../../src/core/queue-history.ts'
 * @import { QueueSample } from '../../src/store/contract.ts'
 * @import { EventSourceMappingsAnswer } from '../../src/core/event-source/event-source-mappings.ts'
 */
import { api, loadOverview, queueNames, queueUrl, serverNow } from '../shared/api.js';
import { lineChart } from '../shared/charts.js';
import { h } from '../shared/dom.js';
import { formatAge, formatTime, plural } from '../shared/format.js';
import { badges, holdsMessages, queueLink } from '../shared/queue-view.js';
import { every, main } from '../shared/screen.js';
import { attempt } from '../shared/status.js';
import { messagesPanel } from './queue-messages.js';
import { redriveForm } from './queue-redrive.js';
import { attributesSection, tagsSection } from './queue-settings.js';

/** @type {Record<HistoryRange, string>} */
const RANGES = { '1h': 'hour', '24h': '24 hours' };

/** @param {string} name */
export async function queuePage(name) {
  const url = queueUrl(name);
  const overviewOf = async () => {
    const data = await loadOverview({ queue: name });
    return { data, queue: data.queues[0] };
  };
  const first = await overviewOf();
  if (!first.queue) {
    main.replaceChildren(
      h('h1', {}, name),
      h('p', {}, 'No such queue. ', h('a', { href: '#/' }, 'Back to the queues')),
    );
    return;
  }
  const queue = first.queue;
  const heading = h('h1', {}, name, ' ', badges(queue));
  const banners = h('div', { id: 'banners' });
  const links = h('p', { id: 'links' });
  const metrics = metricsSection(queue.deadLetterSources.length > 0);
  const charts = h('div', { id: 'charts' });
  const mappingsSection = h('section', { id: 'event-source-mappings', hidden: '' });
  /** @type {HistoryRange} */
  let range = '1h';

  const refresh = async () => {
    const { queue: now } = await overviewOf();
    if (!now) return;
    heading.replaceChildren(name, ' ', ...badges(now));
    links.replaceChildren(
      h(
        'span',
        {},
        'URL ',
        h('code', { class: 'url' }, url),
        now.deadLetterQueue ? [' · Dead-letter queue: ', queueLink(now.deadLetterQueue)] : '',
        now.deadLetterSources.length > 0
          ? [
              ' · Dead-letter queue of: ',
              now.deadLetterSources.flatMap((source, i) => [i ? ', ' : '', queueLink(source)]),
            ]
          : '',
      ),
    );
    const alarm = now.deadLetterSources.length > 0 ? await alarmOf(name) : undefined;
    banners.replaceChildren(...alarmBanners(alarm));
    metrics.showCounts(now, alarm);
    /** @type {EventSourceMappingsAnswer} */
    const { mappings } = await api('/api/event-source-mappings');
    showMappings(
      mappingsSection,
      mappings.filter((mapping) => mapping.EventSourceArn === now.arn),
    );
  };

  const renderCharts = async () => {
    /** @type {HistoryAnswer} */
    const history = await api(`/api/history?queue=${encodeURIComponent(name)}&range=${range}`);
    metrics.showRates(history.rates);
    /**
     * @param {(sample: QueueSample) => number} count
     * @returns {(sample: QueueSample) => number}
     */
    const perSecond = (count) => (sample) => count(sample) / (sample.periodMs / 1000);
    charts.replaceChildren(
      lineChart(`Depth, last ${RANGES[range]}`, history.samples, [
        { label: 'visible', color: '#0b5cad', value: (x) => x.visible },
        { label: 'in flight', color: '#9a5b00', value: (x) => x.notVisible },
        { label: 'delayed', color: '#6b4fbb', value: (x) => x.delayed },
      ]),
      lineChart(`Sent, received and deleted per second, last ${RANGES[range]}`, history.samples, [
        { label: 'sent', color: '#17733a', value: perSecond((x) => x.sent) },
        { label: 'received', color: '#0b5cad', value: perSecond((x) => x.received) },
        { label: 'deleted', color: '#b42318', value: perSecond((x) => x.deleted) },
      ]),
    );
  };
  /** @param {HistoryRange} value */
  const rangeButton = (value) =>
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        'aria-pressed': String(value === range),
        onclick: async (event) => {
          range = value;
          for (const b of event.currentTarget.parentElement?.querySelectorAll('button') ?? [])
            b.setAttribute('aria-pressed', String(b === event.currentTarget));
          await attempt(renderCharts);
        },
      },
      `Last ${RANGES[value]}`,
    );

  const messages = messagesPanel(name, url, queue, refresh);
  main.replaceChildren(
    h('p', { class: 'crumbs' }, h('a', { href: '#/' }, '← Queues')),
    heading,
    links,
    banners,
    // What people come to a queue for comes first: send, poll, purge, redrive. Figures and settings follow.
    h(
      'section',
      { id: 'actions' },
      h(
        'div',
        { class: 'columns' },
        messages.sendForm,
        h(
          'div',
          {},
          messages.pollForm,
          queue.deadLetterSources.length > 0 ? redriveForm(name, queue, await queueNames()) : '',
        ),
      ),
      messages.results,
    ),
    metrics.section,
    mappingsSection,
    h(
      'section',
      { id: 'charts-section' },
      h('h2', {}, 'Charts'),
      h(
        'div',
        { role: 'group', 'aria-label': 'Chart range', class: 'range' },
        rangeButton('1h'),
        rangeButton('24h'),
      ),
      charts,
    ),
    await attributesSection(url, queue.fifo),
    await tagsSection(url),
  );
  await refresh();
  await renderCharts();
  every(2000, refresh);
  every(10_000, renderCharts);
}

/**
 * The Lambda event source mappings that consume the queue (docs/guide/lambda.md); hidden without any.
 * @param {HTMLElement} section
 * @param {EventSourceMappingsAnswer['mappings']} mappings
 */
function showMappings(section, mappings) {
  section.hidden = mappings.length === 0;
  section.replaceChildren(
    h('h2', {}, 'Lambda event source mappings'),
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...['Function', 'State', 'Batch size', 'Pollers', 'UUID'].map((title) => h('th', {}, title)),
        ),
      ),
      h(
        'tbody',
        {},
        ...mappings.map((mapping) =>
          h(
            'tr',
            {},
            h('td', {}, mapping.FunctionArn.replace(/^.*:function:/, '')),
            h('td', { title: mapping.StateTransitionReason }, mapping.State),
            h('td', {}, String(mapping.BatchSize)),
            h('td', {}, String(mapping.Pollers)),
            h('td', {}, h('code', {}, mapping.UUID)),
          ),
        ),
      ),
    ),
  );
}

/** @param {string} name */
async function alarmOf(name) {
  /** @type {AlarmsAnswer} */
  const { alarms } = await api('/alarms');
  return alarms.find((a) => a.queue === name);
}

/**
 * The alarm of a DLQ and the retention warning, above its page's actions.
 * @param {AlarmState | undefined} alarm
 */
function alarmBanners(alarm) {
  const parts = [];
  if (alarm?.state === 'ALARM') {
    parts.push(
      h(
        'div',
        { class: 'banner alarm', role: 'alert', id: 'alarm-banner' },
        h(
          'strong',
          {},
          `Alarm: ${plural(alarm.visible, 'message')} in this dead-letter queue (threshold ${alarm.threshold})`,
        ),
        alarm.since ? ` since ${formatTime(alarm.since)}` : '',
        alarm.silenced ? ' — silenced' : '',
        ' · ',
        h('a', { href: '#/alarms' }, 'Alarms page'),
      ),
    );
  }
  const last = alarm?.history.at(-1);
  if (
    alarm?.state === 'ALARM' &&
    last?.nextExpiryAt !== undefined &&
    last.nextExpiryAt - serverNow() <= 24 * 3600 * 1000
  ) {
    const hours = Math.max(0, (last.nextExpiryAt - serverNow()) / 3_600_000).toFixed(1);
    parts.push(
      h(
        'div',
        { class: 'banner warning', id: 'retention-warning' },
        `Retention: the oldest message here expires in ${hours} h (${formatTime(last.nextExpiryAt)}) and is then lost. Redrive it or raise MessageRetentionPeriod.`,
      ),
    );
  }
  return parts;
}

/**
 * The queue's figures: counts now (overview), rates over the last minute (history), and a DLQ's alarm.
 * @param {boolean} isDeadLetterQueue
 */
function metricsSection(isDeadLetterQueue) {
  /** @param {string} [id] */
  const value = (id) => h('dd', { class: 'value', id }, '–');
  /** Each tile's value, by the tile's `data-metric`. */
  const tiles = {
    visible: value('count-visible'),
    'in-flight': value('count-in-flight'),
    delayed: value(),
    oldest: value(),
    sent: value(),
    received: value(),
    deleted: value(),
    'empty-receives': value(),
    alarm: value(),
  };
  /**
   * @param {keyof typeof tiles} key
   * @param {string} label
   */
  const tile = (key, label) =>
    h('div', { class: 'tile', 'data-metric': key }, h('dt', {}, label), tiles[key]);
  const rateNote = h('span', {}, 'Rates appear after the first sample (one every 10 s).');
  const history = h('div', { id: 'alarm-history-box' });
  const section = h(
    'section',
    { id: 'metrics' },
    h('h2', {}, 'Metrics'),
    h(
      'dl',
      { class: 'tiles' },
      tile('visible', 'Visible'),
      tile('in-flight', 'In flight'),
      tile('delayed', 'Delayed'),
      tile('oldest', 'Oldest'),
      tile('sent', 'Sent /s'),
      tile('received', 'Received /s'),
      tile('deleted', 'Deleted /s'),
      tile('empty-receives', 'Empty receives /s'),
      isDeadLetterQueue ? tile('alarm', 'DLQ alarm') : '',
    ),
    h(
      'p',
      { class: 'muted small' },
      rateNote,
      ' Prometheus text of every queue: ',
      h('a', { href: '/metrics', target: '_blank', rel: 'noopener' }, '/metrics ↗'),
    ),
    history,
  );
  return {
    section,
    /**
     * @param {QueueOverview} queue
     * @param {AlarmState | undefined} alarm
     */
    showCounts(queue, alarm) {
      tiles.visible.textContent = String(queue.visible);
      tiles['in-flight'].textContent = String(queue.notVisible);
      tiles.delayed.textContent = String(queue.delayed);
      tiles.oldest.textContent = holdsMessages(queue) ? formatAge(queue.oldestAgeSeconds) : '–';
      if (alarm) {
        tiles.alarm.textContent = `${alarm.state}${alarm.silenced ? ' (silenced)' : ''}`;
        tiles.alarm.className = `value ${alarm.state === 'ALARM' ? 'bad' : ''}`;
      }
      // Redrawn only when it changed, so that an opened list stays open.
      const count = alarm?.history.length ?? 0;
      if (history.dataset.count !== String(count)) {
        history.dataset.count = String(count);
        history.replaceChildren(alarm && count > 0 ? alarmHistoryList(alarm) : '');
      }
    },
    /** @param {RecentRates | undefined} rates */
    showRates(rates) {
      if (!rates) return;
      for (const key of /** @type {const} */ (['sent', 'received', 'deleted']))
        tiles[key].textContent = rates[key].toFixed(2);
      tiles['empty-receives'].textContent = rates.emptyReceives.toFixed(2);
      rateNote.textContent = `Rates: per second over the last ${Math.round(rates.windowSeconds)} s of samples.`;
    },
  };
}

/** @param {AlarmState} alarm */
function alarmHistoryList(alarm) {
  return h(
    'details',
    { id: 'alarm-history' },
    h('summary', {}, `Alarm history (${alarm.history.length})`),
    h(
      'ul',
      {},
      [...alarm.history].reverse().map((n) => h('li', {}, `${formatTime(n.at)} ${n.event}: ${n.message}`)),
    ),
  );
}
