import type { SqsService } from '../core/sqs-service.ts';
import type { MessageTriage } from '../core/triage.ts';
import type { JsonObject } from '../shared/json-object.ts';
import type { AuditEntry } from '../store/triage.ts';

/** The SQS actions an operator's console or CLI session writes to the audit trail. */
const AUDITED = new Set(['PurgeQueue', 'StartMessageMoveTask', 'CancelMessageMoveTask']);

/** Writes an audited action's entry once it succeeded, given its output. */
export type AuditFinish = (output: unknown) => Promise<void>;

/**
 * Called before an SQS request is carried out. Undefined, at once, for every action but a purge or a move
 * task's start or cancel, so that clients' traffic pays nothing; for those, when they come from the console
 * or the CLI (not applications, whose purges would bury the trail), what to call with the output once the
 * action succeeded. The counts are read before, as a purge leaves none to read.
 */
export type OperatorAudit = (
  action: string,
  input: JsonObject,
  who: () => { actor: string; via: AuditEntry['via'] },
) => Promise<AuditFinish | undefined> | undefined;

export function operatorAudit(service: SqsService, triage: MessageTriage): OperatorAudit {
  const waiting = async (name: string | undefined) => {
    const queue = name === undefined ? undefined : await service.queues.queueByName(name);
    if (!queue) return 0;
    const counts = await service.queues.counts(queue, service.clock.now());
    return counts.visible + counts.notVisible + counts.delayed;
  };
  const nameOf = (reference: unknown) =>
    typeof reference === 'string' ? reference.split(/[/:]/).at(-1) : undefined;
  return (action, input, who) => (AUDITED.has(action) ? finisher(action, input, who()) : undefined);

  async function finisher(
    action: string,
    input: JsonObject,
    who: { actor: string; via: AuditEntry['via'] },
  ): Promise<AuditFinish | undefined> {
    if (who.via === 'api') return undefined;
    const entry = { ...who, skipped: 0 };
    if (action === 'PurgeQueue') {
      const source = nameOf(input.QueueUrl) ?? '';
      const count = await waiting(source);
      return async () => {
        await triage.record({
          ...entry,
          action: 'purge',
          source,
          destination: undefined,
          count,
          detail: undefined,
        });
      };
    }
    if (action === 'StartMessageMoveTask') {
      const source = nameOf(input.SourceArn) ?? '';
      const count = await waiting(source);
      return async (output) => {
        await triage.record({
          ...entry,
          action: 'move-task',
          source,
          destination: nameOf(input.DestinationArn) ?? 'origin',
          count,
          detail: `task ${(output as { TaskHandle?: string }).TaskHandle}`,
        });
      };
    }
    const handle = typeof input.TaskHandle === 'string' ? input.TaskHandle : '';
    const task = await service.moveTasks.task(handle).catch(() => undefined);
    return async (output) => {
      await triage.record({
        ...entry,
        action: 'cancel-move-task',
        source: nameOf(task?.sourceArn) ?? '',
        destination: task ? (nameOf(task.destinationArn) ?? 'origin') : undefined,
        count: Number(
          (output as { ApproximateNumberOfMessagesMoved?: number }).ApproximateNumberOfMessagesMoved ?? 0,
        ),
        detail: `task ${handle}`,
      });
    };
  }
}
