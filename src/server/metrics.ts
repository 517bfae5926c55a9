import type { AlarmState } from '../core/dlq-alarms.ts';

/** Prometheus text format for the DLQ alarms: one gauge of alarm state and one of visible messages per DLQ. */
export function alarmMetrics(states: AlarmState[]): string {
  const lines = [
    '# HELP sluice_dlq_alarm 1 while the dead-letter queue holds more visible messages than its threshold.',
    '# TYPE sluice_dlq_alarm gauge',
    ...states.map(
      (s) =>
        `sluice_dlq_alarm{queue="${label(s.queue)}",silenced="${s.silenced}"} ${s.state === 'ALARM' ? 1 : 0}`,
    ),
    '# HELP sluice_dlq_visible_messages Visible messages in the dead-letter queue at its last check.',
    '# TYPE sluice_dlq_visible_messages gauge',
    ...states.map((s) => `sluice_dlq_visible_messages{queue="${label(s.queue)}"} ${s.visible}`),
  ];
  return `${lines.join('\n')}\n`;
}

function label(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
