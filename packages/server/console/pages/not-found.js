// @ts-check
/** What the console shows for an address it has no page for. */
import { h } from '../shared/dom.js';
import { main } from '../shared/screen.js';

export function notFoundPage() {
  main.replaceChildren(
    h('h1', {}, 'No such page'),
    h('p', {}, `The console has no page ${location.hash}. `, h('a', { href: '#/' }, 'Go to the queues')),
  );
}
