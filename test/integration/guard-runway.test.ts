/**
 * Spill and runway in real pi children. One child walks the whole runway: an image result over the
 * per-result limit is spilled as a JSON envelope, a text result that would eat the protected runway
 * is spilled as exact UTF-8, the child reads the spill back in admitted ranges (a too-large range is
 * refused with the bound), and when the headroom falls to the trigger the tools are disabled and the
 * child is told once to answer. A second child proves that a failed spill withholds the payload. A
 * third, whose provider reports usage, gets the lines of a big read that fit inline ahead of the
 * spill notice, is not finalized on the bytes of that head alone (its next request measures them),
 * and reads the rest from the byte the notice names.
 */
import { randomBytes } from "node:crypto";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { crc32, deflateSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FINALIZATION_NOTICE } from "../../src/child/tool-hooks.ts";
import { SCHEMA, TASK_FILES } from "../../src/core/constants.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import type { EvidenceRow, SpillReceipt } from "../../src/core/types.ts";
import { type AgentDir, createAgentDir } from "../helpers/agent-dir.ts";
import {
  type ChildRun,
  decodeAnswer,
  prepareChildTask,
  runPreparedChild,
  verifyCommitted,
} from "../helpers/child-task.ts";
import { type FakeReply, type ModelRequest, script } from "../helpers/model-server.ts";
import { useModelServer } from "../helpers/model-server-fixture.ts";
import { makeTempDir, waitForNoProcesses } from "../helpers/temp.ts";

/** A small valid PNG of random pixels (incompressible, so its base64 is large). */
function randomPng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, no interlace
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) rows.push(Buffer.concat([Buffer.from([0]), randomBytes(width * 3)]));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(Buffer.concat(rows))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

const G = 20_000;
const SMALL = `${"s".repeat(1_999)}\n`;
const SMALL2 = `${"t".repeat(4_999)}\n`;
// One long line: no whole line fits the runway, so the spill keeps no head inline (a receipt alone).
const MID = `${"mid ünïcödé line ".repeat(1_000)}\n`;
// Many short lines: a runway spill keeps the lines that fit inline (the HEAD child).
const BIG = Array.from(
  { length: 1_000 },
  (_, i) => `big line ${String(i + 1).padStart(4, "0")} ${"b".repeat(16)}`,
).join("\n");
const HEAD_REST_LENGTH = 2_000;
const ANSWER = "Answered from the evidence at hand.";

const server = useModelServer({ handler: runwayModel, resetBetweenTests: false });
let agent: AgentDir;
let runway: ChildRun;
let spillFail: ChildRun;
let head: ChildRun;
let image: Buffer;

const turnOf = (request: ModelRequest) => request.messages.filter((m) => m.role === "assistant").length;
const isRunway = (request: ModelRequest) =>
  request.messages.some((m) => m.role === "user" && m.text.startsWith("RUNWAY"));
const runwayRequests = () => server.requests.filter(isRunway);
const isHead = (request: ModelRequest) => request.messages.some((m) => m.role === "user" && m.text.startsWith("HEAD"));
const headRequests = () => server.requests.filter(isHead);
const receiptIn = (text: string): SpillReceipt => {
  const match = /Receipt: (\{.*\})/.exec(text);
  if (!match?.[1]) throw new Error(`no receipt in: ${text.slice(0, 200)}`);
  return JSON.parse(match[1]) as SpillReceipt;
};

/**
 * The runway child's model: each turn reacts to what the previous one returned. It reports no usage,
 * so the runway counts bytes alone (the measured path has its own test).
 */
function runwayModel(request: ModelRequest): FakeReply | undefined {
  if (isHead(request)) return headStep(request);
  if (!isRunway(request)) return undefined;
  const reply = runwayStep(request);
  return reply === undefined ? undefined : { ...reply, noUsage: true };
}

function runwayStep(request: ModelRequest): FakeReply | undefined {
  const tools = request.messages.filter((m) => m.role === "tool");
  switch (turnOf(request)) {
    case 0:
      return {
        toolCalls: [
          { name: "read", args: { path: "image.png" } },
          { name: "read", args: { path: "small.txt" } },
        ],
      };
    case 1:
      return { toolCalls: [{ name: "read", args: { path: "mid.txt" } }] };
    case 2: {
      const { artifact } = receiptIn(tools.at(-1)?.text ?? "");
      return {
        toolCalls: [
          { name: "delegate_read_artifact", args: { artifact, offset: 0, length: 3_000 } },
          { name: "delegate_read_artifact", args: { artifact, offset: 0, length: 9_000 } },
        ],
      };
    }
    case 3:
      return { toolCalls: [{ name: "read", args: { path: "small2.txt" } }] };
    case 4:
      return { toolCalls: [{ name: "ls", args: {} }] };
    default:
      return { text: ANSWER };
  }
}

/** The HEAD child (usage reported, so the window is measured): read big.txt, read the rest, answer. */
function headStep(request: ModelRequest): FakeReply {
  const tools = request.messages.filter((m) => m.role === "tool");
  switch (turnOf(request)) {
    case 0:
      return { toolCalls: [{ name: "read", args: { path: "big.txt" } }] };
    case 1: {
      const text = tools.at(-1)?.text ?? "";
      const offset = Number(/the rest \(from byte (\d+)\)/.exec(text)?.[1]);
      const { artifact } = receiptIn(text);
      return {
        toolCalls: [{ name: "delegate_read_artifact", args: { artifact, offset, length: HEAD_REST_LENGTH } }],
      };
    }
    default:
      return { text: ANSWER };
  }
}

beforeAll(async () => {
  agent = await createAgentDir({ serverUrl: server.url });
  const cwd = await makeTempDir("guard-runway");
  image = randomPng(200, 150);
  await writeFile(join(cwd, "image.png"), image);
  await writeFile(join(cwd, "small.txt"), SMALL);
  await writeFile(join(cwd, "small2.txt"), SMALL2);
  await writeFile(join(cwd, "mid.txt"), MID);
  await writeFile(join(cwd, "big.txt"), BIG);
  const budget = { growth_budget_tokens: G };
  const runwayTask = await prepareChildTask({
    agentDir: agent.dir,
    cwd,
    budget,
    prompt: "RUNWAY: investigate the files.",
  });
  const failTask = await prepareChildTask({
    agentDir: agent.dir,
    cwd,
    budget,
    // An image over the per-result limit is spilled whatever R is (a text result might fit a measured window).
    prompt: `SPILLFAIL: read image.png. ${script({ tool: "read", args: { path: "image.png" } }, { text: "saw {{lastToolResult}}" })}`,
  });
  // A regular file where spill/ should be: every spill write fails.
  await rm(join(failTask.taskDir, TASK_FILES.spillDir), { recursive: true });
  await writeFile(join(failTask.taskDir, TASK_FILES.spillDir), "not a directory");
  const headTask = await prepareChildTask({ agentDir: agent.dir, cwd, budget, prompt: "HEAD: read big.txt." });
  [runway, spillFail, head] = await Promise.all([
    runPreparedChild(runwayTask),
    runPreparedChild(failTask),
    runPreparedChild(headTask),
  ]);
}, 120_000);

afterAll(async () => {
  expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
});

describe("the runway child", () => {
  it("commits a result marked finalized_by_runway, with both receipts in call order", () => {
    expect(runway.files.terminal, runway.output).toBeUndefined();
    const result = runway.files.result;
    expect(result?.finalized_by_runway).toBe(true);
    expect(decodeAnswer(result ?? ({} as never))).toBe(ANSWER);
    expect(
      result?.spilled_artifacts.map((r) => [r.tool_name, r.turn_sequence, r.source_call_index, r.content_format]),
    ).toEqual([
      ["read", 1, 0, "tool_result_content_json_v1"],
      ["read", 2, 0, "single_text_utf8"],
    ]);
    expect(runway.files.spill).toHaveLength(2);
  });

  it("the parent's verifier accepts the committed result.json (receipts, evidence, unavailable usage)", () => {
    expect(verifyCommitted(runway).text).toBe(decodeAnswer(runway.files.result ?? ({} as never)));
  });

  it("an image result over the per-result limit is spilled whole as a JSON envelope (blocks, MIME, full data)", async () => {
    const receipt = runway.files.result?.spilled_artifacts[0];
    if (!receipt) throw new Error("no receipt");
    const bytes = await readFile(join(runway.taskDir, receipt.artifact));
    expect(receipt).toMatchObject({
      schema_version: SCHEMA.spillReceipt,
      byte_length: bytes.length,
      sha256: sha256Hex(bytes),
    });
    const envelope = JSON.parse(bytes.toString("utf8"));
    expect(envelope.schema_version).toBe(SCHEMA.spillEnvelope);
    expect(envelope.content).toHaveLength(2);
    expect(envelope.content[0]).toMatchObject({ type: "text" });
    expect(envelope.content[0].text).toContain("Read image file [image/png]");
    expect(envelope.content[1]).toEqual({
      type: "image",
      mime_type: "image/png",
      data_base64: image.toString("base64"),
    });
    // The transcript got the receipt, not the image.
    const second = runwayRequests()[1];
    const imageResult = second?.messages.filter((m) => m.role === "tool")[0];
    expect(imageResult?.text).toContain("[delegate spill]");
    expect(imageResult?.text).toContain("larger than the per-result inline limit");
    expect(imageResult?.images ?? 0).toBe(0);
  });

  it("a text result that would eat the protected runway is spilled as its exact UTF-8 bytes", async () => {
    const receipt = runway.files.result?.spilled_artifacts[1];
    if (!receipt) throw new Error("no receipt");
    const bytes = await readFile(join(runway.taskDir, receipt.artifact));
    expect(bytes.equals(Buffer.from(MID, "utf8"))).toBe(true);
    expect(receipt.sha256).toBe(sha256Hex(MID));
    const third = runwayRequests()[2];
    const text = third?.messages.filter((m) => m.role === "tool").at(-1)?.text ?? "";
    expect(text).toContain("would eat the runway protected for your answer");
    expect(text).not.toContain("mid ünïcödé line");
  });

  it("reads the spill back in an admitted range, refuses the range over the runway bound with the bound stated", () => {
    const fourth = runwayRequests()[3];
    const [ok, refused] = (fourth?.messages.filter((m) => m.role === "tool") ?? []).slice(-2).map((m) => m.text);
    const expected = Buffer.from(MID, "utf8").subarray(0, 3_000);
    expect(ok).toContain(expected.toString("base64"));
    expect(refused).toMatch(
      /9000 bytes need a 12256-byte response .*over the current bound of \d+ bytes.*Request at most \d+ bytes/,
    );
    const bound = Number(/current bound of (\d+)/.exec(refused ?? "")?.[1]);
    expect(bound).toBeLessThan(12_256);
    expect(bound).toBeGreaterThanOrEqual(4_256);
    const size = (e: EvidenceRow) =>
      e.tool === "read" ? e.byte_end - e.byte_start : e.tool === "delegate_read_artifact" ? e.length : -1;
    expect(runway.files.result?.evidence.map((e) => [e.tool, "path" in e ? e.path : "", size(e)])).toEqual([
      ["read", "small.txt", Buffer.byteLength(SMALL)],
      ["delegate_read_artifact", runway.files.result?.spilled_artifacts[1]?.artifact, 3_000],
      ["read", "small2.txt", Buffer.byteLength(SMALL2)],
    ]);
  });

  it("at the trigger: the notice is sent once, every later tool call is refused, and the model answers", () => {
    const requests = runwayRequests();
    expect(requests).toHaveLength(6);
    const noticesIn = (r: ModelRequest | undefined) =>
      (r?.messages ?? []).filter((m) => m.role === "user" && m.text === FINALIZATION_NOTICE).length;
    expect(requests.slice(0, 4).map(noticesIn)).toEqual([0, 0, 0, 0]);
    expect(noticesIn(requests[4])).toBe(1);
    expect(noticesIn(requests[5])).toBe(1);
    // The notice stays where it was first placed (after small2's result), not re-appended at the end.
    expect(requests[5]?.messages.at(-1)?.role).toBe("tool");
    expect(requests[5]?.messages.at(-1)?.text).toContain("Tools are disabled");
    const budget = runway.files.runtimeBudget;
    expect(budget?.finalization).toMatchObject({ requested: true, at_request: 5 });
    expect(budget?.finalization.headroom_bytes).toBeLessThanOrEqual(8_192);
    expect(budget?.requests[3]?.headroom_bytes).toBeGreaterThan(8_192);
    // pi 0.73.1 keeps the run's tool list for the whole run; the guard's refusal is what disables them.
    expect(requests[5]?.tools).toContain("ls");
  });

  it("a turn without reported usage makes the usage unavailable, never a synthesized zero", () => {
    const usage = runway.files.result?.usage;
    expect(usage?.status).toBe("unavailable");
    if (usage?.status === "unavailable") expect(usage.reason).toMatch(/turn 1: the provider reported no usage/);
  });
});

describe("a runway spill that keeps a head inline (measured window)", () => {
  it("the model sees the whole lines that fit, then the notice; the spill holds every byte", async () => {
    expect(head.files.terminal, head.output).toBeUndefined();
    const [receipt] = head.files.result?.spilled_artifacts ?? [];
    if (!receipt) throw new Error("no receipt");
    expect(receipt).toMatchObject({ tool_name: "read", content_format: "single_text_utf8", sha256: sha256Hex(BIG) });
    expect((await readFile(join(head.taskDir, receipt.artifact))).equals(Buffer.from(BIG))).toBe(true);
    const shown =
      headRequests()[1]
        ?.messages.filter((m) => m.role === "tool")
        .at(-1)?.text ?? "";
    const [inline] = shown.split("\n\n[delegate spill]");
    const lines = (inline ?? "").split("\n").length;
    expect(BIG.startsWith(`${inline}\n`)).toBe(true);
    expect(lines).toBeGreaterThan(100);
    expect(lines).toBeLessThan(1_000);
    expect(shown).toContain(`Its first ${lines} lines (${Buffer.byteLength(inline ?? "")} bytes) are above`);
  });

  it("the head's bytes alone do not finalize: the next request measures them, and the rest is read from the named byte", () => {
    const requests = headRequests();
    expect(requests).toHaveLength(3);
    expect(requests.flatMap((r) => r.messages).filter((m) => m.text === FINALIZATION_NOTICE)).toEqual([]);
    const budget = head.files.runtimeBudget;
    // Request 2 went out with R counted within the trigger (the head at 1.00 B/token) ...
    expect(budget?.requests[1]?.headroom_bytes).toBeLessThanOrEqual(8_192);
    expect(budget?.requests[1]?.measured_input_tokens).toBeGreaterThan(0);
    // ... and request 3, measured from request 2's report, has room again: no finalization at all.
    expect(budget?.requests[2]?.headroom_bytes).toBeGreaterThan(8_192);
    expect(budget?.finalization.requested).toBe(false);
    expect(head.files.result?.finalized_by).toBeNull();
    const inline = (requests[1]?.messages.filter((m) => m.role === "tool").at(-1)?.text ?? "").split(
      "\n\n[delegate spill]",
    )[0] as string;
    const headBytes = Buffer.byteLength(inline);
    const lines = inline.split("\n").length;
    const rest = requests[2]?.messages.filter((m) => m.role === "tool").at(-1)?.text ?? "";
    expect(rest).toContain(
      Buffer.from(BIG)
        .subarray(headBytes + 1, headBytes + 1 + HEAD_REST_LENGTH)
        .toString("base64"),
    );
    const artifact = head.files.result?.spilled_artifacts[0]?.artifact;
    // With the head (the spill's first bytes), the rest read back holds lines 1..last whole: they are seen.
    const big = Buffer.from(BIG);
    const readEnd = headBytes + 1 + HEAD_REST_LENGTH;
    let seenEnd = 0; // the byte after the last whole line's newline
    let last = 0;
    for (let nl = big.indexOf(10); nl !== -1 && nl <= readEnd; nl = big.indexOf(10, nl + 1)) {
      seenEnd = nl + 1;
      last++;
    }
    expect(head.files.result?.evidence).toEqual([
      {
        tool: "read",
        path: "big.txt",
        file: "big.txt",
        line_start: 1,
        line_end: lines,
        byte_start: 0,
        byte_end: headBytes + 1,
        sha256: sha256Hex(`${inline}\n`),
        shown: { artifact, offset: 0, length: headBytes, sha256: sha256Hex(inline) },
      },
      {
        tool: "delegate_read_artifact",
        path: artifact,
        offset: headBytes + 1,
        length: HEAD_REST_LENGTH,
        sha256: sha256Hex(big.subarray(headBytes + 1, readEnd)),
        seen: [
          {
            file: "big.txt",
            line_start: 1,
            line_end: last,
            byte_start: 0,
            byte_end: seenEnd,
            sha256: sha256Hex(big.subarray(0, seenEnd)),
            shown: { artifact, offset: 0, length: seenEnd - 1, sha256: sha256Hex(big.subarray(0, seenEnd - 1)) },
          },
        ],
      },
    ]);
    expect(decodeAnswer(head.files.result ?? ({} as never))).toBe(ANSWER);
  });
});

describe("a failed spill", () => {
  it("withholds the payload from the model and ends as artifact_spill_failed", () => {
    expect(spillFail.files.terminal?.code, spillFail.output).toBe("artifact_spill_failed");
    expect(spillFail.files.result).toBeUndefined();
    const requests = server.requests.filter((r) => r.messages.some((m) => m.text.startsWith("SPILLFAIL")));
    expect(requests).toHaveLength(1);
    const messages = requests.flatMap((r) => r.messages);
    expect(messages.some((m) => (m.images ?? 0) > 0 || m.text.includes(image.toString("base64").slice(0, 64)))).toBe(
      false,
    );
  });
});
