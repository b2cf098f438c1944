/**
 * A print-mode pi child that loads only a probe extension (not this package) and offers the model
 * `read` and the probe's `probe_touch`, on the scripted model server's fake-model: how
 * test/integration/host-proof.test.ts and host-copy.test.ts watch what a Pi host does. The probe
 * logs one JSON line per event to PROBE_LOG and its tool writes PROBE_MARKER.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { makeTempDir } from "./temp.ts";

export interface ProbeEvent {
  event: string;
  [key: string]: unknown;
}

export interface ProbeChildOptions {
  /** The probe extension file (`-e`). */
  probePath: string;
  cwd: string;
  /** PI_CODING_AGENT_DIR of the child. */
  agentDir: string;
  /** The prompt, on stdin. */
  input: string;
  /** The Pi CLI and the node that runs it. */
  cliPath: string;
  nodePath?: string;
  /** More environment for the probe (e.g. PROBE_MODE). */
  env?: Record<string, string>;
}

/** Start the probe child; `events()` reads what the probe has logged so far, `marker` is its tool's file. */
export async function startProbeChild(options: ProbeChildOptions) {
  const dir = await makeTempDir("probe-run");
  const logPath = join(dir, "events.jsonl");
  const marker = join(dir, "MARKER");
  const child = execa(
    options.nodePath ?? process.execPath,
    [
      options.cliPath,
      "-p",
      "--no-builtin-tools",
      "--tools",
      "read,probe_touch",
      "--no-extensions",
      "-e",
      options.probePath,
      "--provider",
      "fake",
      "--model",
      "fake-model",
      "--thinking",
      "off",
      "--no-session",
    ],
    {
      cwd: options.cwd,
      input: options.input,
      env: {
        PI_CODING_AGENT_DIR: options.agentDir,
        PI_OFFLINE: "1",
        PROBE_LOG: logPath,
        PROBE_MARKER: marker,
        ...options.env,
      },
      reject: false,
    },
  );
  const events = (): ProbeEvent[] =>
    existsSync(logPath)
      ? readFileSync(logPath, "utf8")
          .trim()
          .split("\n")
          .filter((line) => line !== "")
          .map((line) => JSON.parse(line) as ProbeEvent)
      : [];
  return { child, events, marker };
}
