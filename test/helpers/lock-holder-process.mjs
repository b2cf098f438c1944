// A process that takes a project's launch lock through the production code (src/store/launch-lock.ts)
// and holds it until its stdin closes: a live holder for the launch lock's tests
// (test/helpers/lock-holder.ts). argv: <cwd> <agentDir>. Prints "held <pid>" once it holds the lock.
import { readSync, writeSync } from "node:fs";
import { createJiti } from "jiti";

const jiti = createJiti(import.meta.url);
const { withLaunchLock } = await jiti.import("../../src/store/launch-lock.ts");
const [cwd, agentDir] = process.argv.slice(2);
const pause = new Int32Array(new SharedArrayBuffer(4));

await withLaunchLock(cwd, agentDir, () => {
  writeSync(1, `held ${process.pid}\n`);
  const byte = Buffer.alloc(1);
  for (;;) {
    try {
      if (readSync(0, byte, 0, 1, null) === 0) return;
    } catch (error) {
      if (error.code !== "EAGAIN") return;
      Atomics.wait(pause, 0, 0, 20); // this holder's own wait for its stdin, not a Pi process's
    }
  }
});
