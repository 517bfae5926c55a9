/**
 * Starts fauxqs (an in-memory SQS emulator from npm) on a free port and prints the line the bench's
 * spawn helper waits for. Run as its own process so its PID and RSS are the emulator's alone.
 */
import { startFauxqs } from 'fauxqs';

const server = await startFauxqs({ port: 0, logger: false });
process.stdout.write(`listening on http://127.0.0.1:${server.port}\n`);
const stop = (): void => {
  void server.stop().finally(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
