import type { IncomingMessage } from 'node:http';
import type { ProtocolAdapter } from '../../protocol/adapter.ts';
import { jsonProtocol } from '../../protocol/protocols.ts';
import { LAMBDA_PATH_PREFIX, LAMBDA_TAGS_PREFIX } from '../lambda-entry.ts';
import { type ApiCall, apiRoute, type ServeApi } from './api.ts';
import { serveChange, serveConsoleRedirect, serveForm, servePage } from './console.ts';
import type { Exchange, HttpServerOptions, Serve, Transport } from './front.ts';
import { serveHealth } from './health.ts';
import { serveLambda } from './lambda.ts';
import { serveSqs } from './sqs.ts';
import { serveTestEndpoint } from './test-endpoints.ts';

/** Which requests a route serves, and how. */
export interface Route {
  /** The methods it serves, space-separated ("GET HEAD"), or "*" for any. */
  readonly methods: string;
  /** The path it serves: exact, or ending in "*" for every path under a prefix ("/2015-03-31/*"). */
  readonly path: string;
  /** Serves only the requests this accepts as well (the console redirect: a browser's). */
  readonly when?: (request: IncomingMessage) => boolean;
  /** Its errors in this protocol whatever the request looks like (test mode's: JSON); the request's own else. */
  readonly protocol?: ProtocolAdapter;
  readonly serve: Serve;
}

/** The AWS APIs served at the root: each by the service a request names. */
export interface ApiService {
  readonly serve: ServeApi;
  /** The Query actions by which an unsigned POST to "/" is told to be this service's. */
  readonly actions?: ReadonlySet<string>;
}

/**
 * The HTTP front's routes: every request is served by the first route its method and path match, and any
 * other by the API at the root (SQS: Query requests go to queue URLs, so every path is the API's).
 */
export function routesOf(options: HttpServerOptions, transport: Transport): RouteTable {
  const { pageAccess, browser, logger, auth } = options;
  const body = { transport, auth };
  const api = (serve: ServeApi) => apiRoute({ body, browser, logger }, serve);
  const apiServices: Record<string, ApiService> = {
    sqs: {
      serve: serveSqs({
        sqs: options.sqs,
        transport,
        auth,
        pageAccess,
        operatorAudit: options.operatorAudit,
        logger,
        sns: options.sns,
      }),
    },
  };
  return new RouteTable(
    [
      route('GET HEAD', '/health', serveHealth(options.storeCondition)),
      route('GET', '/', serveConsoleRedirect, { when: acceptsHtml }),
      ...Object.entries(options.pages ?? {}).map(([path, page]) =>
        route('GET', path, servePage(page, pageAccess)),
      ),
      ...(pageAccess
        ? pageAccess.formPaths.map((path) => route('POST', path, serveForm(pageAccess, body)))
        : []),
      ...Object.entries(options.changes ?? {}).map(([path, change]) =>
        route('POST', path, serveChange(change, { pageAccess, browser, body })),
      ),
      ...(options.lambda
        ? [
            route('*', `${LAMBDA_PATH_PREFIX}*`, serveLambda(options.lambda, { body, browser, auth })),
            route('*', `${LAMBDA_TAGS_PREFIX}/*`, serveLambda(options.lambda, { body, browser, auth })),
          ]
        : []),
      ...[...(options.testEndpoints ?? [])].map(([path, endpoint]) =>
        route('*', path, api(serveTestEndpoint(endpoint, pageAccess)), { protocol: jsonProtocol }),
      ),
    ],
    route('*', '*', api(byService(apiServices, 'sqs'))),
  );
}

function route(methods: string, path: string, serve: Serve, extra: Partial<Route> = {}): Route {
  return { methods, path, serve, ...extra };
}

/** A browser opening the server's address: an SQS client's GET of "/" always has an Action in its query. */
function acceptsHtml(request: IncomingMessage): boolean {
  return request.url === '/' && request.headers.accept?.includes('text/html') === true;
}

/**
 * The APIs at the root by the service a request names: a POST to "/" signed with SigV4 names it in its
 * credential scope, an unsigned one by its Query action; any other request, and one naming no service here,
 * is `fallback`'s.
 */
export function byService(services: Readonly<Record<string, ApiService>>, fallback: string): ServeApi {
  const only = Object.keys(services).length === 1 ? services[fallback] : undefined;
  // One service (SQS alone): nothing to choose, and no request pays for reading what it names.
  if (only) return only.serve;
  const chosenByAction = Object.values(services).some((service) => service.actions !== undefined);
  return (exchange, protocol, call) => {
    const name =
      exchange.method === 'POST' && exchange.path === '/' ? serviceNamed(exchange, call) : undefined;
    const service =
      (name !== undefined && Object.hasOwn(services, name) ? services[name] : undefined) ??
      services[fallback];
    if (!service) throw new Error(`no API service ${fallback}`);
    return service.serve(exchange, protocol, call);

    function serviceNamed(exchange: Exchange, call: ApiCall): string | undefined {
      const authorization = exchange.request.headers.authorization;
      if (authorization !== undefined)
        return /Credential=[^/,\s]+\/[^/]+\/[^/]+\/([^/]+)\//.exec(authorization)?.[1];
      if (!chosenByAction) return undefined;
      const action = new URLSearchParams(call.body).get('Action');
      return Object.entries(services).find(
        ([, service]) => action !== null && service.actions?.has(action),
      )?.[0];
    }
  };
}

/** Routes by method and path: exact ones looked up at once, prefixes in their order, then the fallback. */
export class RouteTable {
  private readonly exact = new Map<string, Route[]>();
  private readonly prefixed: Route[] = [];

  constructor(
    routes: readonly Route[],
    private readonly fallback: Route,
  ) {
    for (const route of routes) {
      if (route.path.endsWith('*')) {
        this.prefixed.push(route);
        continue;
      }
      for (const method of route.methods.split(' ')) {
        const key = `${method} ${route.path}`;
        this.exact.set(key, [...(this.exact.get(key) ?? []), route]);
      }
    }
  }

  /** The route of a request: its method's, then any method's, then a prefix's, then the fallback. */
  find(exchange: Exchange): Route {
    const { method, path, request } = exchange;
    const accepts = (route: Route) => route.when?.(request) ?? true;
    return (
      this.exact.get(`${method} ${path}`)?.find(accepts) ??
      this.exact.get(`* ${path}`)?.find(accepts) ??
      this.prefixed.find(
        (route) =>
          (route.methods === '*' || route.methods.split(' ').includes(method)) &&
          path.startsWith(route.path.slice(0, -1)) &&
          accepts(route),
      ) ??
      this.fallback
    );
  }
}
