import type { Clock } from '#toolkit/clock';
import type { AlarmNotification } from '../core/dlq-alarms.ts';
import type { Logger } from './logger.ts';

/** Whether `value` can be an alarm webhook: an absolute http(s) URL (checked once, for flags and config alike). */
export function isWebhookUrl(value: unknown): boolean {
  if (typeof value !== 'string' || !URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === 'http:' || protocol === 'https:';
}

export interface WebhookOptions {
  urls: string[];
  clock: Clock;
  logger: Logger;
  /** Attempts per notification and URL, the first included. */
  attempts?: number;
  /** Delay before the second attempt; doubles for each one after. */
  retryDelayMs?: number;
  /** A receiver that has not answered in this long counts as failed. */
  timeoutMs?: number;
}

/**
 * POSTs each alarm notification as JSON to every configured URL. A 2xx answer is delivery; anything else,
 * or no answer in time, is retried with doubling delays, then logged as an error (the alarm's WARN log line
 * and gauge remain, so a dead webhook never hides an alarm).
 */
export function webhookNotifier(options: WebhookOptions): (notification: AlarmNotification) => void {
  const attempts = options.attempts ?? 4;
  const retryDelayMs = options.retryDelayMs ?? 1000;
  const timeoutMs = options.timeoutMs ?? 5000;
  const post = async (url: string, body: string): Promise<void> => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'sluice-dlq-alarm' },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
  };
  const deliver = (url: string, body: string, attempt: number, queue: string) => {
    post(url, body).then(
      () => options.logger.debug({ url, queue, attempt }, 'alarm webhook delivered'),
      (error: unknown) => {
        const reason = (error as Error).message;
        if (attempt >= attempts) {
          options.logger.error({ url, queue, attempts, reason }, 'alarm webhook failed, giving up');
          return;
        }
        options.logger.warn({ url, queue, attempt, reason }, 'alarm webhook failed, retrying');
        options.clock.setTimer(retryDelayMs * 2 ** (attempt - 1), () =>
          deliver(url, body, attempt + 1, queue),
        );
      },
    );
  };
  return (notification) => {
    const body = JSON.stringify({ source: 'sluice', type: 'dlq-alarm', ...notification });
    for (const url of options.urls) deliver(url, body, 1, notification.queue);
  };
}
