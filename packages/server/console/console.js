// @ts-check
/**
 * The Sluice console: plain JavaScript modules over the server's own SQS JSON API and its /api/* and /alarms
 * pages (shared/api.js), served as committed, with no build step; tsc checks them from their JSDoc types.
 * This module is the router: each address's page is a module of pages/, named after it.
 */
import { alarmsPage } from './pages/alarms.js';
import { auditPage } from './pages/audit.js';
import { messagesPage } from './pages/messages.js';
import { notFoundPage } from './pages/not-found.js';
import { queuePage } from './pages/queue.js';
import { queueListPage } from './pages/queues.js';
import { topicsPage } from './pages/topics.js';
import { countAlarms } from './shared/header.js';
import { main, stopTimers } from './shared/screen.js';
import { attempt, quietly, say } from './shared/status.js';

/**
 * The page at an address: what it shows, and which link of the header's navigation it is under.
 * @param {string} hash
 * @returns {{ nav: string | undefined, show: () => Promise<void> | void }}
 */
function pageOf(hash) {
  const queue = /^#\/queue\/(.+)$/.exec(hash);
  if (queue) return { nav: '#/', show: () => queuePage(decodeURIComponent(queue[1] ?? '')) };
  const messages = /^#\/messages\/(.+)$/.exec(hash);
  if (messages) return { nav: '#/', show: () => messagesPage(decodeURIComponent(messages[1] ?? '')) };
  if (hash === '#/audit') return { nav: '#/audit', show: auditPage };
  if (hash === '' || hash === '#' || hash === '#/') return { nav: '#/', show: queueListPage };
  if (hash === '#/alarms') return { nav: '#/alarms', show: alarmsPage };
  if (hash === '#/topics') return { nav: '#/topics', show: topicsPage };
  return { nav: undefined, show: notFoundPage };
}

async function route() {
  stopTimers();
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
