import { asSqsError } from '../../core/actions.ts';
import { UnavailableError } from '../../core/errors.ts';
import type { PageAccess } from '../auth/page-access.ts';
import type { BrowserGuard } from '../browser-guard.ts';
import { ANYONE, type ConsoleChange, errorPage, type Page, type PageViewer } from '../page.ts';
import type { Serve } from './front.ts';
import { type BodyLimits, readRequestBody } from './request-body.ts';

/*
 * The console's routes: the redirect of a browser opening the server's address, the read-only pages
 * (/console and its files, /api/*, /metrics, /alarms), the sign-in and sign-out forms, and the console's
 * changes (POST /api/...). Each answers a Page.
 */

/** A browser opening the server's address goes to the console (an SQS client's GET always has an Action). */
export const serveConsoleRedirect: Serve = async () => ({
  status: 303,
  headers: { location: '/console' },
  body: '',
});

/** A read-only page, to the viewer page access admits. */
export function servePage(
  page: (url: URL, viewer: PageViewer) => Page | Promise<Page>,
  pageAccess: PageAccess | undefined,
): Serve {
  return async (exchange) => {
    const viewer = pageAccess?.admit(exchange.path, exchange.request) ?? ANYONE;
    return 'contentType' in viewer ? viewer : await refusedAsPage(() => page(exchange.url(), viewer));
  };
}

/** The console's sign-in or sign-out form. */
export function serveForm(pageAccess: PageAccess, body: BodyLimits): Serve {
  return async (exchange, protocol) => {
    const read = await readRequestBody(exchange, body, protocol);
    if (!('body' in read)) return read.answer;
    return pageAccess.submitForm(exchange.path, exchange.request, read.body, exchange.baseUrl);
  };
}

/** A console request that changes state: as for the SQS API, no other origin's page may make a browser send it. */
export function serveChange(
  change: ConsoleChange,
  parts: { pageAccess: PageAccess | undefined; browser: BrowserGuard | undefined; body: BodyLimits },
): Serve {
  const { pageAccess, browser } = parts;
  return async (exchange, protocol) => {
    const read = await readRequestBody(exchange, parts.body, protocol);
    if (!('body' in read)) return read.answer;
    const { request } = exchange;
    const crossOrigin = browser?.crossOriginRefusal(request);
    const viewer = crossOrigin
      ? errorPage(crossOrigin)
      : (pageAccess?.admitChange(request, read.body, exchange.baseUrl) ?? ANYONE);
    return 'contentType' in viewer ? viewer : await refusedAsPage(() => change(read.body, viewer, request));
  };
}

/** A page's answer; a store that cannot work now answers 503 with its reason, as the SQS API does. */
async function refusedAsPage(produce: () => Page | Promise<Page>): Promise<Page> {
  try {
    return await produce();
  } catch (error) {
    const refusal = asSqsError(error);
    if (refusal instanceof UnavailableError) return errorPage(refusal);
    throw error;
  }
}
