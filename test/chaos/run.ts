/**
 * `npm run test:chaos`: the crash audit (crash-audit.ts) on every SQLite durability mode and on the
 * PostgreSQL backend (a fresh database on the local server, dropped after), with more kills than the CI
 * form. `--kills N` and `--modes full,durable,postgres` narrow it. Exits 1 on any violation.
 */
import { parseArgs } from 'node:util';
import { freshDatabase } from '../helpers/postgres.ts';
import { describeReport, runCrashAudit, type StoreUnderTest, sqliteStore } from './crash-audit.ts';

const { values } = parseArgs({
  options: {
    kills: { type: 'string', default: '40' },
    modes: { type: 'string', default: 'full,durable,normal,off,postgres' },
  },
});
const SQLITE_MODES = ['full', 'durable', 'normal', 'off'] as const;
type Mode = (typeof SQLITE_MODES)[number] | 'postgres';
const modes = values.modes.split(',') as Mode[];
for (const mode of modes)
  if (mode !== 'postgres' && !SQLITE_MODES.includes(mode)) throw new Error(`unknown mode ${mode}`);

let failed = false;
for (const mode of modes) {
  const started = Date.now();
  const database = mode === 'postgres' ? await freshDatabase() : undefined;
  const store: StoreUnderTest =
    mode === 'postgres' ? { label: 'PostgreSQL', args: ['--store', database!.url] } : sqliteStore(mode);
  const report = await runCrashAudit({
    store,
    kills: Number(values.kills),
    minUptimeMs: 200,
    maxUptimeMs: 2000,
    log: (line) => process.stderr.write(`  ${line}\n`),
  });
  const seconds = Math.round((Date.now() - started) / 1000);
  process.stdout.write(`${store.label}: ${report.kills} kills in ${seconds} s; ${describeReport(report)}\n`);
  for (const violation of report.violations.slice(0, 20)) process.stdout.write(`  VIOLATION ${violation}\n`);
  failed ||= report.violations.length > 0;
  await database?.drop();
}
process.exit(failed ? 1 : 0);
