/**
 * Waiting on a busy machine without raising a timeout: a wait that runs out is retried only while
 * the process it waits on is still using CPU. A process that is starting slowly because two test
 * suites share two cores keeps accruing CPU time and gets another window; a hung one (blocked, no CPU
 * for a whole window) or an exited one fails the wait with the original error.
 *
 *   await whileProgressing(child.pid, () => client.getState());
 */
import { readFileSync } from "node:fs";

/** CPU time (clock ticks) a live process and its waited-for children used; null once it is gone. */
export function cpuTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name: state is field 3; utime, stime, cutime, cstime are 14–17.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] === "Z") return null;
    return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
  } catch {
    return null;
  }
}

/**
 * Run `attempt` (which rejects when its own window runs out); while `pid` used CPU during the failed
 * attempt, try again. Rejects with the attempt's error once the process is gone or stood still.
 */
export async function whileProgressing<T>(pid: number, attempt: () => Promise<T>): Promise<T> {
  for (;;) {
    const before = cpuTicks(pid);
    try {
      return await attempt();
    } catch (error) {
      const after = cpuTicks(pid);
      if (before === null || after === null || after <= before) throw error;
    }
  }
}
