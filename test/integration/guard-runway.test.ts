/**
 * Spill and runway in real pi children. One child walks the whole runway: an image result over the
 * per-result limit is spilled as a JSON envelope, a text result that would eat the protected runway
 * is spilled as exact UTF-8, the child reads the spill back in admitted ranges (a too-large range is
 * refused with the bound), and when the headroom falls to the trigger the tools are disabled and the
 * child is told once to answer. A second child proves that a failed spill withholds the payload.
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
import { verifyDelegateResult } from "../../src/verify/delegate-result.ts";
import { type AgentDir, createAgentDir } from "../helpers/agent-dir.ts";
import { type ChildRun, decodeAnswer, prepareChildTask, runPreparedChild } from "../helpers/child-task.ts";
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
const MID = `${"mid ünïcödé line\n".repeat(1_000)}`;
const ANSWER = "Answered from the evidence at hand.";

const server = useModelServer({ handler: runwayModel, resetBetweenTests: false });
let agent: AgentDir;
let runway: ChildRun;
let spillFail: ChildRun;
let image: Buffer;

const turnOf = (request: ModelRequest) => request.messages.filter((m) => m.role === "assistant").length;
const isRunway = (request: ModelRequest) =>
  request.messages.some((m) => m.role === "user" && m.text.startsWith("RUNWAY"));
const runwayRequests = () => server.requests.filter(isRunway);
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

beforeAll(async () => {
  agent = await createAgentDir({ serverUrl: server.url });
  const cwd = await makeTempDir("guard-runway");
  image = randomPng(200, 150);
  await writeFile(join(cwd, "image.png"), image);
  await writeFile(join(cwd, "small.txt"), SMALL);
  await writeFile(join(cwd, "small2.txt"), SMALL2);
  await writeFile(join(cwd, "mid.txt"), MID);
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
    prompt: `SPILLFAIL: read mid.txt. ${script({ tool: "read", args: { path: "mid.txt" } }, { text: "saw {{lastToolResult}}" })}`,
  });
  // A regular file where spill/ should be: every spill write fails.
  await rm(join(failTask.taskDir, TASK_FILES.spillDir), { recursive: true });
  await writeFile(join(failTask.taskDir, TASK_FILES.spillDir), "not a directory");
  [runway, spillFail] = await Promise.all([runPreparedChild(runwayTask), runPreparedChild(failTask)]);
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
    const verified = verifyDelegateResult(Buffer.from(runway.files.resultText ?? "", "utf8"), {
      taskId: runway.seed.task_id,
      launchNonce: runway.seed.launch_nonce,
      seedSha256: runway.seedSha256,
      route: { provider: runway.seed.route.provider, model: runway.seed.route.model },
    });
    expect(verified.text).toBe(decodeAnswer(runway.files.result ?? ({} as never)));
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

describe("a failed spill", () => {
  it("withholds the payload from the model and ends as artifact_spill_failed", () => {
    expect(spillFail.files.terminal?.code, spillFail.output).toBe("artifact_spill_failed");
    expect(spillFail.files.result).toBeUndefined();
    const requests = server.requests.filter((r) => r.messages.some((m) => m.text.startsWith("SPILLFAIL")));
    expect(requests).toHaveLength(1);
    expect(requests.flatMap((r) => r.messages).some((m) => m.text.includes("mid ünïcödé line"))).toBe(false);
  });
});
