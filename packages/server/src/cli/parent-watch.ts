/** How often the server looks whether its parent is still there: one cheap system call a second. */
const PARENT_CHECK_MS = 1_000;

/**
 * Calls `onGone` once the process that started this one has exited. A wrapper such as npx or npm dies of a
 * SIGTERM (or SIGKILL) without passing it on, and the server it started would live on as an orphan holding
 * the port; an orphan is adopted by init or a subreaper, so its parent id changes. A parent that already is
 * init (pid 1, as under a container's init or a daemon manager's double fork; 0 for pid 1 itself) is the one
 * it is meant to have, and is not watched. The timer does not keep the process alive.
 */
export function watchParent(onGone: (parent: number) => void): void {
  const parent = process.ppid;
  if (parent <= 1) return;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone(parent);
  }, PARENT_CHECK_MS);
  timer.unref();
}

/**
 * Whether npm started this process (`npx sluice serve`, `npm start`): npm names its command in
 * `npm_command`. Only then is the parent a wrapper to stop with; a shell that backgrounds the server
 * (`sluice serve &`) and exits means it to keep running, as a server always has.
 */
export function startedByNpm(environment: NodeJS.ProcessEnv): boolean {
  return environment.npm_command !== undefined && environment.npm_command !== '';
}
