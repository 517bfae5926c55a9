/**
 * /metrics for Lambda event source mappings, per mapping (its UUID and function): invocations by result,
 * records sent, records filtered out, batch sizes and function durations.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import type { MappingObserver } from '../core/event-source/poller.ts';

const BATCH_BUCKETS = [1, 2, 5, 10, 25, 50, 100, 250, 1000, 10_000];
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900];

export function mappingMetrics(registry: Registry): MappingObserver {
  const labelNames = ['mapping', 'function'] as const;
  const invocations = new Counter({
    name: 'sluice_lambda_invocations_total',
    help: 'Invocations by event source mappings, by result (success, partial, function-error, timeout, unreachable).',
    labelNames: [...labelNames, 'result'],
    registers: [registry],
  });
  const records = new Counter({
    name: 'sluice_lambda_records_total',
    help: 'Records sent to functions by event source mappings.',
    labelNames,
    registers: [registry],
  });
  const filtered = new Counter({
    name: 'sluice_lambda_filtered_records_total',
    help: 'Records that no filter of the mapping matched, deleted without an invocation.',
    labelNames,
    registers: [registry],
  });
  const batchSize = new Histogram({
    name: 'sluice_lambda_batch_size',
    help: 'Records per invocation of an event source mapping.',
    labelNames,
    buckets: BATCH_BUCKETS,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'sluice_lambda_duration_seconds',
    help: "Time from an event source mapping's invocation to the function's answer (or its time-out).",
    labelNames,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  return {
    invoked(mapping, count, result, seconds) {
      const labels = { mapping: mapping.uuid, function: mapping.functionName };
      invocations.inc({ ...labels, result });
      records.inc(labels, count);
      batchSize.observe(labels, count);
      duration.observe(labels, seconds);
    },
    filteredOut(mapping, count) {
      filtered.inc({ mapping: mapping.uuid, function: mapping.functionName }, count);
    },
  };
}
