/**
 * What this Pi process did with the package, kept on globalThis so it survives /new, /resume, /fork
 * and /reload (which may load the entry again): whether it launched a delegate or a Fusion run, and
 * when each project's retention prune was last looked at. The entry reads it at each session start to
 * decide whether the package's code is needed (docs/subsystems/launch.md, "Loading on first use").
 */
import { PROCESS_STATE_KEY } from "./core/constants.ts";

export interface ProcessState {
  /** A delegate or Fusion run was launched by this process (its footer, notices and quit matter). */
  launched: boolean;
  /** Project directory → when a session start of this process last looked whether a prune is due (ms). */
  pruneLookedAt: Map<string, number>;
  /** Whether this Pi is a proven version (src/host/proven.ts), once a session start asked. */
  proven: boolean | undefined;
}

export function processState(): ProcessState {
  const holder = globalThis as typeof globalThis & { [key: symbol]: ProcessState | undefined };
  const key = Symbol.for(PROCESS_STATE_KEY);
  holder[key] ??= { launched: false, pruneLookedAt: new Map(), proven: undefined };
  return holder[key];
}
