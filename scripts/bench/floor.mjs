/**
 * The floor of a launch for one seed (figure 1's denominator): the least work any launch of that
 * seed must do — one SHA-256 pass over its bytes, one fsynced write of them, and one spawn of a
 * trivial process (`node -e 0`, timed until spawn() returns: like bg_delegate, which returns once the
 * child has a pid, without waiting for it). Measured in the same process, right after the receipt.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, fsyncSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

let files = 0;

/**
 * The floor for `bytes`: the run with the median total of `runs` runs, so one spawn delayed by
 * other work on the machine does not become the denominator of a whole repetition.
 */
export async function measureFloor(bytes, scratchDir, runs = 3) {
  const all = [];
  for (let i = 0; i < runs; i++) all.push(await floorOnce(bytes, scratchDir));
  all.sort((a, b) => a.total_ms - b.total_ms);
  return all[Math.floor(all.length / 2)];
}

async function floorOnce(bytes, scratchDir) {
  const t0 = performance.now();
  createHash("sha256").update(bytes).digest("hex");
  const t1 = performance.now();
  const path = join(scratchDir, `floor-${process.pid}-${++files}.bin`);
  const fd = openSync(path, "w", 0o600);
  try {
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  const t2 = performance.now();
  const child = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
  const t3 = performance.now();
  await new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("close", resolve);
    child.once("error", resolve);
  });
  rmSync(path, { force: true });
  return { sha256_ms: t1 - t0, fsync_write_ms: t2 - t1, spawn_ms: t3 - t2, total_ms: t3 - t0 };
}
