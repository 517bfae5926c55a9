/**
 * `npm run test:chaos`: the crash audit (crash-audit.ts) on every SQLite durability mode and on the
 * PostgreSQL backend (a fresh database on the local server, dropped after), with more kills than the CI
 * form. `--kills N` and `--modes full,durable,postgres` narrow it. Exits 1 on any violation.
 */
import { commandFlags, modesOf, positive } from '../../tools/flags.ts';
import { freshDatabase } from '../../tools/postgres.ts';
import { describeReport, runCrashAudit, type StoreUnderTest, sqliteStore } from './crash-audit.ts';

const SQLITE_MODES = ['full', 'durable', 'normal', 'off'] as const;
const USAGE = `usage: npm run test:chaos -- [flags]
  --kills N            SIGKILLs per mode (default 40)
  --modes LIST         comma-separated, of full, durable, normal, off, postgres (default all five)
  --help               this text`;
const { kills, modes } = commandFlags(
  USAGE,
  { kills: { type: 'string' }, modes: { type: 'string' } },
  (values) => ({
    kills: positive('kills', values.kills, 40),
    modes: modesOf(values.modes ?? 'full,durable,normal,off,postgres', [...SQLITE_MODES, 'postgres']),
  }),
);

let failed = false;
for (const mode of modes) {
  const started = Date.now();
  const database = mode === 'postgres' ? await freshDatabase() : undefined;
  const store: StoreUnderTest =
    mode === 'postgres' ? { label: 'PostgreSQL', args: ['--store', database!.url] } : sqliteStore(mode);
  const report = await runCrashAudit({
    store,
    kills,
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
