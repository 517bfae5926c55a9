// @ts-check
/**
 * A queue page's settings: its attributes (a field for each the server says may be set) and its tags.
 *
 * @import { GetQueueAttributesResult } from '../../src/core/api-types.ts'
 * @import { AttributesAnswer } from '../../src/server/console-api.ts'
 */
import { api, sqs } from '../shared/api.js';
import { field, h } from '../shared/dom.js';
import { formatTime, prettyBody } from '../shared/format.js';
import { attempt, say } from '../shared/status.js';

/**
 * @param {string} url
 * @param {boolean} fifoQueue
 */
export async function attributesSection(url, fifoQueue) {
  /** @type {[GetQueueAttributesResult, AttributesAnswer]} */
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
  /** @type {Record<string, HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>} */
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
  /** @param {SubmitEvent} event */
  const save = async (event) => {
    event.preventDefault();
    /** @type {Record<string, string>} */
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

/** @param {string} url */
export async function tagsSection(url) {
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
  /** @param {SubmitEvent} event */
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
