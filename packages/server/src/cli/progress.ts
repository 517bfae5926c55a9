/**
 * A progress line for long work: `[######----------]  120 / 1,000  50.0 msg/s  ETA 18 s`. On a terminal it
 * redraws one line; otherwise (a log, CI) it prints a line at most every few seconds, so logs stay short.
 */
export class ProgressLine {
  private lastPrinted = 0;
  private readonly started = Date.now();

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly label: string,
  ) {}

  update(done: number, total: number, extra = ''): void {
    const now = Date.now();
    const tty = this.out.isTTY === true;
    if (!tty && now - this.lastPrinted < 2000 && done < total) return;
    this.lastPrinted = now;
    const line = this.render(done, total, extra);
    if (tty) this.out.write(`\r\x1b[2K${line}`);
    else this.out.write(`${line}\n`);
  }

  /** Ends the line (on a terminal) and prints a final one. */
  finish(message: string): void {
    if (this.out.isTTY === true) this.out.write('\r\x1b[2K');
    this.out.write(`${message}\n`);
  }

  render(done: number, total: number, extra: string): string {
    const width = 24;
    const share = total > 0 ? Math.min(1, done / total) : 1;
    const filled = Math.round(share * width);
    const seconds = (Date.now() - this.started) / 1000;
    const rate = seconds > 0 ? done / seconds : 0;
    const eta = rate > 0 && total > done ? `ETA ${formatSeconds((total - done) / rate)}` : '';
    const count = `${done.toLocaleString('en-US')} / ${total.toLocaleString('en-US')}`;
    return [
      `${this.label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`,
      count,
      `${rate.toFixed(1)} msg/s`,
      eta,
      extra,
    ]
      .filter((part) => part !== '')
      .join('  ');
  }
}

function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${Math.ceil(seconds % 60)} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.ceil((seconds % 3600) / 60)} min`;
}
