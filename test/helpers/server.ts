import {
  type RunningServer,
  removeDataDir,
  type StartOptions,
  startServer,
} from '../../tools/sluice-process.ts';

// The tests' many importers keep finding the server process helpers here.
export {
  type RunningServer,
  removeDataDir,
  SLUICE_CLI,
  type StartOptions,
  startServer,
} from '../../tools/sluice-process.ts';

/**
 * The server a test file talks to. With `SLUICE_TEST_ENDPOINT` set (e.g. a peer SQS server such as
 * moto, while Sluice's own server is not ready, or a Sluice started by hand), the tests use that
 * endpoint and start nothing; otherwise they start their own Sluice.
 */
export interface TestServer {
  readonly endpoint: string;
  /** The process we started, or undefined when an external endpoint is in use. */
  readonly server: RunningServer | undefined;
  /** Stops the server we started; does nothing for an external endpoint. */
  close(): Promise<void>;
}

export const EXTERNAL_ENDPOINT = process.env.SLUICE_TEST_ENDPOINT || undefined;

/** Reason to pass to `test(..., { skip })` for tests that must kill or restart the server. */
export const NEEDS_OWN_SERVER = EXTERNAL_ENDPOINT
  ? `needs a server it can kill or restart; SLUICE_TEST_ENDPOINT=${EXTERNAL_ENDPOINT} is external`
  : false;

export async function useServer(options: StartOptions = {}): Promise<TestServer> {
  if (EXTERNAL_ENDPOINT) {
    return { endpoint: EXTERNAL_ENDPOINT.replace(/\/+$/, ''), server: undefined, close: async () => {} };
  }
  const server = await startServer(options);
  return {
    endpoint: server.endpoint,
    server,
    close: async () => {
      await server.stop();
      if (!options.dataDir) removeDataDir(server.dataDir);
    },
  };
}
