// @ts-check
/**
 * Talking to the server: its own SQS JSON API (X-Amz-Target requests) and its /api/* and /alarms pages, same
 * origin. With access keys configured, the session cookie of the sign-in form authenticates every request.
 * The answers' types are the server's own, imported from its sources, so that the two cannot drift apart.
 *
 * @import { ActionInputs, ActionName, ActionOutputs } from '../../src/core/api-types.ts'
 * @import { OverviewAnswer } from '../../src/server/console-api.ts'
 */
import { byId } from './dom.js';

/** An error the server answered, with its AWS error code (`AccessDenied`, `InvalidParameterValue`…). */
export class ServerError extends Error {
  /**
   * @param {string} what
   * @param {string} code
   * @param {string} detail
   */
  constructor(what, code, detail) {
    super(`${what}: ${code}: ${detail}`);
    this.code = code;
    this.detail = detail;
  }
}

/**
 * What a refusal's body may hold: an SQS error (`__type`, `message`) or a page's (`Message`, `error`).
 * @typedef {{ __type?: string, message?: string, Message?: string, error?: string }} Refusal
 */

/**
 * The answer's JSON, or a ServerError naming the error code of a refusal.
 * @template Answer
 * @param {string} what
 * @param {Response} response
 * @returns {Promise<Answer>}
 */
async function answerOf(what, response) {
  const text = await response.text();
  /** @type {Refusal} */
  let output = {};
  try {
    output = text ? JSON.parse(text) : {};
  } catch {}
  // The server's JSON is of the type its route answers with, the type the caller names.
  if (response.ok) return /** @type {Answer} */ (output);
  if (response.status === 401) signInAgain();
  const code = String(output.__type ?? `HTTP ${response.status}`)
    .split('#')
    .pop();
  if (code === 'MissingAuthenticationTokenException') signInAgain();
  throw new ServerError(what, String(code), output.message ?? output.Message ?? output.error ?? '');
}

/**
 * @template {ActionName} Action
 * @param {Action} action
 * @param {ActionInputs[Action]} input
 * @returns {Promise<ActionOutputs[Action]>}
 */
export async function sqs(action, input) {
  const response = await fetch('/', {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` },
    body: JSON.stringify(input),
  });
  return answerOf(action, response);
}

/**
 * An SNS action through the server's SNS API, which speaks only the Query protocol (a form in, XML out, as in
 * every SDK): the answer's document, or a ServerError with SNS's error code (`NotFound`, `AuthorizationError`…).
 * @param {string} action
 * @param {Record<string, string>} [params]
 * @returns {Promise<Document>}
 */
export async function sns(action, params = {}) {
  const response = await fetch('/', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ Action: action, Version: '2010-03-31', ...params }),
  });
  const text = await response.text();
  if (response.status === 401) signInAgain();
  const document = new DOMParser().parseFromString(text, 'application/xml');
  if (response.ok) return document;
  const code = document.querySelector('Error > Code')?.textContent ?? `HTTP ${response.status}`;
  throw new ServerError(action, code, document.querySelector('Error > Message')?.textContent ?? '');
}

/**
 * A page's JSON; `Answer` names its type, one of the server's.
 * @template Answer
 * @param {string} path
 * @returns {Promise<Answer>}
 */
export async function api(path) {
  return answerOf(path, await fetch(path));
}

/**
 * @template Answer
 * @param {string} path
 * @param {object} input
 * @returns {Promise<Answer>}
 */
export async function apiPost(path, input) {
  const response = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(input),
  });
  return answerOf(path, response);
}

/** The session ended (expired, signed out elsewhere, server restarted): the server shows the sign-in form. */
function signInAgain() {
  location.reload();
}

let account = '000000000000';
/** @param {string} name */
export const queueUrl = (name) => `${location.origin}/${account}/${name}`;
/** Every queue's ARN is this prefix and its name; /api/overview says what it is. */
export let arnPrefix = `arn:aws:sqs:us-east-1:${account}:`;
/** The server's clock less this browser's, as of the last overview (a server may run on another clock). */
let serverClockOffset = 0;
export const serverNow = () => Date.now() + serverClockOffset;

/**
 * The overview's answer for one query, remembering the account, ARN prefix and time it reports.
 * @param {{ filter: string } | { queue: string }} query
 */
export async function loadOverview(query) {
  /** @type {OverviewAnswer} */
  const data = await api(`/api/overview?${new URLSearchParams(query)}`);
  account = data.accountId;
  arnPrefix = data.queueArnPrefix;
  serverClockOffset = data.now - Date.now();
  if (data.signedInAs) {
    byId('signed-in-as').textContent = `Signed in as ${data.signedInAs}`;
    byId('sign-out').hidden = false;
  }
  return data;
}

/** Names of the queues (ListQueues answers up to 1,000), for pickers, which must not depend on the overview's cap. */
export async function queueNames() {
  const { QueueUrls: urls = [] } = await sqs('ListQueues', {});
  return urls.map((url) => decodeURIComponent(url.split('/').pop() ?? '')).sort();
}
