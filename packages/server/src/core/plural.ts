/** "1 message", "2 messages": a count with its noun, for what people read (logs, alarms, the CLI). */
export function countOf(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
