/**
 * A real pi child asked to open special files of its project: a FIFO (nobody writes to it), a link
 * to /dev/zero (never ends) and a FIFO given to grep as its path. The guard refuses each call before
 * Pi's tool opens anything, saying what the path is, and the run goes on to a verified answer at
 * once; a regular file read in the same run still leaves its evidence row
 * (docs/subsystems/child-guard.md, "During the run").
 */
import { symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/core/hash.ts";
import { useAgentDir } from "../helpers/agent-dir-fixture.ts";
import { type ChildRun, prepareChildTask, runPreparedChild, verifyCommitted } from "../helpers/child-task.ts";
import { useFifoReleaser } from "../helpers/fifo.ts";
import { script } from "../helpers/model-server.ts";
import { useModelServer } from "../helpers/model-server-fixture.ts";
import { makeTempDir } from "../helpers/temp.ts";

const server = useModelServer({ resetBetweenTests: false });
// A regression (Pi's read opening the FIFO) would wait for a writer: the releaser opens and closes
// each FIFO after 5 s, so the run then goes on with an empty read, and the assertions fail instead of
// the run hanging until its timeout.
const fifos = useFifoReleaser(5_000, 60_000);
// useAgentDir: one agent dir for the file, and after it no process naming that dir.
const agent = useAgentDir(server);
let run: ChildRun;
const NOTES = "the answer is 42\n";
const ANSWER = "The notes say 42; the pipe and the device were refused.";

beforeAll(async () => {
  const cwd = await makeTempDir("guard-special");
  await writeFile(join(cwd, "notes.txt"), NOTES);
  await symlink("/dev/zero", join(cwd, "zero.txt"));
  const prompt = `Read what is there. ${script(
    {
      tools: [
        { tool: "read", args: { path: "pipe.txt" } },
        { tool: "read", args: { path: "zero.txt" } },
        { tool: "grep", args: { pattern: "answer", path: "pipe.txt" } },
        { tool: "read", args: { path: "notes.txt" } },
      ],
    },
    { text: ANSWER },
  )}`;
  const task = await prepareChildTask({ agentDir: agent.dir, prompt, cwd });
  fifos.make(join(cwd, "pipe.txt"));
  run = await runPreparedChild(task);
}, 60_000);

describe("special files in the child's project", () => {
  it("refuses a FIFO and a device, also through a link and as grep's path, before any tool opens them", () => {
    const results = (server.requests[1]?.messages ?? []).filter((m) => m.role === "tool").map((m) => m.text);
    expect(results).toEqual([
      "[delegate] pipe.txt is a FIFO, not a regular file or a directory; the delegate does not open it (it could wait for ever or never end).",
      "[delegate] zero.txt is a device, not a regular file or a directory; the delegate does not open it (it could wait for ever or never end).",
      "[delegate] pipe.txt is a FIFO, not a regular file or a directory; the delegate does not open it (it could wait for ever or never end).",
      NOTES,
    ]);
  });

  it("answers, verified, with the regular file's evidence only", () => {
    expect(run.files.terminal, run.output).toBeUndefined();
    const verified = verifyCommitted(run);
    expect(verified.text).toBe(ANSWER);
    expect(run.files.result?.evidence).toEqual([
      {
        tool: "read",
        path: "notes.txt",
        file: "notes.txt",
        line_start: 1,
        line_end: 1,
        byte_start: 0,
        byte_end: Buffer.byteLength(NOTES),
        sha256: sha256Hex(NOTES),
      },
    ]);
  });
});
