/** A consumer-side buffer for push-style clients (RabbitMQ, NATS): the broker pushes, next() takes. */
export class Inbox<T> {
  private items: T[] = [];
  private wake: (() => void) | null = null;

  push(item: T): void {
    this.items.push(item);
    this.wake?.();
    this.wake = null;
  }

  /** Up to max items; waits up to waitMs for the first. */
  async take(max: number, waitMs: number): Promise<T[]> {
    if (this.items.length === 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
    return this.items.splice(0, max);
  }
}
