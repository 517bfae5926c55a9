import { safeText } from './terminal-text.ts';

export interface TableColumn<T> {
  title: string;
  value: (row: T) => string;
  /** Right-aligned (numbers); left-aligned otherwise. */
  numeric?: boolean;
  /** Longer cells are cut to this many characters, the last one an ellipsis. */
  maxWidth?: number;
}

/**
 * The rows as a text table under a header line: each cell printed safely (see safeText), columns two spaces
 * apart, numbers right-aligned, text left-aligned, the last column unpadded.
 */
export function textTable<T>(columns: ReadonlyArray<TableColumn<T>>, rows: readonly T[]): string {
  const cells = [
    columns.map((column) => column.title),
    ...rows.map((row) => columns.map((column) => cut(safeText(column.value(row)), column.maxWidth))),
  ];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)));
  return cells
    .map((line) =>
      line
        .map((cell, i) => {
          if (i === columns.length - 1) return cell;
          return columns[i]!.numeric ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!);
        })
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** `time` (ms since the epoch) as `2026-12-05 06:20:11`, in UTC. */
export function utcTime(time: number): string {
  return new Date(time).toISOString().slice(0, 19).replace('T', ' ');
}

function cut(text: string, width: number | undefined): string {
  if (width === undefined || text.length <= width) return text;
  // By code points, so that no emoji is cut in half.
  return `${Array.from(text)
    .slice(0, width - 1)
    .join('')}…`;
}
