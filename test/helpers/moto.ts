import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort } from '../../tools/free-port.ts';

/**
 * moto's S3 server (pyenv's `moto`, in the machine image) on a free loopback port, started by the test and
 * killed by its PID afterwards: a real S3 wire protocol for the S3 blob store.
 */
export interface MotoS3 {
  endpoint: string;
  s3: S3Client;
  createBucket(name: string): Promise<void>;
  close(): Promise<void>;
}

/** The python that has moto, or why there is none (tests skip then, except under CI, where they fail). */
export function motoPython(): { python: string } | { missing: string } {
  try {
    const python = execFileSync('python3', ['-c', 'import sys, moto.server; print(sys.executable)'], {
      encoding: 'utf8',
      timeout: 20_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return { python };
  } catch {
    return { missing: 'moto is not installed for python3 (pip install "moto[server]")' };
  }
}

export async function startMoto(python: string): Promise<MotoS3> {
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(python, ['-m', 'moto.server', '-H', '127.0.0.1', '-p', String(port)], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const s3 = new S3Client({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    forcePathStyle: true,
  });
  const close = async () => {
    s3.destroy();
    if (child.exitCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGTERM');
    await exited;
  };
  const until = Date.now() + 30_000;
  for (;;) {
    try {
      const response = await fetch(`${endpoint}/moto-api/`);
      await response.arrayBuffer();
      break;
    } catch {
      if (child.exitCode !== null || Date.now() > until) {
        await close();
        throw new Error('moto_server did not start');
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    endpoint,
    s3,
    async createBucket(name) {
      await s3.send(new CreateBucketCommand({ Bucket: name }));
    },
    close,
  };
}
