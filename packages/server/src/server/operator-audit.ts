import type { Clock } from '#toolkit/clock';
import type { AuditTrail } from '../core/audit-trail.ts';
import type { MoveTasks } from '../core/move-tasks.ts';
import type { QueueDirectory } from '../core/queue-directory.ts';
import type { JsonObject } from '../shared/json-object.ts';
import type { AuditAction, AuditVia } from '../store/triage.ts';

/** The SQS actions that destroy or move messages, written to the audit trail whoever makes them. */
const AUDITED = new Set(['PurgeQueue', 'DeleteQueue', 'StartMessageMoveTask', 'CancelMessageMoveTask']);

/** Writes an audited action's entry once it succeeded, given its output. */
export type AuditFinish = (output: unknown) => Promise<void>;

/** Who made a request: the key (or "anonymous"), and how the request was authenticated. */
export interface Requester {
  actor: string;
  via: AuditVia;
}

/**
 * Called before an SQS request is carried out. Undefined, at once, for every action but those that destroy
 * or move messages (a purge, a queue's deletion, a move task's start or cancel), so that other traffic pays
 * nothing; for those, from any client, what to call with the output once the action succeeded. The counts
 * are read before, as a purge or a deletion leaves none to read.
 */
export type OperatorAudit = (
  action: string,
  input: JsonObject,
  who: () => Requester,
) => Promise<AuditFinish | undefined> | undefined;

/** What the audit reads of the core: the queues' counts before a purge or deletion, a move task's source. */
export interface OperatorAuditParts {
  queues: QueueDirectory;
  clock: Clock;
  moveTasks: Pick<MoveTasks, 'task'>;
}

export function operatorAudit(service: OperatorAuditParts, audit: AuditTrail): OperatorAudit {
  const waiting = async (name: string | undefined) => {
    const queue = name === undefined ? undefined : await service.queues.queueByName(name);
    if (!queue) return 0;
    const counts = await service.queues.counts(queue, service.clock.now());
    return counts.visible + counts.notVisible + counts.delayed;
  };
  const nameOf = (reference: unknown) =>
    typeof reference === 'string' ? reference.split(/[/:]/).at(-1) : undefined;
  return (action, input, who) => (AUDITED.has(action) ? finisher(action, input, who()) : undefined);

  async function finisher(action: string, input: JsonObject, who: Requester): Promise<AuditFinish> {
    const entry = { ...who, skipped: 0 };
    if (action === 'PurgeQueue' || action === 'DeleteQueue') {
      const source = nameOf(input.QueueUrl) ?? '';
      const count = await waiting(source);
      const recorded: AuditAction = action === 'PurgeQueue' ? 'purge' : 'delete-queue';
      return async () => {
        await audit.record({
          ...entry,
          action: recorded,
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
        await audit.record({
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
      await audit.record({
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
