import { spawn } from "node:child_process";
import { afterEach, expect, it } from "vitest";
import { cpuTicks, whileProgressing } from "../helpers/progress.ts";

const started: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const child of started.splice(0)) child.kill("SIGKILL");
});

function start(code: string | null) {
  // null: coreutils' sleep, a process that uses no CPU once it started (a Node process may still be
  // compiling or collecting garbage for a while on a loaded machine).
  const child =
    code === null
      ? spawn("sleep", ["60"], { stdio: "ignore" })
      : spawn(process.execPath, ["-e", code], { stdio: "ignore" });
  started.push(child);
  if (child.pid === undefined) throw new Error("no pid");
  return child.pid;
}

const tooSoon = () => Promise.reject(new Error("window ran out"));

it("retries a wait while the process keeps using CPU, and returns what the attempt gave", async () => {
  const pid = start("for (;;) {}");
  let tries = 0;
  const value = await whileProgressing(pid, async () => {
    tries++;
    // Each failed window lasts long enough for a spinning process to accrue clock ticks.
    await new Promise((resolve) => setTimeout(resolve, 500));
    if (tries < 3) throw new Error("window ran out");
    return "ready";
  });
  expect(value).toBe("ready");
  expect(tries).toBe(3);
});

it("fails with the attempt's error when the process stood still through the window", async () => {
  const pid = start(null);
  // Let it finish starting (its start-up uses CPU) before the window that must see none.
  let last = cpuTicks(pid);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const now = cpuTicks(pid);
    if (now === last) break;
    last = now;
  }
  let tries = 0;
  await expect(
    whileProgressing(pid, async () => {
      tries++;
      await new Promise((resolve) => setTimeout(resolve, 300));
      throw new Error("window ran out");
    }),
  ).rejects.toThrow("window ran out");
  expect(tries).toBe(1);
});

it("fails at once when the process is gone", async () => {
  expect(cpuTicks(2 ** 22 + 12345)).toBeNull();
  await expect(whileProgressing(2 ** 22 + 12345, tooSoon)).rejects.toThrow("window ran out");
});
