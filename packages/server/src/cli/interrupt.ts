/** Ctrl-C once: `stop` (the command winds down gracefully); twice: leave at once. Returns the undo. */
export function onInterrupt(stop: () => void): () => void {
  let interrupted = false;
  const handler = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write('\nstopping (Ctrl-C again to leave at once)\n');
    stop();
  };
  process.on('SIGINT', handler);
  return () => process.off('SIGINT', handler);
}
