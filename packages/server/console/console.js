// The Sluice console: plain JavaScript over the server's own SQS JSON API (X-Amz-Target requests) and its
// /api/* and /alarms pages, same origin. No build step: this file is served as it is committed. With access
// keys configured, the session cookie of the sign-in form authenticates every one of these requests.

const main = document.getElementById('main');
const statusLine = document.getElementById('status');
const alarmsLink = document.getElementById('nav-alarms');
/** Timers of the page on screen, stopped when the route changes. */
let timers = [];

// ---- Talking to the server -------------------------------------------------------------------------

/** An error the server answered, with its AWS error code (`AccessDenied`, `InvalidParameterValue`…). */
class ServerError extends Error {
  constructor(what, code, detail) {
    super(`${what}: ${code}: ${detail}`);
    this.code = code;
    this.detail = detail;
  }
}

/** The answer's JSON, or a ServerError naming the error code of a refusal. */
async function answerOf(what, response) {
  const text = await response.text();
  let output = {};
  try {
    output = text ? JSON.parse(text) : {};
  } catch {}
  if (response.ok) return output;
  if (response.status === 401) signInAgain();
  const code = String(output.__type ?? `HTTP ${response.status}`)
    .split('#')
    .pop();
  if (code === 'MissingAuthenticationTokenException') signInAgain();
  throw new ServerError(what, code, output.message ?? output.Message ?? output.error ?? '');
}

async function sqs(action, input = {}) {
  const response = await fetch('/', {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` },
    body: JSON.stringify(input),
  });
  return answerOf(action, response);
}

async function api(path) {
  return answerOf(path, await fetch(path));
}

async function apiPost(path, input) {
  const response = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(input),
  });
  return answerOf(path, response);
}

/** The session ended (expired, signed out elsewhere, server restarted): the server shows the sign-in form. */
function signInAgain() {
  location.reload();
}

/** Counts what the status area said, so that an action can tell whether its work said something. */
let statusSaid = 0;
/** Whether the status area shows the failure of background work (a refresh), not an action's outcome. */
let statusFromBackground = false;

/**
 * The status area under the header says what the last action did, as `kind`: success, info, warning (done
 * in part) or error. It stays until the next action replaces or clears it, and a Dismiss button clears it.
 */
function say(message, kind = 'success') {
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

/**
 * Runs an action of a button or form. What it says (`done`, or what `work` said itself, or its failure)
 * replaces what the status area said before; an action that says nothing clears it, so that an outcome
 * never outlives the next action.
 */
async function attempt(work, done) {
  const before = statusSaid;
  try {
    await work();
    if (done) say(done);
    else if (statusSaid === before) say('');
  } catch (error) {
    say(error.message, 'error');
  }
}

/**
 * Runs background work (a page's refresh, the alarm count): a failure shows in the status area, and goes once
 * the work succeeds again, but what an action said stays.
 */
async function quietly(work) {
  try {
    await work();
    if (statusFromBackground) say('');
  } catch (error) {
    say(error.message, 'error');
    statusFromBackground = true;
  }
}

let account = '000000000000';
const queueUrl = (name) => `${location.origin}/${account}/${name}`;
const queueLink = (name) => h('a', { href: `#/queue/${encodeURIComponent(name)}` }, name);
/** Every queue's ARN is this prefix and its name; /api/overview says what it is. */
let arnPrefix = `arn:aws:sqs:us-east-1:${account}:`;
/** The server's clock less this browser's, as of the last overview (a server may run on another clock). */
let serverClockOffset = 0;
const serverNow = () => Date.now() + serverClockOffset;

/** The overview's answer for one query, remembering the account, ARN prefix and time it reports. */
async function loadOverview(query) {
  const data = await api(`/api/overview?${new URLSearchParams(query)}`);
  account = data.accountId;
  arnPrefix = data.queueArnPrefix;
  serverClockOffset = data.now - Date.now();
  if (data.signedInAs) {
    document.getElementById('signed-in-as').textContent = `Signed in as ${data.signedInAs}`;
    document.getElementById('sign-out').hidden = false;
  }
  return data;
}

/** Names of the queues (ListQueues answers up to 1,000), for pickers, which must not depend on the overview's cap. */
async function queueNames() {
  const { QueueUrls: urls = [] } = await sqs('ListQueues', {});
  return urls.map((url) => decodeURIComponent(url.split('/').pop())).sort();
}

/** The header's Alarms link counts the alarms raised and not silenced. */
async function countAlarms() {
  const { alarms } = await api('/alarms');
  const raised = alarms.filter((alarm) => alarm.state === 'ALARM' && !alarm.silenced).length;
  alarmsLink.textContent = raised > 0 ? `Alarms (${raised})` : 'Alarms';
  alarmsLink.classList.toggle('raised', raised > 0);
}

// ---- DOM helpers -----------------------------------------------------------------------------------

function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === false) continue;
    if (key.startsWith('on')) element.addEventListener(key.slice(2), value);
    else if (key === 'class') element.className = value;
    else if (key in element && key !== 'list') element[key] = value;
    else element.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children.flat(Number.POSITIVE_INFINITY)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

const SVG = 'http://www.w3.org/2000/svg';
function s(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  for (const child of children) element.append(child);
  return element;
}

function field(labelText, input) {
  return h('label', {}, labelText, input);
}

/** "1 message", "3 messages". */
function plural(count, noun) {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function formatAge(seconds) {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} d`;
}

function formatTime(ms) {
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

/** A yes/no question in place of a destructive button; `yes` and `no` are [text, accessible name]. */
function confirmation(question, yes, no, onYes, onNo) {
  return h(
    'span',
    { class: 'confirm' },
    question,
    ' ',
    h('button', { type: 'button', class: 'danger', 'aria-label': yes[1], onclick: onYes }, yes[0]),
    h('button', { type: 'button', class: 'secondary', 'aria-label': no[1], onclick: onNo }, no[0]),
  );
}

// ---- Charts ----------------------------------------------------------------------------------------

/** A queue's visible messages over its recent life (the overview's `sparkline`), as a small SVG. */
function sparkline(line, name) {
  const width = 120;
  const height = 28;
  const values = line.visible;
  const max = Math.max(1, ...values);
  const x = (i) => (values.length > 1 ? 2 + (i / (values.length - 1)) * (width - 4) : width - 2);
  const y = (v) => height - 3 - (v / max) * (height - 6);
  const points = values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`);
  const span = line.spanSeconds > 0 ? `over the last ${formatAge(line.spanSeconds)}` : 'now';
  const label = `visible messages of ${name} ${span}: ${values[0]} → ${values.at(-1)}, highest ${max}`;
  const last = values.length - 1;
  return s(
    'svg',
    {
      class: 'sparkline',
      width,
      height,
      viewBox: `0 0 ${width} ${height}`,
      role: 'img',
      'aria-label': label,
    },
    s('title', {}, label),
    s('polygon', {
      points: [`${x(0).toFixed(1)},${y(0)}`, ...points, `${x(last).toFixed(1)},${y(0)}`].join(' '),
      fill: '#dbe8f6',
    }),
    s('polyline', { points: points.join(' '), fill: 'none', stroke: '#0b5cad', 'stroke-width': 1.5 }),
    s('circle', { cx: x(last).toFixed(1), cy: y(values[last]).toFixed(1), r: 2, fill: '#0b5cad' }),
  );
}

/** A line chart of several series over the samples' times, as inline SVG. */
function lineChart(title, samples, series) {
  const width = 520;
  const height = 170;
  const pad = { left: 44, right: 8, top: 10, bottom: 22 };
  // Rates below 1 a second get their own scale; an all-zero chart keeps 0 to 1.
  const max = Math.max(0, ...series.flatMap((line) => samples.map(line.value))) || 1;
  const t0 = samples[0]?.at ?? 0;
  const t1 = samples.at(-1)?.at ?? 1;
  const x = (t) => pad.left + ((t - t0) / Math.max(1, t1 - t0)) * (width - pad.left - pad.right);
  const y = (v) => height - pad.bottom - (v / max) * (height - pad.top - pad.bottom);
  const top = Number.isInteger(max) ? String(max) : max.toFixed(2);
  const svg = s(
    'svg',
    { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': title },
    s('title', {}, title),
    s('line', { x1: pad.left, y1: y(0), x2: width - pad.right, y2: y(0), stroke: '#a9b4c2' }),
    s('text', { x: 4, y: y(max) + 4, 'font-size': 11, fill: '#5b6675' }, top),
    s('text', { x: 4, y: y(0), 'font-size': 11, fill: '#5b6675' }, '0'),
  );
  if (samples.length > 0) {
    svg.append(
      s('text', { x: pad.left, y: height - 6, 'font-size': 11, fill: '#5b6675' }, formatTime(t0).slice(11)),
      s(
        'text',
        { x: width - pad.right - 64, y: height - 6, 'font-size': 11, fill: '#5b6675' },
        formatTime(t1).slice(11),
      ),
    );
  }
  for (const line of series) {
    const points = samples.map((sample) => `${x(sample.at).toFixed(1)},${y(line.value(sample)).toFixed(1)}`);
    if (points.length > 0)
      svg.append(
        s('polyline', { points: points.join(' '), fill: 'none', stroke: line.color, 'stroke-width': 1.8 }),
      );
  }
  return h(
    'figure',
    { class: 'chart' },
    h('figcaption', {}, title),
    svg,
    h(
      'div',
      { class: 'legend' },
      series.map((line) => h('span', { style: `color:${line.color}` }, `■ ${line.label}`)),
    ),
    samples.length === 0 ? h('p', { class: 'muted' }, 'No samples yet (one every 10 s).') : '',
  );
}

// ---- Queue list ------------------------------------------------------------------------------------

function badges(queue) {
  return [
    queue.fifo ? h('span', { class: 'badge' }, 'FIFO') : '',
    queue.deadLetterSources.length > 0 ? h('span', { class: 'badge dlq' }, 'DLQ') : '',
    queue.alarm?.state === 'ALARM'
      ? h('span', { class: 'badge alarm' }, queue.alarm.silenced ? 'ALARM (silenced)' : 'ALARM')
      : '',
  ];
}

const holdsMessages = (q) => q.visible + q.notVisible + q.delayed > 0;

async function queueListPage() {
  const filter = h('input', { type: 'search', id: 'filter', placeholder: 'part of a name' });
  const tbody = h('tbody');
  const cut = h('p', { id: 'overview-cut', class: 'muted', hidden: true });
  let queues = [];
  /** The queue whose deletion waits for a yes; the list is not redrawn under the question. */
  let confirming;

  const deleteQueue = (q) =>
    attempt(async () => {
      confirming = undefined;
      await sqs('DeleteQueue', { QueueUrl: queueUrl(q.name) });
      await load();
    }, `Deleted queue ${q.name}.`);
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
          tbody.querySelector('.confirm button')?.focus();
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
  const create = async (event) => {
    event.preventDefault();
    const queueName = name.value.trim();
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

// ---- Queue page ------------------------------------------------------------------------------------

const RANGES = { '1h': 'hour', '24h': '24 hours' };

async function queuePage(name) {
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
  };

  const renderCharts = async () => {
    const history = await api(`/api/history?queue=${encodeURIComponent(name)}&range=${range}`);
    metrics.showRates(history.rates);
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
  const rangeButton = (value) =>
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        'aria-pressed': String(value === range),
        onclick: async (event) => {
          range = value;
          for (const b of event.target.parentElement.querySelectorAll('button'))
            b.setAttribute('aria-pressed', String(b === event.target));
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

async function alarmOf(name) {
  const { alarms } = await api('/alarms');
  return alarms.find((a) => a.queue === name);
}

/** The alarm of a DLQ and the retention warning, above its page's actions. */
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

/** The queue's figures: counts now (overview), rates over the last minute (history), and a DLQ's alarm. */
function metricsSection(isDeadLetterQueue) {
  const tiles = {};
  const tile = (key, label, id) => {
    tiles[key] = h('dd', { class: 'value', id }, '–');
    return h('div', { class: 'tile', 'data-metric': key }, h('dt', {}, label), tiles[key]);
  };
  const rateNote = h('span', {}, 'Rates appear after the first sample (one every 10 s).');
  const history = h('div', { id: 'alarm-history-box' });
  const section = h(
    'section',
    { id: 'metrics' },
    h('h2', {}, 'Metrics'),
    h(
      'dl',
      { class: 'tiles' },
      tile('visible', 'Visible', 'count-visible'),
      tile('in-flight', 'In flight', 'count-in-flight'),
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
    showCounts(queue, alarm) {
      tiles.visible.textContent = queue.visible;
      tiles['in-flight'].textContent = queue.notVisible;
      tiles.delayed.textContent = queue.delayed;
      tiles.oldest.textContent = holdsMessages(queue) ? formatAge(queue.oldestAgeSeconds) : '–';
      if (alarm) {
        tiles.alarm.textContent = `${alarm.state}${alarm.silenced ? ' (silenced)' : ''}`;
        tiles.alarm.className = `value ${alarm.state === 'ALARM' ? 'bad' : ''}`;
      }
      // Redrawn only when it changed, so that an opened list stays open.
      const count = alarm?.history.length ?? 0;
      if (history.dataset.count !== String(count)) {
        history.dataset.count = String(count);
        history.replaceChildren(count > 0 ? alarmHistoryList(alarm) : '');
      }
    },
    showRates(rates) {
      if (!rates) return;
      for (const key of ['sent', 'received', 'deleted']) tiles[key].textContent = rates[key].toFixed(2);
      tiles['empty-receives'].textContent = rates.emptyReceives.toFixed(2);
      rateNote.textContent = `Rates: per second over the last ${Math.round(rates.windowSeconds)} s of samples.`;
    },
  };
}

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

/** Send, poll and purge; `refresh` redraws the page's counts after each. */
function messagesPanel(name, url, queue, refresh) {
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
  const send = async (event) => {
    event.preventDefault();
    const input = { QueueUrl: url, MessageBody: body.value };
    if (!fifoQueue && delay.value !== '') input.DelaySeconds = Number(delay.value);
    if (group.value) input.MessageGroupId = group.value;
    if (dedup.value) input.MessageDeduplicationId = dedup.value;
    const attributes = {};
    for (const row of attributeRows.children) {
      const key = row.querySelector('.attr-name').value.trim();
      if (!key) continue;
      const type = row.querySelector('.attr-type').value;
      const value = row.querySelector('.attr-value').value;
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
    purgeBox.querySelector('button').focus();
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

function prettyBody(body) {
  try {
    const parsed = JSON.parse(body);
    if (parsed !== null && typeof parsed === 'object') return JSON.stringify(parsed, null, 2);
  } catch {}
  return body;
}

/**
 * A received message with its Delete button; `received` says where from and when its handle lapses, and
 * refreshes the page's counts.
 */
function renderMessage(m, received) {
  const attributes = m.Attributes ?? {};
  const deleteButton = h('button', { type: 'button', class: 'secondary' }, 'Delete');
  const outcome = h('div', { class: 'outcome', role: 'status' });
  const box = h(
    'article',
    { class: 'message', 'data-message-id': m.MessageId },
    h('pre', { class: 'body' }, prettyBody(m.Body)),
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

/** Why a refused delete leaves the message where it is. */
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

function redriveForm(name, queue, names) {
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
    progress.value = task.ApproximateNumberOfMessagesMoved;
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
  const start = (event) => {
    event.preventDefault();
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

async function attributesSection(url, fifoQueue) {
  const [{ Attributes: attributes = {} }, catalog] = await Promise.all([
    sqs('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['All'] }),
    api('/api/attributes'),
  ]);
  const applies = catalog.settable.filter((spec) => fifoQueue || !spec.fifoOnly);
  // Attributes set only by CreateQueue (FifoQueue) are shown with the computed ones, not as fields.
  const readOnly = [
    ...catalog.computed,
    ...applies.filter((spec) => spec.createOnly).map((spec) => spec.name),
  ];
  const textual = new Set(applies.filter((spec) => spec.kind === 'text').map((spec) => spec.name));
  const inputs = {};
  for (const spec of applies.filter((s) => !s.createOnly)) {
    const key = spec.name;
    const value = attributes[key] ?? '';
    const id = `attr-${key}`;
    if (spec.kind === 'choice')
      inputs[key] = h(
        'select',
        { id },
        spec.choices.map((c) => h('option', { value: c, selected: c === value }, c)),
      );
    else if (spec.kind === 'text') inputs[key] = h('textarea', { id, value: value ? prettyBody(value) : '' });
    else inputs[key] = h('input', { id, value, size: 12, title: `${spec.min} to ${spec.max}` });
  }
  const save = async (event) => {
    event.preventDefault();
    const changed = {};
    for (const [key, input] of Object.entries(inputs)) {
      const before =
        textual.has(key) && attributes[key] ? prettyBody(attributes[key]) : (attributes[key] ?? '');
      if (input.value !== before)
        changed[key] =
          textual.has(key) && input.value.trim() ? JSON.stringify(JSON.parse(input.value)) : input.value;
    }
    if (Object.keys(changed).length === 0) return say('No attribute changed.', 'info');
    await attempt(
      async () => {
        await sqs('SetQueueAttributes', { QueueUrl: url, Attributes: changed });
        Object.assign(attributes, changed);
      },
      `Saved ${Object.keys(changed).join(', ')}.`,
    );
  };
  return h(
    'section',
    { id: 'attributes' },
    h('h2', {}, 'Attributes'),
    h(
      'form',
      { id: 'attributes-form', onsubmit: save },
      Object.entries(inputs).map(([key, input]) => field(key, input)),
      h('div', {}, h('button', { type: 'submit' }, 'Save attributes')),
    ),
    h(
      'dl',
      { class: 'attrs' },
      readOnly
        .filter((k) => attributes[k] !== undefined)
        .flatMap((k) => [
          h('dt', {}, k),
          h('dd', {}, k.endsWith('Timestamp') ? formatTime(Number(attributes[k]) * 1000) : attributes[k]),
        ]),
    ),
  );
}

async function tagsSection(url) {
  const rows = h('tbody');
  const load = async () => {
    const { Tags: tags = {} } = await sqs('ListQueueTags', { QueueUrl: url });
    rows.replaceChildren(
      ...Object.entries(tags).map(([key, value]) =>
        h(
          'tr',
          {},
          h('td', {}, key),
          h('td', {}, value),
          h(
            'td',
            {},
            h(
              'button',
              {
                type: 'button',
                class: 'secondary',
                'aria-label': `Remove tag ${key}`,
                onclick: () =>
                  attempt(async () => {
                    await sqs('UntagQueue', { QueueUrl: url, TagKeys: [key] });
                    await load();
                  }, `Removed tag ${key}.`),
              },
              'Remove',
            ),
          ),
        ),
      ),
    );
  };
  const key = h('input', { id: 'tag-key', required: true });
  const value = h('input', { id: 'tag-value' });
  const add = (event) => {
    event.preventDefault();
    return attempt(async () => {
      await sqs('TagQueue', { QueueUrl: url, Tags: { [key.value]: value.value } });
      key.value = '';
      value.value = '';
      await load();
    }, 'Tag saved.');
  };
  await load();
  return h(
    'section',
    { id: 'tags' },
    h('h2', {}, 'Tags'),
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, h('th', {}, 'Key'), h('th', {}, 'Value'), h('th', {}, ''))),
      rows,
    ),
    h(
      'form',
      { id: 'tag-form', onsubmit: add },
      field('Key', key),
      field('Value', value),
      h('button', { type: 'submit' }, 'Add tag'),
    ),
  );
}

// ---- Alarms ----------------------------------------------------------------------------------------

/** Every watched dead-letter queue's alarm: its state, its history, and a control to silence it. */
async function alarmsPage() {
  const list = h('div', { id: 'alarms' });
  /** Which histories are open, by queue, kept across redraws. */
  const closed = new Set();
  const setSilence = (alarm, silenced) =>
    attempt(
      async () => {
        await apiPost('/api/alarms/silence', { queue: alarm.queue, silenced });
        await load();
      },
      `${silenced ? 'Silenced' : 'Unsilenced'} the alarm of ${alarm.queue}.`,
    );
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
  const card = (alarm) => {
    const history = h(
      'details',
      {
        open: !closed.has(alarm.queue),
        ontoggle: (event) => (event.target.open ? closed.delete(alarm.queue) : closed.add(alarm.queue)),
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
  let shown;
  const load = async () => {
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

function notFoundPage() {
  main.replaceChildren(
    h('h1', {}, 'No such page'),
    h('p', {}, `The console has no page ${location.hash}. `, h('a', { href: '#/' }, 'Go to the queues')),
  );
}

// ---- Messages (DLQ triage) -------------------------------------------------------------------------

/** What a replay or delete did, in one line: how many, and each skipped message with its reason. */
function triageSummary(verb, report) {
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
async function messagesPage(name) {
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
  const cursors = [undefined];
  let next;
  let shown = [];
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
    const page = await api(`/api/messages?${params}`);
    next = page.next;
    shown = page.messages;
    for (const id of [...selected]) if (!shown.some((m) => m.messageId === id)) selected.delete(id);
    render();
  };
  const act = async (verb, path, extra = {}) => {
    const report = await apiPost(path, { queue: name, ids: selection(), ...extra });
    selected.clear();
    await load();
    say(triageSummary(verb, report), report.skipped.length > 0 ? 'warning' : 'success');
  };
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
    confirmBox.querySelector('button').focus();
  };

  const row = (message) => {
    const box = h('input', {
      type: 'checkbox',
      checked: selected.has(message.messageId),
      'aria-label': `select ${message.messageId}`,
      onchange: (event) =>
        event.target.checked ? selected.add(message.messageId) : selected.delete(message.messageId),
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

// ---- Audit -----------------------------------------------------------------------------------------

/**
 * Text from the audit trail as shown: control and invisible characters (newlines, escapes, bidirectional
 * overrides) written as escapes, so an entry shows what it holds and cannot pass for another.
 */
function visible(text) {
  return String(text).replace(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what this finds.
    /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** An entry's selection, what a replay changed (sizes and digests) and the new messages' ids. */
function auditDetails(e) {
  const digest = (what, d) => d && `new ${what}: ${d.bytes} bytes, sha256 ${d.sha256.slice(0, 12)}…`;
  const newIds = (e.messages ?? []).map((m) => m.newMessageId).filter(Boolean);
  return [
    e.detail,
    digest('body', e.edit?.body),
    digest('attributes', e.edit?.messageAttributes),
    newIds.length > 0 &&
      `new ids: ${newIds.join(', ')}${newIds.length < e.count ? ` (first ${newIds.length} of ${e.count})` : ''}`,
  ]
    .filter(Boolean)
    .map((line) => h('div', {}, visible(line)));
}

/** What was done to messages: replays and deletes, purges, queue deletions and move tasks, whoever did them. */
async function auditPage() {
  const list = h('div', { id: 'audit' });
  const more = h('p', { class: 'pager' });
  const entries = [];
  const load = async (before) => {
    const page = await api(`/api/audit?limit=50${before ? `&before=${before}` : ''}`);
    entries.push(...page.entries);
    list.replaceChildren(
      entries.length === 0
        ? h(
            'p',
            { class: 'muted' },
            'Nothing yet: replays, deletes, purges, queue deletions and move tasks will be listed here.',
          )
        : h(
            'table',
            { class: 'history' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Time', 'Who', 'Via', 'Action', 'From', 'To', 'Messages', 'Skipped', 'Selection'].map((t) =>
                  h('th', { scope: 'col' }, t),
                ),
              ),
            ),
            h(
              'tbody',
              {},
              entries.map((e) =>
                h(
                  'tr',
                  { 'data-action': e.action },
                  h('td', { class: 'time' }, formatTime(e.at)),
                  h('td', {}, visible(e.actor)),
                  h('td', {}, e.via),
                  h('td', {}, e.action),
                  h('td', {}, h('a', { href: `#/queue/${encodeURIComponent(e.source)}` }, visible(e.source))),
                  h('td', {}, visible(e.destination ?? '')),
                  h('td', { class: 'number' }, String(e.count)),
                  h('td', { class: 'number' }, String(e.skipped)),
                  h('td', { class: 'small' }, auditDetails(e)),
                ),
              ),
            ),
          ),
    );
    more.replaceChildren(
      page.next
        ? h(
            'button',
            { type: 'button', class: 'secondary', onclick: () => attempt(() => load(page.next)) },
            'Older',
          )
        : '',
    );
  };
  main.replaceChildren(
    h('h1', {}, 'Audit'),
    h(
      'p',
      { class: 'muted' },
      'Every replay and delete, and every purge, queue deletion and move task, whoever made it: who, how they were authenticated, when, from where to where, how many. Newest first.',
    ),
    list,
    more,
  );
  await load();
}

// ---- Routing ---------------------------------------------------------------------------------------

function every(ms, work) {
  timers.push(setInterval(() => quietly(work), ms));
}

function pageOf(hash) {
  const queue = /^#\/queue\/(.+)$/.exec(hash);
  if (queue) return { nav: '#/', show: () => queuePage(decodeURIComponent(queue[1])) };
  const messages = /^#\/messages\/(.+)$/.exec(hash);
  if (messages) return { nav: '#/', show: () => messagesPage(decodeURIComponent(messages[1])) };
  if (hash === '#/audit') return { nav: '#/audit', show: auditPage };
  if (hash === '' || hash === '#' || hash === '#/') return { nav: '#/', show: queueListPage };
  if (hash === '#/alarms') return { nav: '#/alarms', show: alarmsPage };
  return { nav: undefined, show: notFoundPage };
}

async function route() {
  for (const timer of timers) clearInterval(timer);
  timers = [];
  say('');
  const page = pageOf(location.hash);
  for (const link of document.querySelectorAll('header nav a'))
    if (link.getAttribute('href') === page.nav) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  await attempt(page.show);
  // For screen readers and the keyboard; the page stays scrolled to its top, header included.
  main.focus({ preventScroll: true });
}

window.addEventListener('hashchange', route);
route();
// The header's alarm count, whatever page is on screen.
quietly(countAlarms);
setInterval(() => quietly(countAlarms), 5000);
