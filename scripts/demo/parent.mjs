/**
 * A real pi parent process in RPC mode (pi's own RpcClient) with this package loaded by `-e`, plus
 * an event log the demo can wait on. Waits fail with a clear reason when they time out, when the
 * pi process exits, or when the demo is cancelled.
 *
 *   const parent = createParent({...});   // keep the handle first, so Ctrl-C during start can stop it
 *   await parent.start();
 *   const end = await parent.waitFor((e) => e.type === "agent_end", { from: 0, timeoutMs, what: "…" });
 */

import { packageOnlyPiArgs } from "../hosts.mjs";

/** Streaming updates repeat the whole partial message each time; the demo keeps only what it waits on. */
const KEPT_EVENTS = new Set(["message_end", "agent_end", "tool_execution_start", "tool_execution_end"]);

/**
 * @param {{ cliPath: string, sdkUrl: string, cwd: string, packageDir: string, provider: string, model: string,
 *           env: Record<string, string | undefined> }} options  sdkUrl: the host's SDK (its own RpcClient)
 */
export async function createParent(options) {
  const { RpcClient } = await import(options.sdkUrl);
  const client = new RpcClient({
    cliPath: options.cliPath,
    cwd: options.cwd,
    env: options.env,
    provider: options.provider,
    model: options.model,
    args: packageOnlyPiArgs(options.packageDir),
  });
  const events = [];
  let waiters = [];
  let ended;

  const finish = (waiter, settleWith) => {
    clearTimeout(waiter.timer);
    waiters = waiters.filter((w) => w !== waiter);
    settleWith();
  };
  const failAll = (reason) => {
    ended ??= reason;
    for (const w of waiters) finish(w, () => w.reject(new Error(`${ended} while waiting for ${w.what}`)));
  };
  client.onEvent((event) => {
    if (!KEPT_EVENTS.has(event.type)) return;
    events.push(event);
    for (const w of waiters) if (w.predicate(event)) finish(w, () => w.resolve(event));
  });
  // RpcClient keeps its child process private; the demo needs its pid, its exit and a stop that
  // works even while start() is still in progress.
  const proc = () => client.process;
  const running = () => {
    const p = proc();
    return Boolean(p && p.exitCode === null && p.signalCode === null);
  };

  return {
    client,
    events,
    get pid() {
      return proc()?.pid;
    },
    async start() {
      await client.start();
      const exited = new Promise((resolve) => {
        if (!running()) resolve();
        else proc().once("exit", () => resolve());
      });
      const exitReason = () => `the pi parent exited (${proc()?.signalCode ?? `code ${proc()?.exitCode}`})`;
      exited.then(() => failAll(exitReason()));
      try {
        // pi answers get_state only once its runtime and extensions are up: a real readiness check.
        await Promise.race([
          client.getState(),
          exited.then(() => {
            throw new Error(exitReason());
          }),
        ]);
      } catch (error) {
        throw new Error(`the pi parent did not start: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
    /** Resolve with the first kept event at index >= `from` that matches; reject on timeout, exit or cancel. */
    waitFor(predicate, { from = 0, timeoutMs, what }) {
      return new Promise((resolve, reject) => {
        const hit = events.slice(from).find(predicate);
        if (hit) return resolve(hit);
        if (ended) return reject(new Error(`${ended} while waiting for ${what}`));
        const waiter = { predicate, what, resolve, reject };
        waiter.timer = setTimeout(
          () =>
            finish(waiter, () =>
              reject(new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`)),
            ),
          timeoutMs,
        );
        waiters.push(waiter);
      });
    },
    /** Fail every pending wait (Ctrl-C). */
    cancel: failAll,
    /** SIGTERM (pi ends its delegates on exit), SIGKILL after 1 s; nothing if it is not running. */
    async stop() {
      if (running()) await client.stop();
    },
  };
}

/** A message_end event's message, or undefined. */
export const messageOf = (event) => (event.type === "message_end" ? event.message : undefined);

export function textOf(message) {
  const { content } = message ?? {};
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((block) => block?.type === "text")
    .map((block) => block.text)
    .join("");
}

export const isToolResult = (event, toolName) =>
  messageOf(event)?.role === "toolResult" && messageOf(event).toolName === toolName;
