/**
 * A minimal in-memory SQS (JSON protocol) that does as little as possible: it measures the ceiling
 * of the bench client on this machine, so a Sluice figure can be told apart from a harness limit.
 * Only what the scenarios call; no visibility timeouts (in-flight messages never come back).
 * Run: node --import tsx bench/null-server.ts [--port P]; prints "listening on http://127.0.0.1:P".
 */
import { keepNothing, portFlag, serveMinimalSqs } from './minimal-sqs.ts';

serveMinimalSqs(keepNothing, portFlag(process.argv));
