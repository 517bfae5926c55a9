import type { AuditEntry } from '../../packages/server/src/store/triage.ts';

/** An audit entry as the store takes it (the core bounds its fields before): a purge, with this detail. */
export function auditEntry(detail: string | undefined, at = 1_000): AuditEntry {
  return {
    at,
    actor: 'AKIDOPS',
    via: 'signature',
    action: 'purge',
    source: 'orders-dlq',
    destination: undefined,
    count: 0,
    skipped: 0,
    detail,
  };
}
