/**
 * AWS Signature Version 4 verification, at the wire level: it knows HTTP requests and secrets, not queue
 * rules. Both forms are accepted — the `Authorization` header the SDKs and CLIs send, and the presigned
 * query string (`X-Amz-Signature` …) — for either protocol, since both sign the same canonical request:
 *
 *   METHOD \n canonical URI \n canonical query \n canonical headers \n signed header names \n sha256(body)
 *
 * The canonical URI is the path as sent with each segment URI-encoded once more (every AWS service but
 * S3 double-encodes); the query's names and values are decoded, re-encoded with RFC 3986's unreserved
 * set, and sorted; headers are lower-cased, trimmed, inner runs of spaces collapsed, repeats joined by
 * commas. The string to sign is `AWS4-HMAC-SHA256 \n date \n scope \n sha256(canonical request)`,
 * signed with the key derived from `AWS4<secret>`, the scope's date, region, service and `aws4_request`.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { errors } from '../../core/errors.ts';

export interface SigningCredential {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** A request before its body is read. */
export interface RequestHeadersToVerify {
  readonly method: string;
  /** The request target as sent: path and, optionally, `?query`. */
  readonly target: string;
  /** Node's `rawHeaders`: name, value, name, value… (repeats kept, for canonical joining). */
  readonly rawHeaders: readonly string[];
}

export interface RequestToVerify extends RequestHeadersToVerify {
  readonly body: string;
}

export interface VerifyOptions<C extends SigningCredential> {
  readonly lookup: (accessKeyId: string) => C | undefined;
  /** The region credentials must be scoped to, as AWS insists. */
  readonly region: string;
  /** Milliseconds since the epoch, from the server's clock (injectable in tests). */
  readonly now: number;
  /** The service the credential must be scoped to: `sqs` unless given (`lambda` for its API on Sluice's port). */
  readonly service?: string;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';
const SERVICE = 'sqs';
/** How far a header-signed request's time may be from the server's, either way (AWS: 15 minutes). */
export const MAX_CLOCK_SKEW_MS = 15 * 60 * 1000;
/** Headers that, when a request has them, its signature must cover (name, and as AWS writes it). */
const MUST_SIGN_WHEN_PRESENT = [
  ['x-amz-target', 'X-Amz-Target'],
  ['content-type', 'Content-Type'],
] as const;
/** A presigned URL may be valid for at most seven days. */
const MAX_PRESIGNED_EXPIRES_SECONDS = 604_800;

interface ParsedSignature {
  readonly accessKeyId: string;
  readonly scopeDate: string;
  readonly region: string;
  readonly service: string;
  readonly terminator: string;
  readonly signedHeaders: readonly string[];
  readonly signature: string;
  readonly amzDate: string;
  /** Presigned form only. */
  readonly expiresSeconds?: number;
}

/**
 * Everything about the signature that does not need the body: it is well formed, its key is known, its
 * scope is this region's SQS and its date is within the allowed skew. Returns the credential, or throws the
 * error verifySigV4 would, so that a request bound to fail is refused before its body is read.
 */
export function checkSignatureScope<C extends SigningCredential>(
  request: RequestHeadersToVerify,
  options: VerifyOptions<C>,
): C {
  return scopeChecked(request, options).credential;
}

function scopeChecked<C extends SigningCredential>(
  request: RequestHeadersToVerify,
  options: VerifyOptions<C>,
) {
  const questionMark = request.target.indexOf('?');
  const path = questionMark < 0 ? request.target : request.target.slice(0, questionMark);
  const query = questionMark < 0 ? '' : request.target.slice(questionMark + 1);
  const queryPairs = parseQuery(query);
  const headers = canonicalHeaderValues(request.rawHeaders);
  const presigned = queryPairs.some(([name]) => name === 'X-Amz-Signature');
  const parsed = presigned ? parsePresigned(queryPairs) : parseAuthorizationHeader(headers);

  const credential = options.lookup(parsed.accessKeyId);
  if (!credential) {
    throw errors.invalidClientTokenId();
  }
  checkScope(parsed, options.region, options.service ?? SERVICE);
  checkTime(parsed, options.now);
  if (!parsed.signedHeaders.includes('host')) {
    throw errors.signatureDoesNotMatch("'Host' must be a 'SignedHeader' in the AWS Authorization.");
  }
  // The action (X-Amz-Target) and how the body is read (Content-Type) must be signed, as AWS requires:
  // otherwise a request signed as one action could be replayed as another.
  for (const [name, shown] of MUST_SIGN_WHEN_PRESENT) {
    if (headers.has(name) && !parsed.signedHeaders.includes(name))
      throw errors.signatureDoesNotMatch(`'${shown}' must be a 'SignedHeader' in the AWS Authorization.`);
  }
  return { credential, parsed, headers, path, queryPairs, presigned };
}

/** Checks the request's signature and returns the credential that made it, or throws SQS's error. */
export function verifySigV4<C extends SigningCredential>(
  request: RequestToVerify,
  options: VerifyOptions<C>,
): C {
  const { credential, parsed, headers, path, queryPairs, presigned } = scopeChecked(request, options);
  const bodyHash = sha256Hex(request.body);
  const declaredHash = headers.get('x-amz-content-sha256');
  if (declaredHash !== undefined && declaredHash !== bodyHash) {
    throw errors.signatureDoesNotMatch(
      'The provided x-amz-content-sha256 header does not match the request body.',
    );
  }
  const canonicalRequest = canonicalRequestOf(
    request.method,
    path,
    presigned ? queryPairs.filter(([name]) => name !== 'X-Amz-Signature') : queryPairs,
    parsed.signedHeaders,
    headers,
    bodyHash,
  );
  const scope = `${parsed.scopeDate}/${parsed.region}/${parsed.service}/${parsed.terminator}`;
  const stringToSign = [ALGORITHM, parsed.amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const key = signingKey(credential.secretAccessKey, parsed.scopeDate, parsed.region, parsed.service);
  const expected = createHmac('sha256', key).update(stringToSign).digest();
  const given = Buffer.from(parsed.signature, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw errors.signatureDoesNotMatch(
      'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
    );
  }
  return credential;
}

/**
 * The `host` and `x-amz-date` headers and the `Authorization` header that sign a request with `credential` at
 * `now`: how `sluice stats` reads the pages of a server with credentials.
 */
export function signRequest(
  request: { readonly method: string; readonly url: URL; readonly body: string },
  credential: SigningCredential,
  region: string,
  now: number,
): Record<string, string> {
  const amzDate = isoBasic(now);
  const scopeDate = amzDate.slice(0, 8);
  const headers = new Map([
    ['host', request.url.host],
    ['x-amz-date', amzDate],
  ]);
  const signed = [...headers.keys()];
  const canonicalRequest = canonicalRequestOf(
    request.method,
    request.url.pathname,
    parseQuery(request.url.search.slice(1)),
    signed,
    headers,
    sha256Hex(request.body),
  );
  const scope = `${scopeDate}/${region}/${SERVICE}/aws4_request`;
  const stringToSign = [ALGORITHM, amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const key = signingKey(credential.secretAccessKey, scopeDate, region, SERVICE);
  const signature = createHmac('sha256', key).update(stringToSign).digest('hex');
  return {
    ...Object.fromEntries(headers),
    authorization: `${ALGORITHM} Credential=${credential.accessKeyId}/${scope}, SignedHeaders=${signed.join(';')}, Signature=${signature}`,
  };
}

/** The canonical request of the module comment: what both the signer and the verifier hash. */
function canonicalRequestOf(
  method: string,
  path: string,
  queryPairs: ReadonlyArray<readonly [string, string]>,
  signedHeaders: readonly string[],
  headers: ReadonlyMap<string, string>,
  bodyHash: string,
): string {
  return [
    method,
    canonicalUri(path),
    canonicalQuery(queryPairs),
    ...signedHeaders.map((name) => `${name}:${headers.get(name) ?? ''}`),
    '',
    signedHeaders.join(';'),
    bodyHash,
  ].join('\n');
}

/** `Credential=<id>/<date>/<region>/<service>/aws4_request`, the part both forms share. */
function parseCredentialScope(
  value: string,
): Omit<ParsedSignature, 'signedHeaders' | 'signature' | 'amzDate'> {
  const parts = value.split('/');
  if (parts.length !== 5 || parts.some((part) => part === '')) {
    throw errors.incompleteSignature(
      `Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got '${value}'`,
    );
  }
  const [accessKeyId, scopeDate, region, service, terminator] = parts as [
    string,
    string,
    string,
    string,
    string,
  ];
  return { accessKeyId, scopeDate, region, service, terminator };
}

function parseAuthorizationHeader(headers: ReadonlyMap<string, string>): ParsedSignature {
  const authorization = headers.get('authorization');
  if (authorization === undefined) {
    throw errors.missingAuthenticationToken();
  }
  if (!authorization.startsWith(`${ALGORITHM} `)) {
    throw errors.incompleteSignature(`Unsupported AWS 'algorithm': only ${ALGORITHM} is accepted.`);
  }
  const fields = new Map<string, string>();
  for (const part of authorization.slice(ALGORITHM.length + 1).split(',')) {
    const equals = part.indexOf('=');
    if (equals > 0) fields.set(part.slice(0, equals).trim(), part.slice(equals + 1).trim());
  }
  const credential = fields.get('Credential');
  const signedHeaders = fields.get('SignedHeaders');
  const signature = fields.get('Signature');
  if (!credential || !signedHeaders || !signature) {
    throw errors.incompleteSignature(
      `Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters. Authorization=${authorization}`,
    );
  }
  return {
    ...parseCredentialScope(credential),
    signedHeaders: signedHeaders.split(';'),
    signature,
    amzDate: requestDate(headers),
  };
}

function parsePresigned(pairs: ReadonlyArray<readonly [string, string]>): ParsedSignature {
  const get = (name: string) => pairs.find(([key]) => key === name)?.[1];
  const algorithm = get('X-Amz-Algorithm');
  const credential = get('X-Amz-Credential');
  const signedHeaders = get('X-Amz-SignedHeaders');
  const signature = get('X-Amz-Signature');
  const amzDate = get('X-Amz-Date');
  const expires = get('X-Amz-Expires');
  if (!algorithm || !credential || !signedHeaders || !signature || !amzDate || !expires) {
    throw errors.incompleteSignature(
      'A presigned request needs X-Amz-Algorithm, X-Amz-Credential, X-Amz-SignedHeaders, X-Amz-Signature, X-Amz-Date and X-Amz-Expires.',
    );
  }
  if (algorithm !== ALGORITHM) {
    throw errors.incompleteSignature(
      `Unsupported X-Amz-Algorithm '${algorithm}': only ${ALGORITHM} is accepted.`,
    );
  }
  const expiresSeconds = Number(expires);
  if (!/^\d+$/.test(expires) || expiresSeconds < 1 || expiresSeconds > MAX_PRESIGNED_EXPIRES_SECONDS) {
    throw errors.incompleteSignature(
      `X-Amz-Expires must be between 1 and ${MAX_PRESIGNED_EXPIRES_SECONDS} seconds, got '${expires}'.`,
    );
  }
  checkIsoBasicDate(amzDate);
  return {
    ...parseCredentialScope(credential),
    signedHeaders: signedHeaders.split(';'),
    signature,
    amzDate,
    expiresSeconds,
  };
}

/** `X-Amz-Date` (ISO 8601 basic), or an HTTP `Date` header turned into that form. */
function requestDate(headers: ReadonlyMap<string, string>): string {
  const amzDate = headers.get('x-amz-date');
  if (amzDate !== undefined) {
    checkIsoBasicDate(amzDate);
    return amzDate;
  }
  const date = headers.get('date');
  const parsed = date === undefined ? Number.NaN : Date.parse(date);
  if (Number.isNaN(parsed)) {
    throw errors.incompleteSignature(
      "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.",
    );
  }
  return isoBasic(parsed);
}

const ISO_BASIC = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

function checkIsoBasicDate(value: string): void {
  if (!ISO_BASIC.test(value) || Number.isNaN(parseIsoBasic(value))) {
    throw errors.incompleteSignature(
      `Date must be in ISO-8601 'basic format' (YYYYMMDD'T'HHMMSS'Z'), got '${value}'.`,
    );
  }
}

function parseIsoBasic(value: string): number {
  const [, y, mo, d, h, mi, s] = ISO_BASIC.exec(value) ?? [];
  return Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}Z`);
}

export function isoBasic(ms: number): string {
  return new Date(ms).toISOString().replace(/[:-]|\.\d{3}/g, '');
}

function checkScope(parsed: ParsedSignature, region: string, service: string): void {
  if (parsed.terminator !== 'aws4_request') {
    throw errors.signatureDoesNotMatch(
      `Credential should be scoped with a valid terminator: 'aws4_request', not '${parsed.terminator}'.`,
    );
  }
  // SNS requests come to the SQS API's root, signed for their own service (server/sns-entry.ts).
  const accepted = service === SERVICE ? [SERVICE, 'sns'] : [service];
  if (!accepted.includes(parsed.service)) {
    throw errors.signatureDoesNotMatch(`Credential should be scoped to correct service: '${service}'.`);
  }
  if (parsed.region !== region) {
    throw errors.signatureDoesNotMatch(
      `Credential should be scoped to a valid region, not '${parsed.region}'.`,
    );
  }
  if (parsed.scopeDate !== parsed.amzDate.slice(0, 8)) {
    throw errors.signatureDoesNotMatch(
      `Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '${parsed.scopeDate}' != '${parsed.amzDate.slice(0, 8)}'.`,
    );
  }
}

/**
 * AWS's rule and wording: a header-signed request must be within 15 minutes of the server's time either
 * way; a presigned one is good from its date (less the same skew) until its date plus X-Amz-Expires.
 */
function checkTime(parsed: ParsedSignature, now: number): void {
  const signedAt = parseIsoBasic(parsed.amzDate);
  if (signedAt > now + MAX_CLOCK_SKEW_MS) {
    throw errors.signatureDoesNotMatch(
      `Signature not yet current: ${parsed.amzDate} is still later than ${isoBasic(now + MAX_CLOCK_SKEW_MS)} (${isoBasic(now)} + 15 min.)`,
    );
  }
  if (parsed.expiresSeconds === undefined) {
    if (signedAt < now - MAX_CLOCK_SKEW_MS) {
      throw errors.signatureDoesNotMatch(
        `Signature expired: ${parsed.amzDate} is now earlier than ${isoBasic(now - MAX_CLOCK_SKEW_MS)} (${isoBasic(now)} - 15 min.)`,
      );
    }
    return;
  }
  const expiresAt = signedAt + parsed.expiresSeconds * 1000;
  if (now > expiresAt) {
    throw errors.signatureDoesNotMatch(
      `Signature expired: ${isoBasic(expiresAt)} is now earlier than ${isoBasic(now)} (X-Amz-Date ${parsed.amzDate} + ${parsed.expiresSeconds} sec.)`,
    );
  }
}

/** Name/value pairs of a raw query string, percent-decoded; order and repeats kept. */
function parseQuery(query: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const part of query.split('&')) {
    if (part === '') continue;
    const equals = part.indexOf('=');
    const name = equals < 0 ? part : part.slice(0, equals);
    const value = equals < 0 ? '' : part.slice(equals + 1);
    pairs.push([percentDecode(name), percentDecode(value)]);
  }
  return pairs;
}

function percentDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw errors.malformed('The request query string is not valid percent-encoded UTF-8.');
  }
}

/** RFC 3986 encoding as SigV4 wants it: everything but A-Z a-z 0-9 - _ . ~ as %XX. */
function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

function canonicalUri(path: string): string {
  if (path === '') return '/';
  return path
    .split('/')
    .map((segment) => uriEncode(segment))
    .join('/');
}

function canonicalQuery(pairs: ReadonlyArray<readonly [string, string]>): string {
  return pairs
    .map(([name, value]) => [uriEncode(name), uriEncode(value)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

function canonicalHeaderValues(rawHeaders: readonly string[]): Map<string, string> {
  const values = new Map<string, string>();
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] as string).toLowerCase();
    const value = (rawHeaders[i + 1] as string).trim().replace(/\s+/g, ' ');
    const previous = values.get(name);
    values.set(name, previous === undefined ? value : `${previous},${value}`);
  }
  return values;
}

const sha256Hex = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');

const signingKeys = new Map<string, Buffer>();

/** The derived key changes only daily, so it is kept (a handful of entries: keys × days × regions). */
function signingKey(secret: string, date: string, region: string, service: string): Buffer {
  const cacheKey = `${secret}\n${date}\n${region}\n${service}`;
  let key = signingKeys.get(cacheKey);
  if (!key) {
    const hmac = (k: string | Buffer, data: string) => createHmac('sha256', k).update(data).digest();
    key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
    if (signingKeys.size > 1000) signingKeys.clear();
    signingKeys.set(cacheKey, key);
  }
  return key;
}
