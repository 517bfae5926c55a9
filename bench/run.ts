/**
 * `npm run bench`: throughput, latency and memory of Sluice against moto_server measured in the
 * same run. See bench/README.md for the scenarios and flags.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { flagsOf } from '../tools/flags.ts';
import { RssSampler, readRss } from '../tools/rss.ts';
import { type Options, parseArgs, USAGE } from './args.ts';
import { makeClient } from './client.ts';
import { type ConsumerBench, consumerBench, renderConsumerBench } from './consumer.ts';
import { cpuMeter } from './cpu.ts';
import { runCpuStages } from './cpu-stages.ts';
import { fairness, fifoComparison } from './fifo-and-fair.ts';
import { machineFacts } from './machine.ts';
import { type MetricsCost, metricsCost, renderMetricsCost } from './metrics-cost.ts';
import { runPeers } from './peers/run.ts';
import { type PostgresBenchResult, postgresComparison, renderPostgres } from './postgres.ts';
import { type ProducerComparison, producerComparison, renderProducerComparison } from './producer.ts';
import {
  evaluate,
  type MillionOutcome,
  type RestartOutcome,
  renderEvaluation,
  renderTable,
  type TargetResult,
} from './report.ts';
import {
  consume,
  createQueue,
  firstMessage,
  longPoll,
  million,
  mixed,
  produce,
  queueDepth,
} from './scenarios.ts';
import { errorText, now, round, sleep } from './stats.ts';
import {
  BASELINE,
  type RunningTarget,
  runMain,
  startTarget,
  TARGET_LABELS,
  type TargetName,
} from './targets.ts';

const started = now();

/** The quiet tenant of the fair-queue scenario sends this many messages (as in the issue's test). */
const FAIR_QUIET_MESSAGES = 100;

function log(message: string): void {
  const s = ((now() - started) / 1000).toFixed(1).padStart(6);
  process.stdout.write(`[${s}s] ${message}\n`);
}

async function scenario<T>(
  result: TargetResult,
  name: string,
  tlog: (m: string) => void,
  fn: () => Promise<T>,
  serverPid = result.pid,
): Promise<T | undefined> {
  const t0 = now();
  tlog(`${name}: start`);
  const cpu = serverPid === undefined ? null : cpuMeter(serverPid);
  try {
    const value = await fn();
    const used = cpu?.();
    if (used) result.cpu[name] = used;
    const cpuText = used ? `, CPU client ${used.clientPct}% server ${used.serverPct ?? '?'}%` : '';
    tlog(`${name}: done in ${((now() - t0) / 1000).toFixed(1)}s${cpuText}`);
    return value;
  } catch (err) {
    result.errors[name] = errorText(err);
    tlog(`${name}: FAILED ${errorText(err)}`);
    return undefined;
  }
}

async function withTarget<T>(
  name: TargetName,
  options: Options,
  fn: (target: RunningTarget) => Promise<T>,
): Promise<T> {
  const target = await startTarget(name, options.sluiceBin);
  try {
    return await fn(target);
  } finally {
    await target.stop();
  }
}

async function runTarget(name: TargetName, options: Options): Promise<TargetResult> {
  const label = TARGET_LABELS[name];
  const tlog = (m: string): void => log(`${label}: ${m}`);
  const messages = name === BASELINE ? options.baselineMessages : options.messages;
  const result: TargetResult = { name, label, status: 'ok', messages, rssAfter: {}, cpu: {}, errors: {} };
  tlog('starting server');
  try {
    await withTarget(name, options, async (target) => {
      result.endpoint = target.endpoint;
      result.pid = target.pid;
      tlog(`listening on ${target.endpoint}, pid ${target.pid}`);
      const sampler = new RssSampler(target.pid);
      sampler.start();
      const client = makeClient(options.client, target.endpoint);
      const ctx = { client, log: tlog };
      const rssNow = (): number | undefined => {
        const r = sampler.read();
        return r ? round(r.rssMiB, 1) : undefined;
      };
      result.rssAfter.start = rssNow();
      try {
        const phaseMs = options.phaseTimeout * 1000;
        const produced = await scenario(result, 'produce', tlog, async () => {
          const queueUrl = await createQueue(client, 'pc');
          const p = await produce(ctx, queueUrl, messages, options.producers, phaseMs);
          return { queueUrl, ...p };
        });
        result.produce = produced?.result;
        result.rssAfter.produce = rssNow();
        if (produced) {
          result.consume = await scenario(result, 'consume', tlog, () =>
            consume(
              ctx,
              produced.queueUrl,
              produced.acked,
              produced.result.acked,
              options.consumers,
              phaseMs,
              5_000,
            ),
          );
          result.rssAfter.consume = rssNow();
        }
        result.mixed = await scenario(result, 'mixed', tlog, async () => {
          const queueUrl = await createQueue(client, 'mixed');
          return mixed(
            ctx,
            queueUrl,
            options.duration,
            options.producers,
            options.consumers,
            options.backlog,
            30_000,
            5_000,
          );
        });
        result.rssAfter.mixed = rssNow();
        result.longPoll = await scenario(result, 'longPoll', tlog, async () => {
          const queueUrl = await createQueue(client, 'longpoll');
          return longPoll(ctx, queueUrl, options.longPoll, options.settleMs, 120_000);
        });
        result.rssAfter.longPoll = rssNow();
        if (name !== BASELINE && name !== 'null') {
          result.fifo = await scenario(result, 'fifo', tlog, () =>
            fifoComparison(ctx, messages, options.producers, phaseMs),
          );
          result.fair = await scenario(result, 'fair', tlog, () =>
            fairness(ctx, options.fairBacklog, FAIR_QUIET_MESSAGES, options.producers, phaseMs),
          );
        }
        const final = sampler.read();
        if (final) result.peakHwmMiB = round(final.hwmMiB, 1);
        result.maxSampledMiB = round(sampler.maxSampledMiB(), 1);
      } finally {
        sampler.stop();
        client.close();
      }
    });
  } catch (err) {
    if (result.pid === undefined) {
      result.status = 'failed-to-start';
      result.startError = errorText(err);
      tlog(`could not start: ${result.startError}`);
      return result;
    }
    result.errors.server = errorText(err);
    tlog(`error: ${result.errors.server}`);
  }
  tlog('server stopped');
  if (options.million && name !== BASELINE) await runMillion(result, options, tlog);
  return result;
}

/**
 * A fresh server, filled with millionMessages waiting messages; RSS read after the fill. Then it is stopped
 * with SIGTERM and started again on the same data directory: time to the first message, RSS, and the count.
 */
async function runMillion(result: TargetResult, options: Options, tlog: (m: string) => void): Promise<void> {
  tlog('million: starting a fresh server');
  const dataDir = mkdtempSync(join(tmpdir(), 'sluice-bench-million-'));
  try {
    let queueUrl: string | undefined;
    const target = await startTarget(result.name, options.sluiceBin, { dataDir });
    let stopMs = 0;
    try {
      const sampler = new RssSampler(target.pid, 500);
      sampler.start();
      const client = makeClient(options.client, target.endpoint);
      try {
        const outcome = await scenario(
          result,
          'million',
          tlog,
          async (): Promise<MillionOutcome> => {
            queueUrl = await createQueue(client, 'million');
            const ctx = { client, log: tlog };
            const m = await million(
              ctx,
              queueUrl,
              options.millionMessages,
              options.millionProducers,
              options.millionTimeout * 1000,
            );
            await sleep(2_000);
            return { ...m, rssAfter: sampler.read(), maxSampledMiB: round(sampler.maxSampledMiB(), 1) };
          },
          target.pid,
        );
        if (outcome) {
          result.million = outcome;
          const r = outcome.rssAfter;
          tlog(`million: ${outcome.produce.acked} waiting, RSS ${r ? round(r.rssMiB, 1) : '?'} MiB`);
        }
      } finally {
        sampler.stop();
        client.close();
      }
    } finally {
      // A shutdown cut short by SIGKILL would make the restart a crash recovery: give it the fill's time limit.
      const t0 = now();
      await target.stop(options.millionTimeout * 1000);
      stopMs = round(now() - t0, 0);
    }
    const m = result.million;
    if (!m || queueUrl === undefined) return;
    tlog(`million: stopped (SIGTERM) in ${stopMs} ms; restarting on the same data directory`);
    try {
      m.restart = await restartWithMillion(result.name, options, dataDir, queueUrl, m.produce.acked, stopMs);
      const r = m.restart;
      tlog(
        `million: restarted, first message after ${r.readyMs} ms (listening after ${r.listeningMs} ms, ` +
          `slowest /health meanwhile ${r.slowestHealthMs} ms), ` +
          `RSS ${r.rssSettled ? round(r.rssSettled.rssMiB, 1) : '?'} MiB, ${r.intact ? 'all' : 'NOT all'} messages held`,
      );
    } catch (err) {
      m.restartError = errorText(err);
      tlog(`million: restart FAILED ${m.restartError}`);
    }
  } catch (err) {
    result.millionStartError = errorText(err);
    tlog(`million: could not run: ${result.millionStartError}`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** GET /health every 50 ms, on connections of its own, until stopped; `stop` gives the slowest answer, ms. */
function healthProbe(endpoint: string): { stop(): Promise<number> } {
  let slowest = 0;
  let running = true;
  const probing = (async () => {
    while (running) {
      const t0 = now();
      try {
        await (await fetch(`${endpoint}/health`)).arrayBuffer();
      } catch {
        // A failed probe still took its time; the first receive's errors are counted by firstMessage.
      }
      slowest = Math.max(slowest, now() - t0);
      await sleep(50);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await probing;
      return round(slowest, 0);
    },
  };
}

/** Starts a server on the filled data directory and times it from spawn to the first message received. */
async function restartWithMillion(
  name: TargetName,
  options: Options,
  dataDir: string,
  filledQueueUrl: string,
  filled: number,
  stopMs: number,
): Promise<RestartOutcome> {
  const t0 = now();
  const target = await startTarget(name, options.sluiceBin, { dataDir });
  const listeningMs = round(now() - t0, 0);
  const client = makeClient(options.client, target.endpoint);
  try {
    // The new server listens on another port: same queue path, new origin.
    const queueUrl = new URL(new URL(filledQueueUrl).pathname, target.endpoint).href;
    const health = healthProbe(target.endpoint);
    const first = await firstMessage(client, queueUrl, options.millionTimeout * 1000);
    const readyMs = round(now() - t0, 0);
    const slowestHealthMs = await health.stop();
    const rssReady = readRss(target.pid);
    await sleep(2_000);
    const rssSettled = readRss(target.pid);
    const depth = await queueDepth(client, queueUrl);
    return {
      stopMs,
      listeningMs,
      readyMs,
      slowestHealthMs,
      attempts: first.attempts,
      failedReceives: first.errors,
      rssReady,
      rssSettled,
      depth,
      intact: depth.visible + depth.inFlight === filled,
    };
  } finally {
    client.close();
    await target.stop();
  }
}

interface ToolkitResult {
  consumer?: ConsumerBench;
  producer?: ProducerComparison;
  errors: Record<string, string>;
}

/** The client toolkit's comparisons, each against its baseline on one fresh Sluice (durable). */
async function runToolkit(options: Options): Promise<ToolkitResult> {
  const tlog = (m: string): void => log(`client toolkit: ${m}`);
  const result: ToolkitResult = { errors: {} };
  const attempt = async <T>(name: string, fn: () => Promise<T>): Promise<T | undefined> => {
    const t0 = now();
    tlog(`${name}: start`);
    try {
      const value = await fn();
      tlog(`${name}: done in ${((now() - t0) / 1000).toFixed(1)}s`);
      return value;
    } catch (err) {
      result.errors[name] = errorText(err);
      tlog(`${name}: FAILED ${errorText(err)}`);
      return undefined;
    }
  };
  await attempt('server', () =>
    withTarget('durable', options, async (target) => {
      tlog(`sluice durable on ${target.endpoint}, pid ${target.pid}`);
      const phaseMs = options.phaseTimeout * 1000;
      result.consumer = await attempt('consumer', () =>
        consumerBench(target.endpoint, options.toolkitMessages, phaseMs, tlog),
      );
      result.producer = await attempt('producer', () =>
        producerComparison(target.endpoint, options.toolkitMessages),
      );
    }),
  );
  return result;
}

async function main(): Promise<number> {
  if (process.argv.includes('--peers')) return runPeers(process.argv.slice(2), log);
  if (process.argv.includes('--cpu-stages')) return runCpuStages(process.argv.slice(2), log);
  const flags = flagsOf(USAGE, () => parseArgs(process.argv.slice(2)));
  if ('exitCode' in flags) return flags.exitCode;
  const { options } = flags;
  const machine = machineFacts();
  log(
    `machine: ${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGiB} GiB, load ${machine.loadAverage1m}`,
  );
  log(`node ${machine.node}, ${machine.platform}, commit ${machine.commit}, ${machine.date}`);
  log(
    `targets ${options.targets.join(',')}; client ${options.client}; N=${options.messages} (moto ${options.baselineMessages}), ` +
      `${options.producers} producers, ${options.consumers} consumers, mixed ${options.duration}s, ` +
      `long-poll x${options.longPoll}${options.million ? `, million ${options.millionMessages}` : ''}`,
  );
  const results: TargetResult[] = [];
  for (const name of options.targets) results.push(await runTarget(name, options));
  let metrics: MetricsCost | undefined;
  let metricsError: string | undefined;
  if (options.metricsCostRounds > 0) {
    try {
      metrics = await metricsCost(
        {
          rounds: options.metricsCostRounds,
          durationS: options.duration,
          producers: options.producers,
          consumers: options.consumers,
          backlog: options.backlog,
          sluiceBin: options.sluiceBin,
        },
        log,
      );
    } catch (err) {
      metricsError = errorText(err);
      log(`metrics cost: FAILED ${metricsError}`);
    }
  }
  let postgres: PostgresBenchResult | undefined;
  if (options.postgresMessages > 0) {
    try {
      postgres = await postgresComparison({
        messages: options.postgresMessages,
        concurrency: Math.min(options.producers, 8),
        wakeSamples: options.postgresWakes,
        log,
      });
    } catch (err) {
      log(`postgres bench: could not run: ${errorText(err)}`);
    }
  }
  const toolkit = options.toolkit ? await runToolkit(options) : undefined;
  const evaluations = evaluate(results, options);
  const elapsedS = round((now() - started) / 1000, 1);
  process.stdout.write('\n');
  process.stdout.write(
    `machine: ${machine.cpuModel}, ${machine.cores} cores, node ${machine.node}, ${machine.date}, ` +
      `load at start ${machine.loadAverage1m}, bench took ${elapsedS}s\n\n`,
  );
  process.stdout.write(`${renderTable(results, options)}\n\n`);
  process.stdout.write(`Goals (from this run):\n${renderEvaluation(evaluations)}\n`);
  if (postgres) process.stdout.write(`\n${renderPostgres(postgres)}\n`);
  if (metrics) process.stdout.write(`\n${renderMetricsCost(metrics)}\n`);
  if (metricsError) process.stdout.write(`\nMetrics cost: FAILED ${metricsError}\n`);
  if (toolkit) {
    process.stdout.write('\nClient toolkit (sluice durable, @aws-sdk/client-sqs, same run):\n');
    if (toolkit.consumer) process.stdout.write(`${renderConsumerBench(toolkit.consumer)}\n`);
    if (toolkit.producer) process.stdout.write(`${renderProducerComparison(toolkit.producer)}\n`);
    for (const [name, error] of Object.entries(toolkit.errors))
      process.stdout.write(`${name} FAILED: ${error}\n`);
  }
  const failed = results.filter((r) => r.status !== 'ok');
  for (const r of failed) process.stdout.write(`NOTE: ${r.label} did not start: ${r.startError}\n`);
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(
    options.out,
    `${JSON.stringify({ machine, client: options.client, options, elapsedS, results, evaluations, postgres, metricsCost: metrics ?? metricsError ?? null, toolkit }, null, 2)}\n`,
  );
  log(`results written to ${options.out}`);
  return 0;
}

runMain('bench', main, (signal) => log(`${signal}: stopping servers`));
