/**
 * The host probe (docs/configuration.md, "Self-proof"): three real children of the host under test,
 * each loading the probe extension, against a scripted model server on 127.0.0.1, all in one
 * temporary directory (its own agent dir, project and HOME) that is removed afterwards. Nothing is
 * read from or written to the user's project or agent dir, no network is used and no key is needed.
 *
 * - main: a tool call that is blocked, one whose result is replaced, a context-hook message, a
 *   provider error that Pi's auto-retry runs again, on a pre-written session file;
 * - input: `input` handled, with no model call;
 * - sigterm: a shadowing extension's `read`, then SIGTERM while the second request is held.
 *
 * Every run gets each flag that turns something off in a delegate child (CHILD_OFF_FLAGS), the
 * sigterm run as an ambient child does (without --no-extensions), and the agent dir and project hold
 * a witness for each (src/host/probe/witnesses.ts): the isolation checks cost no process of their own.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { fieldOf, plainObject } from "../../core/validate.ts";
import { type ModelRequest, type ScriptedReply, startScriptedModelServer } from "../model-server/index.ts";
import { CHILD_OFF_FLAGS, type ChildOffFlag, type HostProbeCheck, offFlagArgs } from "../probe-checks.ts";
import { judgeProbe, type ProbeEvent, type ProbeObservations, type RunObservation } from "./checks.ts";
import type { WitnessRun } from "./witness-checks.ts";
import { plantWitnesses, witnessesSeen } from "./witnesses.ts";

export interface ProbeHost {
  /** The Node binary that runs the host's CLI. */
  nodePath: string;
  /** The host's CLI entry file. */
  piCli: string;
  /** The host's session format version (its CURRENT_SESSION_VERSION). */
  sessionVersion: number;
  /** Host flags every delegate child gets (src/launch/argv.ts): --no-mcp, --no-approve where the host has them. */
  hostFlags: readonly string[];
}

/**
 * For the probe's own test only (test/integration/host-probe.test.ts): run without one off
 * flag (or with `instead` in its place), to show its witness reaches a child that lacks the flag.
 */
export interface ProbeOptions {
  withhold?: { flag: ChildOffFlag; instead?: readonly string[] };
}

/** Off flags only some hosts have: a probe child gets them from ProbeHost.hostFlags, as a delegate child does. */
const HOST_DEPENDENT: readonly string[] = ["--no-mcp", "--no-approve"];

/** The names of the off flags of every probe child (see probeOffFlags). */
function probeOffFlagNames(hostFlags: readonly string[]): string[] {
  const common = Object.keys(CHILD_OFF_FLAGS).filter((flag) => !HOST_DEPENDENT.includes(flag));
  return [...common, ...hostFlags.filter((flag) => !common.includes(flag))];
}

/**
 * The off flags of every probe child, as they stand in its argv: each of CHILD_OFF_FLAGS that every
 * host has (with its value where it takes one: `--append-system-prompt ""`), then the host's own
 * (`hostFlags`: --no-mcp, --no-approve where it has them).
 */
export function probeOffFlags(hostFlags: readonly string[]): string[] {
  return probeOffFlagNames(hostFlags).flatMap(offFlagArgs);
}

export interface ProbeReport {
  checks: HostProbeCheck[];
  ok: boolean;
  durationMs: number;
}

const HERE = dirname(fileURLToPath(import.meta.url));
export const PROBE_EXTENSION = join(HERE, "probe-extension.ts");
export const PROBE_SHADOW = join(HERE, "probe-shadow.ts");
const PIN = { provider: "probe", model: "probe-model" };
/** A run that has not ended by then is killed and its checks fail. */
const RUN_TIMEOUT_MS = 45_000;
const HELD_REPLY_MS = 60_000;
type Mode = "main" | "input" | "sigterm";

function writeAgentDir(dir: string, serverUrl: string): void {
  mkdirSync(dir, { recursive: true });
  const model = {
    id: PIN.model,
    name: "pi-bg-delegate host probe",
    reasoning: false,
    input: ["text"],
    maxTokens: 8192,
    contextWindow: 200_000,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  };
  const providers = {
    [PIN.provider]: { baseUrl: serverUrl, api: "openai-completions", apiKey: "probe-key", models: [model] },
  };
  writeFileSync(join(dir, "models.json"), `${JSON.stringify({ providers })}\n`);
  // One auto-retry with no wait: the main run's provider error is retried, as the guard's commit expects.
  const retry = { enabled: true, maxRetries: 1, baseDelayMs: 1, provider: { maxRetries: 0 } };
  writeFileSync(join(dir, "settings.json"), `${JSON.stringify({ retry, quietStartup: true })}\n`);
}

function modeOf(request: ModelRequest): Mode | undefined {
  const first = request.messages.find((m) => m.role === "user")?.text ?? "";
  const match = /PROBE-RUN:(main|input|sigterm)/.exec(first);
  return match ? (match[1] as Mode) : undefined;
}

/** The scripted model: per run, the n-th request's reply. */
function script(mode: Mode, n: number): ScriptedReply {
  if (mode === "main") {
    if (n === 0) return { toolCalls: [{ name: "read", args: { path: "payload.txt" } }, { name: "probe_touch" }] };
    if (n === 1) return { error: 503, message: "probe: overloaded once" };
    return { text: "probe final" };
  }
  if (mode === "sigterm") {
    if (n === 0) return { toolCalls: [{ name: "read", args: { path: "payload.txt" } }] };
    return { text: "held", delayMs: HELD_REPLY_MS };
  }
  return { text: "input was not handled" };
}

/** Every line of a JSON-lines file that parses (a line cut short by a kill is skipped). */
function readJsonLines(path: string): unknown[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .flatMap((line) => {
      try {
        const value: unknown = JSON.parse(line);
        return [value];
      } catch {
        return [];
      }
    });
}

/** The probe extension's events: the JSON lines that name an event. */
function readEvents(path: string): ProbeEvent[] {
  return readJsonLines(path).flatMap((value) => {
    const name = fieldOf(value, "event");
    return typeof name === "string" ? [{ ...plainObject(value, ""), event: name }] : [];
  });
}

/** The host's commands at session_start, as the probe extension listed them. */
function commandsOf(events: ProbeEvent[]): WitnessRun["commands"] {
  const listed = events.find((e) => e.event === "session_start")?.commands;
  if (!Array.isArray(listed)) return [];
  return listed.map((c) => ({
    name: String(fieldOf(c, "name") ?? ""),
    source: String(fieldOf(c, "source") ?? ""),
    description: String(fieldOf(c, "description") ?? ""),
  }));
}

/** The end of what a run printed, for a check that saw nothing else. */
function outputTail(path: string): string {
  if (!existsSync(path)) return "";
  const text = readFileSync(path, "utf8").trim();
  return text.length > 2000 ? text.slice(-2000) : text;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

interface Started {
  child: ChildProcess;
  log: string;
  ended: Promise<{ exitCode: number | null; signal: string | null; timedOut: boolean }>;
}

/**
 * Run the probe on `host`. Never throws for what the host does: a child that cannot start, hangs or
 * misbehaves fails its checks, each saying what was seen.
 */
export async function runHostProbe(host: ProbeHost, options: ProbeOptions = {}): Promise<ProbeReport> {
  const started = Date.now();
  const root = mkdtempSync(join(tmpdir(), "pi-bg-delegate-probe-"));
  const requests: Record<Mode, ModelRequest[]> = { main: [], input: [], sigterm: [] };
  const server = await startScriptedModelServer((request) => {
    const mode = modeOf(request);
    if (mode === undefined) return { text: "unknown probe run" };
    requests[mode].push(request);
    return script(mode, requests[mode].length - 1);
  });
  const children: ChildProcess[] = [];
  try {
    const agentDir = join(root, "agent");
    const home = join(root, "home");
    const project = join(root, "project");
    for (const dir of [home, project]) mkdirSync(dir, { recursive: true });
    writeAgentDir(agentDir, server.url);
    const witnesses = plantWitnesses(root, agentDir, project, host.nodePath);
    const withheld = options.withhold;
    const flags = probeOffFlagNames(host.hostFlags).flatMap((flag) =>
      flag === withheld?.flag ? [...(withheld.instead ?? [])] : offFlagArgs(flag),
    );
    const secret = `PROBE-SECRET-${randomBytes(6).toString("hex")}`;
    writeFileSync(join(project, "payload.txt"), `${secret}\n`);
    const headerId = `probe-${randomBytes(16).toString("hex")}`;
    const sessionPath = join(root, "session.jsonl");
    const header = {
      type: "session",
      version: host.sessionVersion,
      id: headerId,
      timestamp: new Date().toISOString(),
      cwd: project,
    };
    writeFileSync(sessionPath, `${JSON.stringify(header)}\n`);
    const marker = join(root, "MARKER");

    const start = (mode: Mode, offFlags: string[], tools: string, extra: string[]): Started => {
      const log = join(root, `${mode}.jsonl`);
      const argv = [
        host.piCli,
        "-p",
        ...offFlags,
        "--tools",
        tools,
        "-e",
        PROBE_EXTENSION,
        ...extra,
        "--provider",
        PIN.provider,
        "--model",
        PIN.model,
        "--thinking",
        "off",
        "--system-prompt",
        "You are the pi-bg-delegate host probe.",
      ];
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? "",
        HOME: home,
        PI_CODING_AGENT_DIR: agentDir,
        PI_OFFLINE: "1",
        PI_BG_DELEGATE_PROBE_LOG: log,
        PI_BG_DELEGATE_PROBE_MODE: mode,
        PI_BG_DELEGATE_PROBE_MARKER: marker,
      };
      const out = openSync(join(root, `${mode}.out`), "a");
      const child = spawn(host.nodePath, argv, { cwd: project, env, stdio: ["pipe", out, out], detached: true });
      closeSync(out);
      children.push(child);
      child.on("error", () => {});
      child.stdin?.on("error", () => {});
      child.stdin?.end(`PROBE-RUN:${mode} Answer as scripted.`);
      const ended = new Promise<{ exitCode: number | null; signal: string | null; timedOut: boolean }>((resolve) => {
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          killGroup(child, "SIGKILL");
        }, RUN_TIMEOUT_MS);
        const done = (exitCode: number | null, signal: string | null) => {
          clearTimeout(timer);
          resolve({ exitCode, signal, timedOut });
        };
        child.once("close", done);
        child.once("error", () => done(null, null));
      });
      return { child, log, ended };
    };

    const main = start("main", flags, "read,probe_touch", ["--session", sessionPath]);
    const input = start("input", flags, "read", ["--no-session"]);
    // As an ambient delegate child: extensions load (so --no-mcp is what keeps MCP servers out, and
    // --no-approve what keeps the project's extension out).
    const ambient = flags.filter((flag) => flag !== "--no-extensions");
    const sigterm = start("sigterm", ambient, "read", ["-e", PROBE_SHADOW, "--no-session"]);

    // SIGTERM once the sigterm run's second request is held by the server (the run is mid-flight).
    let signalled = false;
    const watch = setInterval(() => {
      if (requests.sigterm.length >= 2 && !signalled) {
        signalled = true;
        sigterm.child.kill("SIGTERM");
      }
    }, 20);
    const [mainEnd, inputEnd] = await Promise.all([main.ended, input.ended]);
    // The sigterm run is only waited for until it could have been signalled: a host that never gets
    // there has failed, and is killed by its own timeout.
    const sigtermEnd = await sigterm.ended;
    clearInterval(watch);

    const observe = (run: Started, mode: Mode, end: Awaited<Started["ended"]>): RunObservation => ({
      events: readEvents(run.log),
      commands: commandsOf(readEvents(run.log)),
      requests: requests[mode],
      exitCode: end.exitCode,
      signal: end.signal,
      timedOut: end.timedOut,
      output: outputTail(join(root, `${mode}.out`)),
    });
    const observations: ProbeObservations = {
      pin: PIN,
      probePath: PROBE_EXTENSION,
      shadowPath: PROBE_SHADOW,
      secret,
      main: {
        ...observe(main, "main", mainEnd),
        markerWritten: existsSync(marker),
        headerId,
        sessionLines: readJsonLines(sessionPath),
      },
      input: observe(input, "input", inputEnd),
      sigterm: { ...observe(sigterm, "sigterm", sigtermEnd), signalled },
      witness: witnessesSeen(witnesses, host.hostFlags),
    };
    const checks = judgeProbe(observations);
    return { checks, ok: checks.every((c) => c.ok), durationMs: Date.now() - started };
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) killGroup(child, "SIGKILL");
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
}
