import { startSluice } from 'sluice';
import { freshDatabase } from '../../tools/postgres.ts';
import { useServer } from './server.ts';

/** A server a test talks to over HTTP, on one of the stores users run. */
export interface StoreBackend {
  endpoint: string;
  close(): Promise<void>;
}

export interface BackendOptions {
  /** `--strict-policies`: deliveries AWS would refuse are refused. */
  strictPolicies?: boolean;
}

/**
 * One server per store: SQLite as `sluice serve` starts it (a process of its own), and a node on a fresh
 * PostgreSQL database (dropped on close).
 */
export const STORE_BACKENDS: ReadonlyArray<
  readonly [string, (options?: BackendOptions) => Promise<StoreBackend>]
> = [
  ['SQLite', async (options) => useServer({ args: options?.strictPolicies ? ['--strict-policies'] : [] })],
  [
    'PostgreSQL',
    async (options) => {
      const database = await freshDatabase();
      const node = await startSluice({
        port: 0,
        storeUrl: database.url,
        logLevel: 'silent',
        dataDir: ':memory:',
        strictPolicies: options?.strictPolicies,
      });
      return {
        endpoint: node.endpoint,
        close: async () => {
          await node.close();
          await database.drop();
        },
      };
    },
  ],
];
