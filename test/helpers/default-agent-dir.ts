/**
 * Every test file runs with a Pi agent dir of its own (vitest setupFiles): the store's records are
 * signed with the per-user key in PI_CODING_AGENT_DIR (docs/subsystems/launch.md, "The store is
 * yours"), so a test that writes a tree, and a `pi-bg-delegate` command it starts, sign and check
 * with one temporary key, never the key of the user running the tests. A file that uses
 * useAgentDir points the variable at that agent dir instead while its tests run.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

if (!process.env.PI_CODING_AGENT_DIR) {
  const dir = mkdtempSync(join(tmpdir(), "pi-bg-delegate-test-agent-"));
  process.env.PI_CODING_AGENT_DIR = dir;
  afterAll(() => {
    if (process.env.PI_CODING_AGENT_DIR === dir) delete process.env.PI_CODING_AGENT_DIR;
    rmSync(dir, { recursive: true, force: true });
  });
}
