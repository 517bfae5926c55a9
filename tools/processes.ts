/** Whether a process (or, given minus its id, a process group) still exists: signal 0 checks, sends nothing. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
