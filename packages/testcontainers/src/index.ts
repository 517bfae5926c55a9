/**
 * A Testcontainers module for Sluice: starts the Sluice image (built from the repository's Dockerfile), waits
 * until it answers /health, and gives the test its endpoint, an SDK client configuration, and the test mode's
 * clock and reset.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  advanceClock,
  reset,
  type ServerTime,
  serverTime,
  type TestModeOptions,
} from 'sluice-client/testing';
import {
  AbstractStartedContainer,
  type BoundPorts,
  GenericContainer,
  getContainerRuntimeClient,
  type StartedTestContainer,
  type WaitStrategy,
} from 'testcontainers';

export type { ServerTime };

/** The port the server listens on inside the container (the image's `EXPOSE`). */
export const SLUICE_PORT = 9324;
/** Where a config file given with withConfigFile is copied, for `sluice serve --config`. */
export const CONFIG_PATH = '/etc/sluice/config.json';
/** The image `podman build -t sluice .` (or `docker build`) makes from the repository's Dockerfile. */
export const DEFAULT_IMAGE = 'sluice:latest';
const DEFAULT_REGION = 'us-east-1';
/** An open server checks no signature: any key does. */
const ANY_KEY: AccessKey = { accessKeyId: 'test', secretAccessKey: 'test' };
/** Testcontainers' own default. */
const DEFAULT_STARTUP_TIMEOUT_MS = 60_000;

export interface AccessKey {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** What `new SQSClient(...)` of `@aws-sdk/client-sqs` (or any AWS SDK v3 client) needs to reach the server. */
export interface SluiceClientConfig {
  readonly endpoint: string;
  readonly region: string;
  readonly credentials: AccessKey;
}

/**
 * The Sluice server in a container. Without options it is the image's default: `sluice serve` on its data
 * volume, open (no access keys). Options add `serve` flags; start() starts it.
 */
export class SluiceContainer extends GenericContainer {
  private testClock = false;
  private inMemory = false;
  private configFile: string | undefined;
  private readonly keys: AccessKey[] = [];
  private region = DEFAULT_REGION;
  private readonly extraArguments: string[] = [];

  /** `image`: a Sluice image on the container runtime, by default `sluice:latest`. */
  constructor(image: string = DEFAULT_IMAGE) {
    super(image);
    this.withExposedPorts(SLUICE_PORT).withWaitStrategy(new HealthWaitStrategy());
  }

  /**
   * `--test-clock`: the server's clock moves when the test says so (advanceClock), and reset() forgets
   * every queue. With access keys, those calls are signed, as the server then requires.
   */
  withTestClock(): this {
    this.testClock = true;
    return this;
  }

  /** `--in-memory`: nothing is written to disk (the data volume stays empty). */
  withInMemory(): this {
    this.inMemory = true;
    return this;
  }

  /**
   * A config file on this machine (queues, alarms, access keys: docs/guide/config-file.md), copied into the
   * container and given to `sluice serve --config`. Its keys are not read here: give one to
   * getClientConfig().
   */
  withConfigFile(path: string): this {
    this.configFile = path;
    return this;
  }

  /**
   * `--credentials ID:SECRET` (repeatable): requests must be signed with one of these keys. The first is
   * the one getClientConfig() gives. (They show in the container's command line; a config file's do not.)
   */
  withCredentials(accessKeyId: string, secretAccessKey: string): this {
    this.keys.push({ accessKeyId, secretAccessKey });
    return this;
  }

  /** `--region`: the region of queue ARNs and of signatures, also in getClientConfig(). */
  withRegion(region: string): this {
    this.region = region;
    return this;
  }

  /** Any other `sluice serve` flags, e.g. `'--strict-receipt-handles'` (docs/guide/cli.md). */
  withServeArguments(...args: string[]): this {
    this.extraArguments.push(...args);
    return this;
  }

  override async start(): Promise<StartedSluiceContainer> {
    const serve = ['serve'];
    if (this.testClock) serve.push('--test-clock');
    if (this.inMemory) serve.push('--in-memory');
    if (this.configFile !== undefined) {
      // Readable by the image's user (node) whatever the file's owner and mode here.
      this.withCopyFilesToContainer([{ source: this.configFile, target: CONFIG_PATH, mode: 0o644 }]);
      serve.push('--config', CONFIG_PATH);
    }
    for (const key of this.keys) serve.push('--credentials', `${key.accessKeyId}:${key.secretAccessKey}`);
    if (this.region !== DEFAULT_REGION) serve.push('--region', this.region);
    const runtimeHost = (await getContainerRuntimeClient()).info.containerRuntime.host;
    if (isLoopback(runtimeHost)) this.publishOnLoopback();
    else serve.push('--allow-host', runtimeHost);
    this.withCommand([...serve, ...this.extraArguments]);

    try {
      return new StartedSluiceContainer(await super.start(), {
        testClock: this.testClock,
        region: this.region,
        key: this.keys[0],
      });
    } catch (error) {
      const reason = (error as Error).message;
      throw new Error(`Sluice did not start in a container of ${this.imageName.string}: ${reason}`, {
        cause: error,
      });
    }
  }

  /**
   * A container runtime on this machine (reached as `localhost`) gets the port published on 127.0.0.1 only,
   * as the project's container guide publishes it, so no other machine reaches the open queue. A remote one
   * (a Docker host by name or address, or the gateway when the test itself runs in a container) publishes
   * it on every address, and the server is told the name it is reached by: it checks the Host of every
   * request against DNS rebinding, and accepts only loopback names and those given with --allow-host.
   */
  private publishOnLoopback(): void {
    const port = `${SLUICE_PORT}/tcp`;
    // Docker's API type leaves PortBindings untyped.
    const bindings: { HostIp?: string; HostPort?: string }[] = this.hostConfig.PortBindings?.[port] ?? [
      { HostPort: '0' },
    ];
    this.hostConfig.PortBindings = {
      ...this.hostConfig.PortBindings,
      [port]: bindings.map((binding) => ({ ...binding, HostIp: '127.0.0.1' })),
    };
  }
}

interface StartedOptions {
  readonly testClock: boolean;
  readonly region: string;
  readonly key: AccessKey | undefined;
}

/** A started Sluice: its endpoint, a client configuration, and the test mode's clock and reset. */
export class StartedSluiceContainer extends AbstractStartedContainer {
  constructor(
    startedTestContainer: StartedTestContainer,
    private readonly options: StartedOptions,
  ) {
    super(startedTestContainer);
  }

  /** The SQS endpoint, e.g. `http://127.0.0.1:32771`; the queue URLs the server gives start with it. */
  getEndpoint(): string {
    return endpointOf(this.getHost(), this.getMappedPort(SLUICE_PORT));
  }

  /**
   * `new SQSClient(container.getClientConfig())`: the endpoint, the server's region, and the first key of
   * withCredentials(), or `credentials` (a key of the config file), or any key for an open server.
   */
  getClientConfig(credentials?: AccessKey): SluiceClientConfig {
    const { accessKeyId, secretAccessKey } = credentials ?? this.options.key ?? ANY_KEY;
    return {
      endpoint: this.getEndpoint(),
      region: this.options.region,
      credentials: { accessKeyId, secretAccessKey },
    };
  }

  /**
   * Moves the server's clock `seconds` forward (fractions allowed); resolves once the work the advance woke
   * has run (visibility timeouts and delays lapsed, long polls answered, move tasks stepped). With access
   * keys the call is signed with `key`, by default the first of withCredentials(): a key without queue or
   * action limits, as the server requires for test mode.
   */
  async advanceClock(seconds: number, key?: AccessKey): Promise<ServerTime> {
    return advanceClock(this.testModeEndpoint('advanceClock'), seconds, this.signedWith(key));
  }

  /** The server's time, how far advances have moved it, and the long polls waiting. */
  async serverTime(key?: AccessKey): Promise<ServerTime> {
    return serverTime(this.testModeEndpoint('serverTime'), this.signedWith(key));
  }

  /** Forgets every queue and all state, as a fresh start would; the clock stays where it is. */
  async reset(key?: AccessKey): Promise<void> {
    await reset(this.testModeEndpoint('reset'), this.signedWith(key));
  }

  private testModeEndpoint(helper: string): string {
    if (!this.options.testClock)
      throw new Error(
        `${helper}() needs test mode: start the container with new SluiceContainer().withTestClock()`,
      );
    return this.getEndpoint();
  }

  /** Unsigned on an open server, which checks no signature. */
  private signedWith(key: AccessKey | undefined): TestModeOptions {
    const credentials = key ?? this.options.key;
    return credentials ? { credentials, region: this.options.region } : {};
  }
}

/**
 * Ready when /health answers 200. A server that refuses its flags exits at once: that fails the start then,
 * not at the timeout (Testcontainers' HTTP wait cannot tell on every runtime: it waits for a log stream
 * that podman does not end), with what the server printed, read before Testcontainers removes the container.
 */
class HealthWaitStrategy implements WaitStrategy {
  private startupTimeoutMs = DEFAULT_STARTUP_TIMEOUT_MS;
  private startupTimeoutSet = false;

  async waitUntilReady(container: Container, ports: BoundPorts): Promise<void> {
    const { host } = (await getContainerRuntimeClient()).info.containerRuntime;
    const health = `${endpointOf(host, ports.getBinding(SLUICE_PORT))}/health`;
    const deadline = Date.now() + this.startupTimeoutMs;
    for (;;) {
      const status = await fetch(health, { signal: AbortSignal.timeout(1_000) }).then(
        (response) => response.status,
        () => undefined,
      );
      if (status === 200) return;
      const { State } = await container.inspect();
      if (!State.Running)
        throw new Error(`the server exited (status ${State.ExitCode}). ${await printed(container)}`);
      if (Date.now() >= deadline)
        throw new Error(
          `${health} did not answer 200 within ${this.startupTimeoutMs} ms (last: ${status ?? 'no answer'}). ${await printed(container)}`,
        );
      await sleep(50);
    }
  }

  withStartupTimeout(startupTimeoutMs: number): this {
    this.startupTimeoutMs = startupTimeoutMs;
    this.startupTimeoutSet = true;
    return this;
  }

  isStartupTimeoutSet(): boolean {
    return this.startupTimeoutSet;
  }

  getStartupTimeout(): number {
    return this.startupTimeoutMs;
  }
}

type Container = Parameters<WaitStrategy['waitUntilReady']>[0];

/** The container's output so far, from Docker's log format (frames of an 8-byte header and the bytes). */
async function printed(container: Container): Promise<string> {
  const log = await container.logs({ stdout: true, stderr: true, follow: false });
  let text = '';
  for (let at = 0; at + 8 <= log.length; at += 8 + log.readUInt32BE(at + 4))
    text += log.toString('utf8', at + 8, at + 8 + log.readUInt32BE(at + 4));
  return text ? `It printed:\n${text}` : 'It printed nothing.';
}

/**
 * On this machine the port is published on 127.0.0.1 only, so the endpoint names that address rather than
 * `localhost`, which may resolve to ::1 first.
 */
function endpointOf(runtimeHost: string, port: number): string {
  const host = isLoopback(runtimeHost) ? '127.0.0.1' : runtimeHost;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
