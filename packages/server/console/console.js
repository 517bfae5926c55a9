// The Sluice console: plain JavaScript over the server's own SQS JSON API (X-Amz-Target requests) and its
// /api/* and /alarms pages, same origin. No build step: this file is served as it is committed. With access
// keys configured, the session cookie of the sign-in form authenticates every one of these requests.

const main = document.getElementById('main');
const statusLine = document.getElementById('status');
/** Timers of the page on screen, stopped when the route changes. */
let timers = [];

// ---- Talking to the server -------------------------------------------------------------------------

class SqsCallError extends Error {}

async function sqs(action, input = {}) {
  const response = await fetch('/', {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` },
    body: JSON.stringify(input),
  });
  const text = await response.text();
  const output = text ? JSON.parse(text) : {};
  if (!response.ok) {
    const code = String(output.__type ?? response.status)
      .split('#')
      .pop();
    if (code === 'MissingAuthenticationTokenException') signInAgain();
    throw new SqsCallError(`${action}: ${code}: ${output.message ?? output.Message ?? ''}`);
  }
  return output;
}

async function api(path) {
  const response = await fetch(path);
  if (response.status === 401) signInAgain();
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response.json();
}

/** The session ended (expired, signed out elsewhere, server restarted): the server shows the sign-in form. */
function signInAgain() {
  location.reload();
}

function say(message, isError = false) {
  statusLine.textContent = message;
  statusLine.className = isError ? 'error' : '';
}

/** Runs an action of a button or form, reporting its failure in the status line. */
async function attempt(work, done) {
  try {
    await work();
    if (done) say(done);
  } catch (error) {
    say(error.message, true);
  }
}

let account = '000000000000';
const queueUrl = (name) => `${location.origin}/${account}/${name}`;
/** Every queue's ARN is this prefix and its name; /api/overview says what it is. */
let arnPrefix = `arn:aws:sqs:us-east-1:${account}:`;

/** The overview's answer for one query, remembering the account and ARN prefix it reports. */
async function loadOverview(query) {
  const data = await api(`/api/overview?${new URLSearchParams(query)}`);
  account = data.accountId;
  arnPrefix = data.queueArnPrefix;
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
  for (const child of children.flat()) {
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

// ---- Charts ----------------------------------------------------------------------------------------

function sparkline(values, label) {
  const width = 120;
  const height = 24;
  const max = Math.max(1, ...values);
  const step = values.length > 1 ? width / (values.length - 1) : 0;
  const points = values.map(
    (v, i) => `${(i * step).toFixed(1)},${(height - 2 - (v / max) * (height - 4)).toFixed(1)}`,
  );
  return s(
    'svg',
    { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': label },
    s('title', {}, label),
    values.length > 0
      ? s('polyline', { points: points.join(' '), fill: 'none', stroke: '#0b5cad', 'stroke-width': 1.5 })
      : '',
  );
}

/** A line chart of several series over the samples' times, as inline SVG. */
function lineChart(title, samples, series) {
  const width = 520;
  const height = 170;
  const pad = { left: 44, right: 8, top: 10, bottom: 22 };
  const max = Math.max(1, ...series.flatMap((line) => samples.map(line.value)));
  const t0 = samples[0]?.at ?? 0;
  const t1 = samples.at(-1)?.at ?? 1;
  const x = (t) => pad.left + ((t - t0) / Math.max(1, t1 - t0)) * (width - pad.left - pad.right);
  const y = (v) => height - pad.bottom - (v / max) * (height - pad.top - pad.bottom);
  const svg = s(
    'svg',
    { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': title },
    s('title', {}, title),
    s('line', { x1: pad.left, y1: y(0), x2: width - pad.right, y2: y(0), stroke: '#a9b4c2' }),
    s('text', { x: 4, y: y(max) + 4, 'font-size': 11, fill: '#5b6675' }, String(max)),
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

async function queueListPage() {
  const filter = h('input', { type: 'search', id: 'filter', placeholder: 'part of a name' });
  const tbody = h('tbody');
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
  const cut = h('p', { id: 'overview-cut', class: 'muted', hidden: true });
  let queues = [];

  const render = (data) => {
    cut.hidden = data.matching <= queues.length;
    cut.textContent = `Showing the first ${queues.length} of ${data.matching} queues by name; filter to narrow.`;
    tbody.replaceChildren(
      ...queues.map((q) =>
        h(
          'tr',
          { 'data-queue': q.name },
          h('td', {}, h('a', { href: `#/queue/${encodeURIComponent(q.name)}` }, q.name), badges(q)),
          h('td', {}, q.fifo ? 'FIFO' : 'Standard'),
          h('td', { class: 'num', 'data-col': 'visible' }, q.visible),
          h('td', { class: 'num', 'data-col': 'in-flight' }, q.notVisible),
          h('td', { class: 'num', 'data-col': 'delayed' }, q.delayed),
          h(
            'td',
            { class: 'num' },
            q.visible + q.notVisible + q.delayed > 0 ? formatAge(q.oldestAgeSeconds) : '–',
          ),
          h('td', {}, sparkline(q.sparkline, `visible messages of ${q.name} over the last hour`)),
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
            { colspan: 7, class: 'muted' },
            filter.value.trim() ? 'No queue matches.' : 'No queues yet.',
          ),
        ),
      );
  };
  const renderPicker = (names) => {
    const chosen = dlqSelect.value;
    dlqSelect.replaceChildren(
      h('option', { value: '' }, '(none)'),
      ...names.map((queueName) => h('option', { value: queueName }, queueName)),
    );
    dlqSelect.value = names.includes(chosen) ? chosen : '';
  };
  const load = async () => {
    const [data, names] = await Promise.all([loadOverview({ filter: filter.value.trim() }), queueNames()]);
    queues = data.queues;
    render(data);
    renderPicker(names);
  };
  // The filter runs on the server (the overview is capped), so typing waits for a pause before asking.
  let typing;
  filter.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => attempt(load), 200);
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
      await load();
    }, `Created queue ${queueName}.`);
  };

  main.replaceChildren(
    h('h1', {}, 'Queues'),
    h(
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
            ['Name', 'Type', 'Visible', 'In flight', 'Delayed', 'Oldest', 'Last hour'].map((t) =>
              h('th', { scope: 'col' }, t),
            ),
          ),
        ),
        tbody,
      ),
    ),
  );
  await load();
  every(2000, load);
}

// ---- Queue page ------------------------------------------------------------------------------------

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
  const fifoQueue = first.queue.fifo;
  const heading = h('h1', {}, name, ' ');
  const banners = h('div', { id: 'banners' });
  const summary = h('p', { id: 'summary' });
  const links = h('p', { id: 'links' });
  const charts = h('div', { id: 'charts' });
  let range = '1h';

  const refresh = async () => {
    const { data, queue } = await overviewOf();
    if (!queue) return;
    heading.replaceChildren(name, ' ', ...badges(queue));
    summary.replaceChildren(
      h('strong', { id: 'count-visible' }, queue.visible),
      ' visible · ',
      h('strong', { id: 'count-in-flight' }, queue.notVisible),
      ' in flight · ',
      h('strong', {}, queue.delayed),
      ' delayed · oldest ',
      queue.visible + queue.notVisible + queue.delayed > 0 ? formatAge(queue.oldestAgeSeconds) : '–',
    );
    links.replaceChildren(
      queue.deadLetterQueue
        ? h(
            'span',
            {},
            'Dead-letter queue: ',
            h('a', { href: `#/queue/${encodeURIComponent(queue.deadLetterQueue)}` }, queue.deadLetterQueue),
            '. ',
          )
        : '',
      queue.deadLetterSources.length > 0
        ? h(
            'span',
            {},
            'Dead-letter queue of: ',
            queue.deadLetterSources.flatMap((source, i) => [
              i ? ', ' : '',
              h('a', { href: `#/queue/${encodeURIComponent(source)}` }, source),
            ]),
            '.',
          )
        : '',
    );
    await renderBanners(data.now, queue);
  };

  const renderBanners = async (now, queue) => {
    if (queue.deadLetterSources.length === 0) {
      banners.replaceChildren();
      return;
    }
    const { alarms } = await api('/alarms');
    const alarm = alarms.find((a) => a.queue === name);
    const parts = [];
    if (alarm?.state === 'ALARM') {
      parts.push(
        h(
          'div',
          { class: 'banner alarm', role: 'alert', id: 'alarm-banner' },
          h(
            'strong',
            {},
            `Alarm: ${alarm.visible} messages in this dead-letter queue (threshold ${alarm.threshold})`,
          ),
          alarm.since ? ` since ${formatTime(alarm.since)}` : '',
          alarm.silenced ? ' — silenced' : '',
        ),
      );
    }
    const last = alarm?.history.at(-1);
    if (
      alarm?.state === 'ALARM' &&
      last?.nextExpiryAt !== undefined &&
      last.nextExpiryAt - now <= 24 * 3600 * 1000
    ) {
      const hours = Math.max(0, (last.nextExpiryAt - now) / 3_600_000).toFixed(1);
      parts.push(
        h(
          'div',
          { class: 'banner warning', id: 'retention-warning' },
          `Retention: the oldest message here expires in ${hours} h (${formatTime(last.nextExpiryAt)}) and is then lost. Redrive it or raise MessageRetentionPeriod.`,
        ),
      );
    }
    if (alarm && alarm.history.length > 0) {
      parts.push(
        h(
          'details',
          { id: 'alarm-history' },
          h('summary', {}, `Alarm history (${alarm.history.length})`),
          h(
            'ul',
            {},
            [...alarm.history]
              .reverse()
              .map((n) => h('li', {}, `${formatTime(n.at)} ${n.event}: ${n.message}`)),
          ),
        ),
      );
    }
    banners.replaceChildren(...parts);
  };

  const renderCharts = async () => {
    const history = await api(`/api/history?queue=${encodeURIComponent(name)}&range=${range}`);
    charts.replaceChildren(
      lineChart(`Depth, last ${range}`, history.samples, [
        { label: 'visible', color: '#0b5cad', value: (x) => x.visible },
        { label: 'in flight', color: '#9a5b00', value: (x) => x.notVisible },
        { label: 'delayed', color: '#6b4fbb', value: (x) => x.delayed },
      ]),
      lineChart(`Throughput per sample, last ${range}`, history.samples, [
        { label: 'sent', color: '#17733a', value: (x) => x.sent },
        { label: 'received', color: '#0b5cad', value: (x) => x.received },
        { label: 'deleted', color: '#b42318', value: (x) => x.deleted },
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
      value,
    );

  main.replaceChildren(
    h('p', {}, h('a', { href: '#/' }, '← Queues')),
    heading,
    banners,
    summary,
    links,
    h(
      'section',
      { id: 'charts-section' },
      h('h2', {}, 'Charts'),
      h('div', { role: 'group', 'aria-label': 'Chart range' }, rangeButton('1h'), rangeButton('24h')),
      charts,
    ),
    messagesSection(name, url, fifoQueue),
    first.queue.deadLetterSources.length > 0 ? redriveSection(name, first.queue, await queueNames()) : '',
    await attributesSection(url, fifoQueue),
    await tagsSection(url),
  );
  await refresh();
  await renderCharts();
  every(2000, refresh);
  every(10_000, renderCharts);
}

function messagesSection(name, url, fifoQueue) {
  const body = h('textarea', { id: 'send-body', required: true });
  const delay = h('input', { type: 'number', id: 'send-delay', min: 0, max: 900, placeholder: '0' });
  const group = h('input', { id: 'send-group' });
  const dedup = h('input', { id: 'send-dedup' });
  const attributeRows = h('div', { id: 'send-attributes' });
  const addAttribute = () => {
    const n = attributeRows.children.length + 1;
    attributeRows.append(
      h(
        'div',
        { class: 'attribute-row' },
        field(`Attribute ${n} name`, h('input', { class: 'attr-name' })),
        field(
          'type',
          h(
            'select',
            { class: 'attr-type' },
            ['String', 'Number', 'Binary'].map((t) => h('option', { value: t }, t)),
          ),
        ),
        field('value', h('input', { class: 'attr-value' })),
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
    });
  };

  const visibility = h('input', { type: 'number', id: 'poll-visibility', min: 0, max: 43200, value: 30 });
  const max = h('input', { type: 'number', id: 'poll-max', min: 1, max: 10, value: 10 });
  const results = h('div', { id: 'poll-results', 'aria-live': 'polite' });
  const poll = async (event) => {
    event.preventDefault();
    await attempt(async () => {
      const output = await sqs('ReceiveMessage', {
        QueueUrl: url,
        MaxNumberOfMessages: Number(max.value),
        VisibilityTimeout: Number(visibility.value),
        WaitTimeSeconds: 0,
        AttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      });
      const messages = output.Messages ?? [];
      results.replaceChildren(
        h('p', {}, `${messages.length} message(s) received, invisible to others for ${visibility.value} s.`),
        ...messages.map((m) => renderMessage(url, m)),
      );
    });
  };

  const confirmBox = h('span', { id: 'purge-confirm', hidden: true });
  const purgeButton = h('button', { type: 'button', class: 'danger', id: 'purge' }, 'Purge queue…');
  purgeButton.addEventListener('click', () => {
    confirmBox.hidden = false;
    confirmBox.querySelector('button').focus();
  });
  confirmBox.append(
    ` Delete every message in ${name}? `,
    h(
      'button',
      {
        type: 'button',
        class: 'danger',
        onclick: async () => {
          confirmBox.hidden = true;
          await attempt(() => sqs('PurgeQueue', { QueueUrl: url }), `Purged ${name}.`);
          results.replaceChildren();
        },
      },
      'Yes, purge',
    ),
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        onclick: () => {
          confirmBox.hidden = true;
          purgeButton.focus();
        },
      },
      'Keep the messages',
    ),
  );

  return h(
    'section',
    { id: 'messages' },
    h('h2', {}, 'Messages'),
    h(
      'form',
      { id: 'send-form', onsubmit: send },
      h('h3', {}, 'Send a message'),
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
        h('button', { type: 'button', class: 'secondary', onclick: addAttribute }, 'Add attribute'),
        h('button', { type: 'submit' }, 'Send message'),
      ),
    ),
    h(
      'form',
      { id: 'poll-form', onsubmit: poll },
      h('h3', {}, 'Poll for messages'),
      field('Visibility timeout (s)', visibility),
      field('Up to', max),
      h('div', {}, h('button', { type: 'submit' }, 'Poll'), purgeButton, confirmBox),
    ),
    results,
  );
}

function prettyBody(body) {
  try {
    const parsed = JSON.parse(body);
    if (parsed !== null && typeof parsed === 'object') return JSON.stringify(parsed, null, 2);
  } catch {}
  return body;
}

function renderMessage(url, m) {
  const attributes = m.Attributes ?? {};
  const deleteButton = h('button', { type: 'button', class: 'secondary' }, 'Delete');
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
  );
  deleteButton.addEventListener('click', () =>
    attempt(async () => {
      await sqs('DeleteMessage', { QueueUrl: url, ReceiptHandle: m.ReceiptHandle });
      box.replaceChildren(h('p', { class: 'muted' }, `Deleted ${m.MessageId}.`));
    }, 'Message deleted.'),
  );
  return box;
}

function redriveSection(name, queue, names) {
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
  queueMicrotask(() => attempt(showTask));
  return h(
    'section',
    { id: 'redrive' },
    h('h2', {}, 'Dead-letter queue redrive'),
    h(
      'form',
      { id: 'redrive-form', onsubmit: start },
      field('Destination', destination),
      field('Messages per second', rate),
      h('div', {}, h('button', { type: 'submit' }, 'Start DLQ redrive')),
    ),
    h('p', {}, h('label', { class: 'inline' }, 'Progress', progress), ' ', progressText, ' ', cancel),
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
    if (Object.keys(changed).length === 0) return say('No attribute changed.');
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

// ---- Routing ---------------------------------------------------------------------------------------

function every(ms, work) {
  timers.push(setInterval(() => attempt(work), ms));
}

async function route() {
  for (const timer of timers) clearInterval(timer);
  timers = [];
  say('');
  const match = /^#\/queue\/(.+)$/.exec(location.hash);
  await attempt(() => (match ? queuePage(decodeURIComponent(match[1])) : queueListPage()));
  main.focus();
}

window.addEventListener('hashchange', route);
route();
