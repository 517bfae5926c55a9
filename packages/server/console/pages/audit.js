// @ts-check
/**
 * The audit page (#/audit): what was done to messages and queues, whoever did it, newest first.
 *
 * @import { AuditRecord, ContentDigest } from '../../src/store/triage.ts'
 */
import { api } from '../shared/api.js';
import { h } from '../shared/dom.js';
import { formatTime } from '../shared/format.js';
import { main } from '../shared/screen.js';
import { attempt } from '../shared/status.js';

/**
 * GET /api/audit's answer (server/triage-api.ts): a page of the audit trail, and the cursor of the next.
 * @typedef {{ entries: AuditRecord[], next: string | undefined }} AuditAnswer
 */

/**
 * Text from the audit trail as shown: control and invisible characters (newlines, escapes, bidirectional
 * overrides) written as escapes, so an entry shows what it holds and cannot pass for another.
 * @param {string} text
 */
function visible(text) {
  return String(text).replace(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what this finds.
    /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * An entry's selection, what a replay changed (sizes and digests) and the new messages' ids.
 * @param {AuditRecord} e
 */
function auditDetails(e) {
  /**
   * @param {string} what
   * @param {ContentDigest | undefined} d
   */
  const digest = (what, d) => d && `new ${what}: ${d.bytes} bytes, sha256 ${d.sha256.slice(0, 12)}…`;
  const newIds = (e.messages ?? []).map((m) => m.newMessageId).filter(Boolean);
  return [
    e.detail,
    digest('body', e.edit?.body),
    digest('attributes', e.edit?.messageAttributes),
    newIds.length > 0 &&
      `new ids: ${newIds.join(', ')}${newIds.length < e.count ? ` (first ${newIds.length} of ${e.count})` : ''}`,
  ]
    .filter(/** @returns {line is string} */ (line) => Boolean(line))
    .map((line) => h('div', {}, visible(line)));
}

/** What was done to messages: replays and deletes, purges, queue deletions and move tasks, whoever did them. */
export async function auditPage() {
  const list = h('div', { id: 'audit' });
  const more = h('p', { class: 'pager' });
  /** @type {AuditRecord[]} */
  const entries = [];
  /** @param {string} [before] */
  const load = async (before) => {
    /** @type {AuditAnswer} */
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
