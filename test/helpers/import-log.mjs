// Preloaded with `node --import`: writes every package a process imports to the file named by
// SLUICE_IMPORT_LOG, one specifier a line, so a test can tell which dependencies a command loads.
import { register } from 'node:module';

register(new URL('./import-log-hooks.mjs', import.meta.url), {
  data: { file: process.env.SLUICE_IMPORT_LOG },
});
