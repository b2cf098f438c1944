/**
 * The child outlives nothing: when the process that launched it is gone (its pid no longer exists,
 * or the child was reparented), the guard records child_cancelled and exits. The timer is unref'd so
 * it never keeps a finished child alive. A child launched under bgDelegate.onExit "finish" outlives
 * its parent instead, and keeps its own wall-clock deadline ({@link watchOwnDeadline}).
 */
export function parentGone(parentPid: number, currentParentPid: number): boolean {
  if (currentParentPid !== parentPid) return true;
  try {
    process.kill(parentPid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** Poll every `intervalMs`; call `onGone` once when the parent is gone. Returns a stop function. */
export function watchParent(parentPid: number, intervalMs: number, onGone: () => void): () => void {
  const timer = setInterval(() => {
    if (!parentGone(parentPid, process.ppid)) return;
    clearInterval(timer);
    onGone();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * An outliving child's hard deadline (docs/configuration.md, "Quitting Pi"): with no parent to enforce
 * timeoutSeconds, the child checks it itself every `intervalMs` and calls `onPassed` once when
 * `deadlineMs()` (undefined until the seed is read) has passed. Unref'd, as the parent watch.
 */
export function watchOwnDeadline(
  deadlineMs: () => number | undefined,
  intervalMs: number,
  onPassed: () => void,
): () => void {
  const timer = setInterval(() => {
    const deadline = deadlineMs();
    if (deadline === undefined || Date.now() < deadline) return;
    clearInterval(timer);
    onPassed();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
