/**
 * Pi's interactive mode in a real pseudo-terminal (node-pty), its output fed to a headless xterm,
 * so a test reads the screen a person would see. Everything comes from the npm registry.
 *
 *   const tty = await startInteractivePi({ agentDir, cwd, cols: 160, rows: 48, message: "go" });
 *   await tty.waitFor(/✓ map auth/, "the verified answer");
 *   tty.type("/delegates\r");
 *   await tty.close();
 */
import { createRequire } from "node:module";
import type { IPty } from "@lydell/node-pty";
import type { Terminal } from "@xterm/headless";
import { packageOnlyPiArgs } from "../../scripts/hosts.mjs";
import { HOST, PI_CLI_PATH } from "./pi-paths.ts";

const require = createRequire(import.meta.url);
const pty = require("@lydell/node-pty") as typeof import("@lydell/node-pty");
const { Terminal: HeadlessTerminal } = require("@xterm/headless") as typeof import("@xterm/headless");

export interface InteractivePiOptions {
  agentDir: string;
  cwd: string;
  cols: number;
  rows: number;
  provider: string;
  model: string;
  /** Pi's first message (sent as the CLI's message argument). */
  message?: string;
}

export interface InteractivePi {
  /** The visible screen, one string per row, trailing spaces removed. */
  screen(): string[];
  /** Everything written so far, scrollback included. */
  history(): string[];
  type(text: string): void;
  /** Every byte Pi wrote to the terminal so far, as it wrote it (escape sequences included). */
  raw(): string;
  /**
   * What the terminal acted on that changes more than the screen: each window title set (OSC 0/2),
   * each clipboard write (OSC 52) and each full-screen erase (CSI 2J), in order.
   */
  actions(): string[];
  waitFor(pattern: RegExp, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

function lines(term: Terminal, from: number, to: number): string[] {
  const out: string[] = [];
  const buffer = term.buffer.active;
  for (let i = from; i < to; i++) out.push(buffer.getLine(i)?.translateToString(true) ?? "");
  return out;
}

export async function startInteractivePi(options: InteractivePiOptions): Promise<InteractivePi> {
  const term = new HeadlessTerminal({
    cols: options.cols,
    rows: options.rows,
    scrollback: 5000,
    allowProposedApi: true,
  });
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("PI_BG_DELEGATE_") && !key.startsWith("VITEST")) env[key] = value;
  }
  Object.assign(env, {
    PI_CODING_AGENT_DIR: options.agentDir,
    PI_OFFLINE: "1",
    PI_TELEMETRY: "0",
    TERM: "xterm-256color",
    COLORTERM: "truecolor",
  });
  const args = [
    PI_CLI_PATH,
    ...packageOnlyPiArgs(),
    "--provider",
    options.provider,
    "--model",
    options.model,
    ...(options.message === undefined ? [] : [options.message]),
  ];
  const child: IPty = pty.spawn(HOST.nodePath, args, {
    name: "xterm-256color",
    cols: options.cols,
    rows: options.rows,
    cwd: options.cwd,
    env,
  });
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.onExit(() => {
      exited = true;
      resolve();
    }),
  );
  let pending = Promise.resolve();
  let raw = "";
  const actions: string[] = [];
  term.onTitleChange((title) => actions.push(`title ${title}`));
  term.parser.registerOscHandler(52, (data) => {
    actions.push(`clipboard ${data}`);
    return true;
  });
  term.parser.registerCsiHandler({ final: "J" }, (params) => {
    if (params[0] === 2 || params[0] === 3) actions.push(`erase ${String(params[0])}`);
    return false;
  });
  child.onData((data) => {
    raw += data;
    pending = pending.then(() => new Promise<void>((resolve) => term.write(data, resolve)));
  });
  // xterm answers terminal queries (cursor position, device attributes) as a terminal would.
  term.onData((data) => {
    if (!exited) child.write(data);
  });

  const screen = () => {
    const buffer = term.buffer.active;
    return lines(term, buffer.baseY, buffer.baseY + options.rows).map((l) => l.trimEnd());
  };
  const history = () => lines(term, 0, term.buffer.active.length).map((l) => l.trimEnd());
  return {
    screen,
    history,
    type: (text) => child.write(text),
    raw: () => raw,
    actions: () => [...actions],
    async waitFor(pattern, what, timeoutMs = 45_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        await pending;
        if (pattern.test(history().join("\n"))) return;
        if (exited) throw new Error(`pi exited while waiting for ${what}:\n${history().join("\n")}`);
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${what}; the screen:\n${screen().join("\n")}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async close() {
      if (!exited) {
        // Pi quits on ctrl+c twice (ending its delegates); SIGKILL only if it does not.
        child.write("\x03");
        await new Promise((r) => setTimeout(r, 200));
        child.write("\x03");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
        await exit;
        clearTimeout(timer);
      }
      term.dispose();
    },
  };
}
