// @ts-check
/**
 * The topics page (#/topics): every SNS topic the viewer may see, its subscriptions (any protocol) with their
 * filter policies, and a tester that says which subscriptions a message and its attributes would reach, and
 * why not, through the server's own matcher (POST /api/sns/filter-test). Each HTTP/HTTPS subscription shows
 * its state and its stored deliveries (pending, failing with the last error and the next attempt), each with
 * Retry now and Drop (GET /api/sns/http-subscriptions, POST /api/sns/deliveries/retry|drop).
 *
 * @import { FilterTestAnswer, QueuePolicyCheckAnswer } from '../../src/server/sns-console-api.ts'
 * @import { HttpSubscriptionsAnswer, HttpSubscriptionView } from '../../src/server/sns-operations-api.ts'
 */
import { api, apiPost, arnPrefix, queueUrl, ServerError, sns, sqs } from '../shared/api.js';
import { confirmation, field, h } from '../shared/dom.js';
import { main } from '../shared/screen.js';
import { attempt, say } from '../shared/status.js';

/**
 * A subscription as the page shows it: ListSubscriptionsByTopic's member and its attributes.
 * `warning`: why AWS would deliver nothing there (the queue's policy, or no such queue).
 * @typedef {{ arn: string, protocol: string, endpoint: string, attributes: Record<string, string>,
 *   warning?: string }} Subscription
 * @typedef {{ arn: string, name: string, subscriptions: Subscription[], http: HttpSubscriptionView[] }} Topic
 */

/**
 * The text of each `tag` element under `node`'s `parent` elements (`member`s of a list).
 * @param {Document} document
 * @param {string} tag
 */
const texts = (document, tag) =>
  [...document.getElementsByTagName(tag)].map((node) => node.textContent ?? '');

/**
 * Every page of a listing action, following NextToken.
 * @param {string} action
 * @param {Record<string, string>} params
 * @param {(document: Document) => void} read
 */
async function everyPage(action, params, read) {
  let token = '';
  do {
    const document = await sns(action, token ? { ...params, NextToken: token } : params);
    read(document);
    token = document.getElementsByTagName('NextToken')[0]?.textContent ?? '';
  } while (token);
}

/** @returns {Promise<Topic[]>} */
async function loadTopics() {
  /** @type {string[]} */
  const arns = [];
  await everyPage('ListTopics', {}, (document) => arns.push(...texts(document, 'TopicArn')));
  arns.sort();
  return Promise.all(
    arns.map(async (arn) => {
      /** @type {Subscription[]} */
      const subscriptions = [];
      await everyPage('ListSubscriptionsByTopic', { TopicArn: arn }, (document) => {
        for (const member of document.getElementsByTagName('member')) {
          const child = (/** @type {string} */ tag) => member.getElementsByTagName(tag)[0]?.textContent ?? '';
          subscriptions.push({
            arn: child('SubscriptionArn'),
            protocol: child('Protocol'),
            endpoint: child('Endpoint'),
            attributes: {},
          });
        }
      });
      for (const subscription of subscriptions) {
        // A pending subscription is listed with "PendingConfirmation" for its ARN (as on AWS): no attributes to read.
        if (subscription.arn === 'PendingConfirmation') continue;
        const document = await sns('GetSubscriptionAttributes', { SubscriptionArn: subscription.arn });
        for (const entry of document.getElementsByTagName('entry'))
          subscription.attributes[entry.getElementsByTagName('key')[0]?.textContent ?? ''] =
            entry.getElementsByTagName('value')[0]?.textContent ?? '';
      }
      await Promise.all(subscriptions.map((subscription) => checkQueue(arn, subscription)));
      const name = arn.split(':').pop() ?? arn;
      const http = subscriptions.some((s) => s.protocol === 'http' || s.protocol === 'https')
        ? /** @type {HttpSubscriptionsAnswer} */ (
            await api(`/api/sns/http-subscriptions?topic=${encodeURIComponent(name)}`)
          ).subscriptions
        : [];
      return { arn, name, subscriptions, http };
    }),
  );
}

/**
 * Marks a queue subscription AWS would deliver nothing to: its queue's policy does not allow the topic (Sluice
 * delivers anyway, unless --strict-policies), or the queue does not exist. A queue the key may not read is left
 * unmarked: the page cannot tell.
 * @param {string} topicArn
 * @param {Subscription} subscription
 */
async function checkQueue(topicArn, subscription) {
  if (subscription.protocol !== 'sqs' || !subscription.endpoint.startsWith(arnPrefix)) return;
  const name = subscription.endpoint.slice(arnPrefix.length);
  let policy = '';
  try {
    const { Attributes } = await sqs('GetQueueAttributes', {
      QueueUrl: queueUrl(name),
      AttributeNames: ['Policy'],
    });
    policy = Attributes?.Policy ?? '';
  } catch (error) {
    if (error instanceof ServerError && /NonExistentQueue|QueueDoesNotExist/.test(error.code))
      subscription.warning = `Queue ${name} does not exist: deliveries fail (to the dead-letter queue, if any).`;
    return;
  }
  /** @type {QueuePolicyCheckAnswer} */
  const { allows } = await apiPost('/api/sns/queue-policy-check', {
    policy,
    queueArn: subscription.endpoint,
    topicArn,
  });
  if (!allows)
    subscription.warning = `On AWS this subscription would deliver nothing: queue ${name}'s policy does not allow the topic (sqs:SendMessage for sns.amazonaws.com with the topic as aws:SourceArn). Sluice delivers, and refuses with --strict-policies.`;
}

/**
 * A queue of this server by its ARN, as a link to its page; any other endpoint as text.
 * @param {string} endpoint
 */
function endpointView(endpoint) {
  if (endpoint.startsWith(arnPrefix)) {
    const name = endpoint.slice(arnPrefix.length);
    return h('a', { href: `#/queue/${encodeURIComponent(name)}` }, name);
  }
  return h('code', {}, endpoint);
}

/** @param {string} text */
function policyView(text) {
  if (!text) return h('span', { class: 'muted' }, 'none: every message');
  let pretty = text;
  try {
    pretty = JSON.stringify(JSON.parse(text), null, 2);
  } catch {}
  return h('pre', { class: 'policy' }, pretty);
}

/** @param {Topic} topic */
function topicView(topic) {
  return h(
    'section',
    { class: 'topic', 'data-topic': topic.name },
    h('h2', {}, topic.name),
    h('p', { class: 'muted' }, h('code', {}, topic.arn)),
    topic.subscriptions.length === 0
      ? h('p', { class: 'muted' }, 'No subscriptions.')
      : h(
          'table',
          { class: 'subscriptions' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['Protocol', 'Endpoint', 'Filter policy', 'Scope', 'Raw delivery', 'Dead-letter queue'].map(
                (t) => h('th', { scope: 'col' }, t),
              ),
            ),
          ),
          h(
            'tbody',
            {},
            topic.subscriptions.map((subscription) => {
              const { attributes } = subscription;
              let deadLetters = '';
              try {
                deadLetters = JSON.parse(attributes.RedrivePolicy || '{}').deadLetterTargetArn ?? '';
              } catch {}
              return h(
                'tr',
                { 'data-subscription': subscription.arn },
                h('td', {}, subscription.protocol),
                h(
                  'td',
                  {},
                  endpointView(subscription.endpoint),
                  subscription.warning && h('div', { class: 'warning-note small' }, subscription.warning),
                ),
                h('td', {}, policyView(attributes.FilterPolicy ?? '')),
                h('td', {}, attributes.FilterPolicyScope ?? 'MessageAttributes'),
                h('td', {}, attributes.RawMessageDelivery === 'true' ? 'yes' : 'no'),
                h('td', {}, deadLetters ? endpointView(deadLetters) : h('span', { class: 'muted' }, 'none')),
              );
            }),
          ),
        ),
    ...topic.http.map(httpSubscriptionView),
  );
}

/** @param {number} at epoch milliseconds */
const timeOf = (at) =>
  new Date(at)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');

/**
 * An HTTP/HTTPS subscription's state and its stored deliveries, each with Retry now and Drop (confirmed first).
 * @param {HttpSubscriptionView} view
 */
function httpSubscriptionView(view) {
  const deliveries =
    view.deliveries.length === 0
      ? h('p', { class: 'muted' }, 'No deliveries waiting.')
      : h(
          'table',
          { class: 'deliveries' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['Message', 'Attempts failed', 'Last error', 'Next attempt', ''].map((t) =>
                h('th', { scope: 'col' }, t),
              ),
            ),
          ),
          h(
            'tbody',
            {},
            view.deliveries.map((delivery) => {
              const input = { subscriptionArn: view.subscriptionArn, id: delivery.id };
              const actions = h('td', {});
              const buttons = () =>
                actions.replaceChildren(
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'secondary',
                      'data-action': 'retry',
                      onclick: () =>
                        attempt(async () => {
                          await apiPost('/api/sns/deliveries/retry', input);
                          say(`Delivery of ${delivery.messageId} retried now.`);
                          await topicsPage();
                        }),
                    },
                    'Retry now',
                  ),
                  ' ',
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'danger',
                      'data-action': 'drop',
                      onclick: () =>
                        actions.replaceChildren(
                          confirmation(
                            'Drop it for good?',
                            ['Drop', `Drop the delivery of ${delivery.messageId}`],
                            ['Keep', 'Keep the delivery'],
                            () =>
                              attempt(async () => {
                                await apiPost('/api/sns/deliveries/drop', input);
                                say(`Delivery of ${delivery.messageId} dropped.`);
                                await topicsPage();
                              }),
                            buttons,
                          ),
                        ),
                    },
                    'Drop',
                  ),
                );
              buttons();
              return h(
                'tr',
                { 'data-delivery': delivery.id, 'data-message-id': delivery.messageId },
                h('td', {}, h('code', {}, delivery.messageId)),
                h('td', {}, String(delivery.attempts)),
                h(
                  'td',
                  { class: 'last-error' },
                  delivery.lastError ?? h('span', { class: 'muted' }, 'not tried yet'),
                ),
                h('td', {}, timeOf(delivery.nextAttemptAt)),
                actions,
              );
            }),
          ),
        );
  return h(
    'div',
    { class: 'http-subscription', 'data-http-subscription': view.subscriptionArn },
    h(
      'h3',
      {},
      h('code', {}, view.endpoint),
      ' ',
      h(
        'span',
        { class: view.state === 'Confirmed' ? 'badge' : 'badge warning', 'data-state': view.state },
        view.state === 'Confirmed' ? 'confirmed' : 'pending confirmation',
      ),
    ),
    h(
      'p',
      { class: 'muted small' },
      `${view.pending} pending, ${view.failing} failing${view.more ? ' (the first 50 shown)' : ''}`,
    ),
    deliveries,
  );
}

/**
 * The attributes as typed in the tester: `{"name": value}` where a string is a String, a number a Number, an
 * array a String.Array, and `{"DataType", "StringValue"}` is taken as it is.
 * @param {string} text
 * @returns {Record<string, { DataType: string, StringValue: string }>}
 */
function attributesOf(text) {
  if (text.trim() === '') return {};
  /** @type {unknown} */
  const parsed = JSON.parse(text);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error('Message attributes: a JSON object of names and values.');
  /** @type {Record<string, { DataType: string, StringValue: string }>} */
  const attributes = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (typeof value === 'string') attributes[name] = { DataType: 'String', StringValue: value };
    else if (typeof value === 'number') attributes[name] = { DataType: 'Number', StringValue: String(value) };
    else if (Array.isArray(value))
      attributes[name] = { DataType: 'String.Array', StringValue: JSON.stringify(value) };
    else if (typeof value === 'object' && value !== null && 'DataType' in value)
      attributes[name] = {
        DataType: String(value.DataType),
        StringValue: 'StringValue' in value ? String(value.StringValue) : '',
      };
    else
      throw new Error(
        `Message attribute ${name}: a string, a number, an array or {"DataType", "StringValue"}.`,
      );
  }
  return attributes;
}

/**
 * The tester: a topic, a message and its attributes; for each subscription, whether it would receive it.
 * @param {Topic[]} topics
 */
function testerView(topics) {
  const topicPicker = h(
    'select',
    { id: 'tester-topic' },
    topics.map((topic) => h('option', { value: topic.arn }, topic.name)),
  );
  const message = h('textarea', { id: 'tester-message', rows: 4, placeholder: '{"order": {"total": 250}}' });
  const attributes = h('textarea', {
    id: 'tester-attributes',
    rows: 3,
    placeholder: '{"kind": "invoice", "total": 250}',
  });
  const results = h('div', { id: 'tester-results' });
  // Publishes the message for real (SNS's Publish, under the signed-in key's rights): every subscription it
  // matches receives it.
  const publish = async () => {
    /** @type {Record<string, string>} */
    const params = { TopicArn: topicPicker.value, Message: message.value };
    Object.entries(attributesOf(attributes.value)).forEach(([name, value], index) => {
      const prefix = `MessageAttributes.entry.${index + 1}`;
      params[`${prefix}.Name`] = name;
      params[`${prefix}.Value.DataType`] = value.DataType;
      params[`${prefix}.Value.StringValue`] = value.StringValue;
    });
    if (topicPicker.value.endsWith('.fifo')) {
      params.MessageGroupId = 'console';
      params.MessageDeduplicationId = crypto.randomUUID();
    }
    const answer = await sns('Publish', params);
    say(`Published message ${answer.getElementsByTagName('MessageId')[0]?.textContent ?? ''}.`);
  };
  const test = async () => {
    const topic = topics.find((candidate) => candidate.arn === topicPicker.value);
    if (!topic) return;
    const messageAttributes = attributesOf(attributes.value);
    const outcomes = await Promise.all(
      topic.subscriptions.map(async (subscription) => {
        /** @type {FilterTestAnswer} */
        const answer = await apiPost('/api/sns/filter-test', {
          filterPolicy: subscription.attributes.FilterPolicy ?? '',
          filterPolicyScope: subscription.attributes.FilterPolicyScope ?? 'MessageAttributes',
          message: message.value,
          messageAttributes,
        });
        return { subscription, answer };
      }),
    );
    const reached = outcomes.filter(({ answer }) => answer.matches).length;
    results.replaceChildren(
      h('p', {}, `Reaches ${reached} of ${outcomes.length} subscription${outcomes.length === 1 ? '' : 's'}.`),
      h(
        'ul',
        { class: 'tester-results' },
        outcomes.map(({ subscription, answer }) =>
          h(
            'li',
            { 'data-subscription': subscription.arn, 'data-matches': String(answer.matches) },
            h('strong', {}, answer.matches ? 'Reaches' : 'Does not reach'),
            ` ${subscription.protocol} `,
            endpointView(subscription.endpoint),
            `: ${answer.reason}`,
          ),
        ),
      ),
    );
    say('');
  };
  return h(
    'section',
    { id: 'filter-tester' },
    h('h2', {}, 'Test a message against the filter policies'),
    h(
      'p',
      { class: 'muted' },
      "Which of a topic's subscriptions a message would reach, checked by the server's own matcher, as a publish is. Test publishes nothing; Publish publishes the message to the topic.",
    ),
    h(
      'form',
      {
        onsubmit: (/** @type {SubmitEvent} */ event) => {
          event.preventDefault();
          return attempt(test);
        },
      },
      field('Topic', topicPicker),
      field('Message', message),
      field('Message attributes (JSON)', attributes),
      h('button', { type: 'submit' }, 'Test'),
      ' ',
      h(
        'button',
        { type: 'button', id: 'tester-publish', class: 'secondary', onclick: () => attempt(publish) },
        'Publish',
      ),
    ),
    results,
  );
}

export async function topicsPage() {
  const topics = await loadTopics();
  main.replaceChildren(
    h('h1', {}, 'Topics'),
    ...(topics.length === 0
      ? [
          h(
            'p',
            { class: 'muted' },
            'No topics yet: create one with SNS’s CreateTopic, or in the config file.',
          ),
        ]
      : [...topics.map(topicView), testerView(topics)]),
  );
}
