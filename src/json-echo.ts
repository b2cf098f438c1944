/**
 * Pi 0.73.1's json mode while the package drains at shutdown (src/lifetime.ts drainAtShutdown): Pi
 * has stopped writing its events, so the package echoes them on standard output. Registered at every
 * start, so this file imports nothing of the package.
 */
import { writeSync } from "node:fs";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

/**
 * Standard output itself (descriptor 1): while print mode runs, Pi points process.stdout at stderr
 * so that nothing but its answer reaches stdout; the answer written here is that answer.
 */
export function writeStdout(text: string): void {
  const bytes = Buffer.from(text, "utf8");
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(1, bytes, offset, bytes.length - offset);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EAGAIN") continue;
      return; // stdout is closed: nobody reads the answer
    }
  }
}

/** Events echoed on stdout in json mode while drainAtShutdown runs (Pi has stopped writing them). */
const ECHOED_EVENTS = [
  "agent_start",
  "agent_end",
  "turn_start",
  "turn_end",
  "message_start",
  "message_end",
  "tool_execution_start",
  "tool_execution_end",
] as const;

export function registerJsonEcho(pi: Pick<ExtensionAPI, "on">, active: () => boolean): void {
  const on = pi.on.bind(pi) as unknown as (event: string, handler: (event: unknown) => void) => void;
  for (const name of ECHOED_EVENTS) {
    on(name, (event) => {
      if (active()) writeStdout(`${JSON.stringify(event)}\n`);
    });
  }
}
