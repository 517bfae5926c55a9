/**
 * `npm run test:powercut`: the crash audit (crash-audit.ts) with power cuts instead of plain SIGKILLs, on
 * each SQLite durability mode: the server runs on a tmpfs whose writes the shim (shim.c) follows, and after
 * each SIGKILL everything not fsynced is undone (restore.ts) before the restart. `full` and `durable` must
 * lose no acknowledged send (`full` no acknowledged receive either); what `normal` and `off` lose is
 * reported. `--kills N`, `--modes full,durable,normal,off`, and `--keep P` (the chance that a write not
 * fsynced survives anyway, in any order) narrow or vary it. Exits 1 on any violation; 2 when it cannot run.
 */
import { commandFlags, modesOf, positive } from '../../../tools/flags.ts';
import { describeReport, runCrashAudit, sqliteStore } from '../crash-audit.ts';
import { PowerCut, powerCutUnavailable } from './power-cut.ts';

const MODES = ['full', 'durable', 'normal', 'off'] as const;
type Mode = (typeof MODES)[number];
const USAGE = `usage: npm run test:powercut -- [flags]
  --kills N            power cuts per mode (default 30)
  --modes LIST         comma-separated, of full, durable, normal, off (default full,durable,normal)
  --keep P             the chance, 0 to 1, that a write not fsynced survives a cut anyway (default 0)
  --help               this text`;
const { kills, modes, keep } = commandFlags(
  USAGE,
  { kills: { type: 'string' }, modes: { type: 'string' }, keep: { type: 'string' } },
  (values) => {
    const keep = Number(values.keep ?? '0');
    if (!(keep >= 0 && keep <= 1)) throw new Error(`--keep needs a number from 0 to 1, got ${values.keep}`);
    return {
      kills: positive('kills', values.kills, 30),
      modes: modesOf(values.modes ?? 'full,durable,normal', MODES),
      keep,
    };
  },
);
const unavailable = powerCutUnavailable();
if (unavailable) {
  process.stderr.write(`test:powercut cannot run: ${unavailable}\n`);
  process.exit(2);
}

/** What each mode promises against a power cut (README and docs/guide/durability.md). */
const PROMISES: Record<Mode, { sends: boolean; receives: boolean }> = {
  full: { sends: true, receives: true },
  durable: { sends: true, receives: false },
  normal: { sends: false, receives: false },
  off: { sends: false, receives: false },
};

let failed = false;
for (const mode of modes) {
  const started = Date.now();
  const cut = new PowerCut({ keep });
  try {
    const report = await runCrashAudit({
      store: sqliteStore(mode),
      kills,
      minUptimeMs: 300,
      maxUptimeMs: 3000,
      crash: cut.crashMode(PROMISES[mode]),
      log: (line) => process.stderr.write(`  ${line}\n`),
    });
    const seconds = Math.round((Date.now() - started) / 1000);
    const { undone, undoneByFile, undoneBytes, kept, names, durable } = cut.restored;
    process.stdout.write(
      `SQLite, durability ${mode}, power cuts (keep ${keep}): ${report.kills} cuts in ${seconds} s; ` +
        `${describeReport(report)}; the cuts undid ${undone} writes (${undoneBytes} bytes; ${JSON.stringify(undoneByFile)}) and ${names} names, ` +
        `kept ${kept} unsynced writes, ${durable} writes were durable\n`,
    );
    for (const violation of report.violations.slice(0, 20))
      process.stdout.write(`  VIOLATION ${violation}\n`);
    for (const example of report.findings.examples.slice(0, 5))
      process.stdout.write(`  finding: ${example}\n`);
    failed ||= report.violations.length > 0;
  } finally {
    cut.dispose();
  }
}
process.exit(failed ? 1 : 0);
