import type pg from 'pg';

/** Connections a node keeps at most, unless told otherwise (`--store-connections`). */
export const DEFAULT_MAX_CONNECTIONS = 10;

/** The statement runner of a transaction or of the pool (a single statement is atomic on its own). */
export interface Db {
  query<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>>;
}

/**
 * Runs one statement as a named prepared statement: each connection parses and plans it once. The name is
 * derived from the text, so the same text always shares one name.
 */
export function run<R extends pg.QueryResultRow = pg.QueryResultRow>(
  db: Db,
  text: string,
  values: unknown[] = [],
): Promise<pg.QueryResult<R>> {
  return db.query<R>({ name: statementName(text), text, values });
}

const statementNames = new Map<string, string>();

function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `sluice_${statementNames.size + 1}`;
    statementNames.set(text, name);
  }
  return name;
}
