import type { IncomingMessage } from 'node:http';
import type { Clock } from '#toolkit/clock';
import { errors, SqsError } from '../../core/errors.ts';
import type { AccessedQueue, QueueAccess } from '../../core/queue-reference.ts';
import { loginPage } from '../console-api.ts';
import { ANYONE, errorPage, type Page, type PageViewer } from '../page.ts';
import { SNS_CERTIFICATE_PREFIX } from '../sns-signing.ts';
import { type AccessKey, type Authenticator, sameSecret } from './access.ts';
import { ConsoleSessions, LoginThrottle, SESSION_COOKIE, SESSION_TTL_MS } from './console-sessions.ts';

const LOGIN_PATH = '/console/login';
const LOGOUT_PATH = '/console/logout';

/**
 * Who may read the pages served beside the SQS API (the console, /api/*, /alarms, /metrics), the console's
 * sign-in, and the SQS requests its session cookie authenticates. With credentials configured, a page needs
 * a session (signed in with a key's id and secret) or a SigV4 signature; /metrics also takes the metrics
 * bearer token. A session or signature sees the queues its key may read (GetQueueAttributes).
 */
export interface PageAccess {
  /** The paths of the console's sign-in and sign-out forms, served on POST; none without credentials. */
  readonly formPaths: readonly string[];
  /** Answers the sign-in or sign-out form; `origin` is the server's own, as the browser names it. */
  submitForm(path: string, request: IncomingMessage, body: string, origin: string): Page;
  /** The viewer of a GET page, or the answer refusing it. */
  admit(path: string, request: IncomingMessage): PageViewer | Page;
  /**
   * The viewer of a console request that changes state (a POST to /api/...), or the answer refusing it: a
   * signature, or a session from the server's own origin (`origin`, as for the SQS requests it signs in).
   */
  admitChange(request: IncomingMessage, body: string, origin: string): PageViewer | Page;
  /**
   * Undefined when a request may use test mode's endpoints (`--test-clock`), else the answer refusing it. They
   * reach every queue (a reset empties them all), so with credentials configured they need a SigV4
   * signature of a key of the server's own account without queue or action limits, as /metrics does.
   */
  admitTest(request: IncomingMessage, body: string): Page | undefined;
  /**
   * The key of an SQS request authenticated by the console's session cookie: undefined when it carries a
   * signature or no cookie (SigV4 then decides). A cookie is accepted only from the server's own origin.
   */
  sessionCaller(request: IncomingMessage, origin: string): AccessKey | undefined;
}

export interface PageAccessOptions {
  /** The access keys' checks; undefined when no credentials are configured. */
  auth: Authenticator | undefined;
  /** `--metrics-token`: a scraper's `Authorization: Bearer` for /metrics. */
  metricsToken: string | undefined;
  /** The server's own account: only a key of it without limits may read /metrics. */
  accountId: string;
  clock: Clock;
  /** Serving HTTPS: the cookie is marked Secure. */
  tls: boolean;
  /** The queue a page names, as the access check sees it (its ARN and Policy, for keys of other accounts). */
  describeQueue: (name: string) => Promise<AccessedQueue>;
}

export function createPageAccess(options: PageAccessOptions): PageAccess {
  const { auth, metricsToken } = options;
  const sessions = new ConsoleSessions(options.clock);
  const throttle = new LoginThrottle(options.clock);

  const viewerOf = (checks: Authenticator, { key, by }: Authenticated): PageViewer => {
    const may = async (action: string, queue: string) => {
      let access: QueueAccess;
      try {
        access = checks.authorize(key, action, {});
      } catch (error) {
        if (error instanceof SqsError) return false;
        throw error;
      }
      return access.allows(await options.describeQueue(queue));
    };
    return {
      accessKeyId: key.accessKeyId,
      authenticatedBy: by,
      mayRead: (queue) => may('GetQueueAttributes', queue),
      mayConfigure: (queue) => may('SetQueueAttributes', queue),
      mayReceive: (queue) => may('ReceiveMessage', queue),
      maySend: (queue) => may('SendMessage', queue),
    };
  };
  /** The key a signature or session cookie names (undefined: neither), or the answer refusing a bad one. */
  const keyOf = (
    checks: Authenticator,
    request: IncomingMessage,
    body: string,
  ): Authenticated | undefined | Page => {
    try {
      if (isSigned(request)) {
        const key = checks.authenticate({
          method: request.method ?? 'GET',
          target: request.url ?? '/',
          rawHeaders: request.rawHeaders,
          body,
        });
        return { key, by: 'signature' };
      }
      const key = sessionKey(request);
      return key && { key, by: 'console-session' };
    } catch (error) {
      if (error instanceof SqsError) return errorPage(error);
      throw error;
    }
  };
  const mayActOnEveryQueue = (key: AccessKey) =>
    unlimited(key.queues) &&
    unlimited(key.actions) &&
    (key.accountId ?? options.accountId) === options.accountId;
  const sessionKey = (request: IncomingMessage) => {
    const token = sessionToken(request);
    return token === undefined ? undefined : sessions.keyOf(token);
  };
  const cookie = (value: string, maxAgeSeconds: number) =>
    `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${options.tls ? '; Secure' : ''}`;

  return {
    formPaths: auth === undefined ? [] : [LOGIN_PATH, LOGOUT_PATH],

    submitForm(path, request, body, origin) {
      // Only the console's own page may sign in or out (no signing a victim's browser into another key).
      if (!sameOrigin(request, origin)) return loginPage(403, 'Sign in from the console’s own page.');
      if (path === LOGOUT_PATH) {
        const token = sessionToken(request);
        if (token) sessions.end(token);
        return redirectToConsole(cookie('', 0));
      }
      const address = request.socket.remoteAddress ?? 'unknown';
      const form = new URLSearchParams(body);
      const accessKeyId = form.get('accessKeyId') ?? '';
      const waitMs = throttle.retryAfterMs(address, accessKeyId);
      if (waitMs > 0) {
        const seconds = Math.ceil(waitMs / 1000);
        const page = loginPage(429, `Too many failed sign-ins: try again in ${seconds} s.`);
        return { ...page, headers: { ...page.headers, 'retry-after': String(seconds) } };
      }
      const key = auth?.verifySecret(accessKeyId, form.get('secretAccessKey') ?? '');
      if (!key) {
        throttle.failed(address, accessKeyId);
        return loginPage(401, 'Wrong access key id or secret.');
      }
      throttle.succeeded(address);
      const session = sessions.start(key);
      return redirectToConsole(cookie(session.token, SESSION_TTL_MS / 1000));
    },

    admit(path, request) {
      // SNS's signing certificate is public, as AWS serves it: anyone verifying a notification fetches it.
      if (path.startsWith(SNS_CERTIFICATE_PREFIX)) return ANYONE;
      const isMetrics = path === '/metrics';
      const bearer = bearerToken(request);
      if (isMetrics && metricsToken !== undefined && bearer !== undefined) {
        return sameSecret(metricsToken, bearer)
          ? ANYONE
          : errorPage(errors.accessDenied('The bearer token is not the server’s metrics token.'));
      }
      if (!auth) return isMetrics && metricsToken !== undefined ? metricsRefusal() : ANYONE;
      const key = keyOf(auth, request, '');
      if (isPage(key)) return key;
      if (!key) {
        if (path === '/console' || path.startsWith('/console/')) return loginPage(401, '');
        return isMetrics && metricsToken !== undefined
          ? metricsRefusal()
          : errorPage(errors.missingAuthenticationToken(), 401);
      }
      if (isMetrics && !mayActOnEveryQueue(key.key))
        return errorPage(
          errors.accessDenied(
            `User: ${key.key.accessKeyId} may not read /metrics: it names every queue; use a key without queue or action limits, or the metrics token.`,
          ),
        );
      return viewerOf(auth, key);
    },

    admitChange(request, body, origin) {
      if (!auth) return ANYONE;
      if (!isSigned(request) && sessionToken(request) !== undefined && !sameOrigin(request, origin))
        return errorPage(errors.accessDenied(SESSION_ORIGIN_RULE));
      const key = keyOf(auth, request, body);
      if (isPage(key)) return key;
      return key ? viewerOf(auth, key) : errorPage(errors.missingAuthenticationToken(), 401);
    },

    admitTest(request, body) {
      if (!auth) return undefined;
      const signed = isSigned(request) ? keyOf(auth, request, body) : undefined;
      if (isPage(signed)) return signed;
      if (!signed) return errorPage(errors.missingAuthenticationToken(), 401);
      return mayActOnEveryQueue(signed.key)
        ? undefined
        : errorPage(
            errors.accessDenied(
              `User: ${signed.key.accessKeyId} may not use test mode's endpoints: they act on every queue; sign with a key without queue or action limits.`,
            ),
          );
    },

    sessionCaller(request, origin) {
      if (!auth || isSigned(request)) return undefined;
      const token = sessionToken(request);
      if (token === undefined) return undefined;
      if (!sameOrigin(request, origin)) throw errors.accessDenied(SESSION_ORIGIN_RULE);
      const key = sessions.keyOf(token);
      if (!key) throw errors.sessionEnded();
      return key;
    },
  };
}

const SESSION_ORIGIN_RULE =
  'A request signed in by the console’s session cookie must come from the console’s own origin (Sec-Fetch-Site: same-origin, or Origin: the server’s address).';

/** A key, and what proved it. */
interface Authenticated {
  key: AccessKey;
  by: NonNullable<PageViewer['authenticatedBy']>;
}

function isPage(value: Authenticated | Page | undefined): value is Page {
  return value !== undefined && 'contentType' in value;
}

/** Absent, or with a wildcard that allows everything. */
function unlimited(patterns: readonly string[] | undefined): boolean {
  return patterns === undefined || patterns.some((pattern) => pattern === '*' || pattern === 'sqs:*');
}

/** SigV4 in the Authorization header or in the query string (presigned). */
function isSigned(request: IncomingMessage): boolean {
  return (
    request.headers.authorization?.startsWith('AWS4-') === true ||
    (request.url ?? '').includes('X-Amz-Signature=')
  );
}

function bearerToken(request: IncomingMessage): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  return match?.[1];
}

function sessionToken(request: IncomingMessage): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, value] = part.trim().split('=', 2);
    if (name === SESSION_COOKIE && value) return value;
  }
  return undefined;
}

/**
 * A browser names where a request comes from: `Sec-Fetch-Site` (every current browser) and, on a POST,
 * `Origin`. Either must say the server's own page sent it; a request with neither (not a browser) is refused
 * too, since only the console's page holds a session cookie.
 */
function sameOrigin(request: IncomingMessage, origin: string): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin';
  return request.headers.origin === origin;
}

/** 401 naming the scheme a scraper should use. */
function metricsRefusal(): Page {
  const page = errorPage(errors.missingAuthenticationToken(), 401);
  return { ...page, headers: { ...page.headers, 'www-authenticate': 'Bearer realm="sluice metrics"' } };
}

/** 303: the browser loads the console with GET, whatever the form's method was. */
function redirectToConsole(setCookie: string): Page {
  return {
    status: 303,
    contentType: 'text/plain; charset=utf-8',
    body: '',
    headers: { location: '/console', 'set-cookie': setCookie, 'cache-control': 'no-store' },
  };
}
