import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PowerCut, powerCutUnavailable } from './powercut/power-cut.ts';
import { settle } from './powercut/restore.ts';

/**
 * The power-cut shim itself, on a process that makes every kind of change the shim follows, some made
 * durable and some not, and is SIGKILLed: after the cut, exactly what was fsynced (data: the file; names:
 * the directory) is there.
 */
const SCRIPT = `
const fs = require('node:fs');
const dir = process.argv[1];
const fsyncDir = () => { const fd = fs.openSync(dir, 'r'); fs.fsyncSync(fd); fs.closeSync(fd); };
// Data fsynced stays; data written after the last fsync goes.
const kept = fs.openSync(dir + '/kept', 'w');
fs.writeSync(kept, 'durable;');
fs.fdatasyncSync(kept);
fsyncDir();
fs.writeSync(kept, 'lost;');
fs.writeSync(kept, 'X', 0);
// An overwrite and a truncate after the fsync go; the file keeps its synced bytes and size.
const shrunk = fs.openSync(dir + '/shrunk', 'w+');
fs.writeSync(shrunk, '0123456789');
fs.fsyncSync(shrunk);
fs.writeSync(shrunk, 'abc', 0, 'utf8');
fs.ftruncateSync(shrunk, 4);
// A removal followed by a directory fsync stays, and so does a directory made before it.
fs.unlinkSync(dir + '/gone');
fs.mkdirSync(dir + '/made');
fsyncDir();
// After the directory's last fsync: a new file (even fsynced itself), a removal and a rename are undone.
const unnamed = fs.openSync(dir + '/unnamed', 'w');
fs.writeSync(unnamed, 'data');
fs.fsyncSync(unnamed);
fs.unlinkSync(dir + '/old');
fs.renameSync(dir + '/moved', dir + '/moved-to');
fs.mkdirSync(dir + '/unmade/inner', { recursive: true });
fs.writeFileSync(dir + '/unmade/inner/file', 'data');
process.stdout.write('ready');
setInterval(() => {}, 1000);
`;

const SKIP = powerCutUnavailable();

describe('the power-cut shim', { skip: SKIP }, () => {
  let cut: PowerCut;
  before(() => {
    cut = new PowerCut();
  });
  after(() => cut?.dispose());

  it('drops what was not fsynced, and only that', async () => {
    const dir = cut.root;
    for (const name of ['old', 'moved', 'gone']) writeFileSync(join(dir, name), name);
    settle(cut);
    const child = spawn(process.execPath, ['-e', SCRIPT, dir], {
      env: { ...process.env, ...cut.env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    assert.equal(readFileSync(join(dir, 'kept'), 'utf8'), 'Xurable;lost;', 'the page cache before the cut');

    const report = cut.cut();
    assert.equal(readFileSync(join(dir, 'kept'), 'utf8'), 'durable;');
    assert.equal(existsSync(join(dir, 'unnamed')), false, 'a name needs its directory fsynced');
    assert.equal(readFileSync(join(dir, 'shrunk'), 'utf8'), '0123456789');
    assert.equal(readFileSync(join(dir, 'old'), 'utf8'), 'old', 'removed after the last directory fsync');
    assert.equal(readFileSync(join(dir, 'moved'), 'utf8'), 'moved');
    assert.equal(existsSync(join(dir, 'moved-to')), false);
    assert.equal(existsSync(join(dir, 'gone')), false, 'removed before the directory fsync');
    assert.equal(existsSync(join(dir, 'made')), true);
    assert.equal(existsSync(join(dir, 'unmade')), false, 'a directory made after it goes, with its files');
    assert.deepEqual(readFileSync(cut.log).length, 0, 'the log starts again');
    assert.ok(report.undone >= 4 && report.names >= 1, JSON.stringify(report));
  });
});
