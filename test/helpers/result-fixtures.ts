/**
 * Valid, canonical result.json fixtures as a child guard would commit them, for unit tests of the
 * verifier and for integration tests that need a committed task directory.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { packAnswer } from "../../src/core/answer.ts";
import { canonicalJsonLine } from "../../src/core/canonical.ts";
import { SCHEMA, TASK_FILES } from "../../src/core/constants.ts";
import { writeFileAtomic } from "../../src/core/fs.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import type {
  AnswerPackage,
  ChildTerminalFile,
  DelegateResultFile,
  EvidenceRow,
  UsageRecord,
} from "../../src/core/types.ts";
import type { ExpectedResultIdentity } from "../../src/verify/delegate-result.ts";

/** A completed task's observed usage in the unit tests: 1,200 input and 300 output tokens, $0.0042. */
export const OBSERVED_USAGE: UsageRecord = {
  status: "observed",
  input: 1200,
  output: 300,
  cache_read: 0,
  cache_write: 0,
  total_tokens: 1500,
  cost_total: 0.0042,
};

/** The manifest terminal of a task that completed at 10:00:14 with `answer`, OBSERVED_USAGE's cost spent. */
export function completedTerminal(answer: string) {
  return { ended_at: "2026-12-01T10:00:14.000Z", answer_bytes: Buffer.byteLength(answer), cost_total: 0.0042 };
}

/** One evidence row of each kind (docs/subsystems/child-guard.md, "Evidence"): read, grep, artifact. */
export const EVIDENCE_FIXTURE: EvidenceRow[] = [
  {
    tool: "read",
    path: "./src/launch/seed.ts",
    file: "src/launch/seed.ts",
    offset: 10,
    limit: 40,
    line_start: 10,
    line_end: 49,
    byte_start: 311,
    byte_end: 2048,
    sha256: sha256Hex("seed.ts"),
  },
  {
    tool: "grep",
    args: '{"path":"src","pattern":"seed"}',
    length: 88,
    sha256: sha256Hex("grep"),
    seen: [
      {
        file: "src/launch/seed.ts",
        line_start: 3,
        line_end: 4,
        byte_start: 40,
        byte_end: 90,
        sha256: sha256Hex("3-4"),
      },
    ],
  },
  {
    tool: "delegate_read_artifact",
    path: "spill/t1-c0.txt",
    offset: 0,
    length: 64,
    sha256: sha256Hex("art"),
    // The lines of a spilled read the artifact bytes returned whole, and where the spill keeps them.
    seen: [
      {
        file: "src/big.ts",
        line_start: 1,
        line_end: 2,
        byte_start: 0,
        byte_end: 60,
        sha256: sha256Hex("1-2"),
        shown: { artifact: "spill/t1-c0.txt", offset: 0, length: 59, sha256: sha256Hex("1-2 kept") },
      },
    ],
  },
];

export const FIXTURE_IDENTITY: ExpectedResultIdentity = {
  taskId: "delegate-0123456789abcdef0123456789abcdef",
  launchNonce: "9f86d081884c7d659a2feaa0c55ad015",
  seedSha256: sha256Hex("fixture seed.json bytes"),
  route: { provider: "scripted", model: "scripted-model" },
};

/** The route attestations of a two-turn run on the fixture route: a tool call (the response named `responseModel`), then the answer. */
export function twoTurnAttestations(responseModel: string): DelegateResultFile["route_attestations"] {
  return [
    { provider: "scripted", model: "scripted-model", response_model: responseModel, stop_reason: "toolUse" },
    { provider: "scripted", model: "scripted-model", stop_reason: "stop" },
  ];
}

export interface ResultFixtureOverrides extends Partial<Omit<DelegateResultFile, "answer">> {
  /** The answer as text (encoded UTF-8) or exact bytes; default a short English answer. */
  answer?: string | Uint8Array;
}

export interface ResultFixture {
  /** The parsed document (a fresh object each call: safe to mutate). */
  result: DelegateResultFile;
  /** Its committed bytes: canonical JSON plus one newline. */
  bytes: Buffer;
  /** The answer bytes packed into the blocks. */
  answerBytes: Buffer;
  /** The identity a parent would expect for this fixture (taken from the fixture's own fields). */
  expected: ExpectedResultIdentity;
}

/** Canonical result.json bytes for a document (what the guard writes). */
export function encodeResultFile(result: unknown): Buffer {
  return Buffer.from(canonicalJsonLine(result), "utf8");
}

/**
 * Build a valid result.json. Every field can be overridden; the identity fields default to
 * {@link FIXTURE_IDENTITY} and `expected` follows whatever the fixture ends up holding.
 */
export function makeResultFile(overrides: ResultFixtureOverrides = {}): ResultFixture {
  const { answer = "The answer: 42.\n", ...fields } = overrides;
  const answerBytes = typeof answer === "string" ? Buffer.from(answer, "utf8") : Buffer.from(answer);
  const result: DelegateResultFile = {
    schema_version: SCHEMA.result,
    task_id: FIXTURE_IDENTITY.taskId,
    launch_nonce: FIXTURE_IDENTITY.launchNonce,
    seed_sha256: FIXTURE_IDENTITY.seedSha256,
    route: { ...FIXTURE_IDENTITY.route },
    route_attestations: [{ ...FIXTURE_IDENTITY.route, stop_reason: "stop" }],
    answer: packAnswer(answerBytes),
    turns: 1,
    tool_calls: 0,
    usage: {
      status: "observed",
      input: 1200,
      output: 40,
      cache_read: 0,
      cache_write: 0,
      total_tokens: 1240,
      cost_total: 0.0125,
    },
    spilled_artifacts: [],
    evidence: [],
    finalized_by_runway: false,
    finalized_by: null,
    ...fields,
  };
  const expected: ExpectedResultIdentity = {
    taskId: result.task_id,
    launchNonce: result.launch_nonce,
    seedSha256: result.seed_sha256,
    route: { ...result.route },
  };
  return { result, bytes: encodeResultFile(result), answerBytes, expected };
}

/** Commit a fixture into a task dir as the guard would (atomic write of result.json). */
export function writeResultFile(taskDir: string, fixture: Pick<ResultFixture, "bytes">): string {
  mkdirSync(taskDir, { recursive: true });
  const path = join(taskDir, TASK_FILES.result);
  writeFileAtomic(path, fixture.bytes);
  return path;
}

/** A valid child-terminal.json document for the fixture identity. */
export function makeTerminalFile(overrides: Partial<ChildTerminalFile> = {}): ChildTerminalFile {
  return {
    schema_version: SCHEMA.terminal,
    task_id: FIXTURE_IDENTITY.taskId,
    launch_nonce: FIXTURE_IDENTITY.launchNonce,
    code: "child_turn_limit",
    message: "maxTurns 24 reached",
    turns: 24,
    tool_calls: 30,
    usage: { status: "unavailable", reason: "provider reported no usage" },
    spilled_artifacts: [],
    at: "2025-01-01T00:00:00.000Z",
    ...overrides,
  };
}

/**
 * Pack bytes like packAnswer but with blocks of `blockBytes` (the last may be shorter): a valid
 * package whose block boundaries fall elsewhere, e.g. inside a multi-byte character.
 */
export function packAnswerInBlocksOf(bytes: Uint8Array, blockBytes: number): AnswerPackage {
  const blocks: AnswerPackage["blocks"] = [];
  for (let start = 0; start < bytes.length; start += blockBytes) {
    const piece = Buffer.from(bytes.subarray(start, Math.min(bytes.length, start + blockBytes)));
    blocks.push({ byte_length: piece.length, sha256: sha256Hex(piece), data_base64: piece.toString("base64") });
  }
  return { encoding: "utf-8", byte_length: bytes.length, sha256: sha256Hex(bytes), blocks };
}

/** Canonical bytes of a deep copy of `result` after `mutate` (a committed file changed by one field). */
export function recommit(result: DelegateResultFile, mutate: (doc: DelegateResultFile) => void): Buffer {
  const doc = structuredClone(result);
  mutate(doc);
  return encodeResultFile(doc);
}

/** Marks a field for removal in {@link withField}. */
export const REMOVE = Symbol("remove");

/**
 * Canonical bytes of a deep copy of `result` with the field at a dotted path ("answer.blocks.0.sha256")
 * set to `value` (any JSON value, wrong types included) or removed with {@link REMOVE}.
 */
export function withField(result: DelegateResultFile, path: string, value: unknown): Buffer {
  return recommit(result, (doc) => {
    const keys = path.split(".");
    const last = keys.pop()!;
    let node = doc as unknown as Record<string, unknown>;
    for (const key of keys) node = node[key] as Record<string, unknown>;
    if (node === undefined || node === null) throw new Error(`no parent for ${path}`);
    if (value === REMOVE) delete node[last];
    else node[last] = value;
  });
}
