import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ANSWER_BLOCK_BYTES,
  ANSWER_CAPTURE_MAX_BYTES,
  GREP_SEEN_MAX_RANGES,
  TASK_FILES,
} from "../../src/core/constants.ts";
import { DelegateError, type FailureCode } from "../../src/core/errors.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import type { DelegateResultFile, SearchEvidence } from "../../src/core/types.ts";
import { classifyChildOutcome, readChildTerminal } from "../../src/verify/classify.ts";
import { type ExpectedResultIdentity, verifyDelegateResult } from "../../src/verify/delegate-result.ts";
import { readTaskFile, readVerifiedResult } from "../../src/verify/result-file.ts";
import {
  EVIDENCE_FIXTURE,
  encodeResultFile,
  makeResultFile,
  makeTerminalFile,
  packAnswerInBlocksOf,
  REMOVE,
  recommit,
  twoTurnAttestations,
  withField,
  writeResultFile,
} from "../helpers/result-fixtures.ts";
import { makeTempDirSync } from "../helpers/temp.ts";

/** The code verification fails with; fails the test when it is accepted or throws something else. */
function codeOf(bytes: Uint8Array, expected: ExpectedResultIdentity): FailureCode {
  let verified: unknown;
  try {
    verified = verifyDelegateResult(bytes, expected);
  } catch (error) {
    if (error instanceof DelegateError) return error.code;
    throw error;
  }
  throw new Error(`accepted: ${JSON.stringify(verified).slice(0, 120)}`);
}

const base = makeResultFile({
  answer: "Findings:\n- src/a.ts reads the seed twice.\n- No other caller.\n",
  turns: 3,
  tool_calls: 4,
  route_attestations: twoTurnAttestations("scripted-model-2025"),
  spilled_artifacts: [
    {
      schema_version: "pi-bg-delegate.spill-receipt.v1",
      artifact: "spill/0001-read.txt",
      tool_name: "read",
      tool_call_id: "call_1",
      turn_sequence: 1,
      source_call_index: 0,
      byte_length: 70000,
      sha256: sha256Hex("spilled"),
      content_format: "single_text_utf8",
    },
  ],
  evidence: EVIDENCE_FIXTURE,
});

const failsWith = (bytes: Uint8Array, code: FailureCode, expected = base.expected) =>
  expect(codeOf(bytes, expected)).toBe(code);
const mutated = (mutate: (doc: DelegateResultFile) => void) => recommit(base.result, mutate);

describe("verifyDelegateResult: accepted results", () => {
  it("accepts the committed original and returns the hashed bytes and their text", () => {
    const verified = verifyDelegateResult(base.bytes, base.expected);
    expect(verified.answerBytes.equals(base.answerBytes)).toBe(true);
    expect(verified.text).toBe(base.answerBytes.toString("utf8"));
    expect(verified.result).toEqual(base.result);
  });

  it("accepts a multi-block answer (> 256 KiB) with a multi-byte character split across blocks", () => {
    // 'é' is 2 bytes; an odd prefix puts one of them at the end of the first 256 KiB block.
    const text = `x${"é".repeat(ANSWER_BLOCK_BYTES / 2 + 5000)}\nend`;
    const fixture = makeResultFile({ answer: text });
    expect(fixture.result.answer.blocks).toHaveLength(2);
    expect(fixture.answerBytes[ANSWER_BLOCK_BYTES - 1]).toBe(0xc3); // the first block ends mid-character
    const verified = verifyDelegateResult(fixture.bytes, fixture.expected);
    expect(verified.text).toBe(text);
    expect(verified.answerBytes.length).toBe(Buffer.byteLength(text));
  });

  it("accepts a differently blocked but self-consistent package (block boundaries are not content)", () => {
    const fixture = makeResultFile({ answer: "ünïcödé ✓ 🚀 text" });
    const bytes = recommit(fixture.result, (doc) => {
      doc.answer = packAnswerInBlocksOf(fixture.answerBytes, 3);
    });
    expect(verifyDelegateResult(bytes, fixture.expected).text).toBe("ünïcödé ✓ 🚀 text");
  });

  it("records response_model and stop_reason without comparing them to the pin", () => {
    const bytes = mutated((doc) => {
      doc.route_attestations[0]!.response_model = "some-other-label";
      doc.route_attestations[1]!.stop_reason = "length";
    });
    expect(verifyDelegateResult(bytes, base.expected).result.route_attestations[0]!.response_model).toBe(
      "some-other-label",
    );
  });

  it("accepts a child string that imitates the layout check's block marker", () => {
    const bytes = mutated((doc) => {
      doc.route_attestations[1]!.stop_reason = "\u0000pi-bg-delegate block 0\u0000";
    });
    expect(verifyDelegateResult(bytes, base.expected).text).toBe(base.answerBytes.toString("utf8"));
  });

  it("accepts usage reported as unavailable", () => {
    const bytes = mutated((doc) => {
      doc.usage = { status: "unavailable", reason: "all-zero usage for a message with content" };
    });
    expect(verifyDelegateResult(bytes, base.expected).result.usage.status).toBe("unavailable");
  });
});

describe("verifyDelegateResult: step 1, JSON shape, schema version, canonical layout", () => {
  const json = base.bytes.toString("utf8");
  it.each([
    ["not UTF-8", Buffer.concat([base.bytes.subarray(0, 10), Buffer.from([0xff]), base.bytes.subarray(10)])],
    ["not JSON", Buffer.from("result\n")],
    ["empty", Buffer.alloc(0)],
    ["no trailing newline", Buffer.from(json.slice(0, -1))],
    ["two trailing newlines", Buffer.from(`${json}\n`)],
    ["CRLF ending", Buffer.from(`${json.slice(0, -1)}\r\n`)],
    ["pretty-printed", Buffer.from(`${JSON.stringify(base.result, null, 2)}\n`)],
    [
      "keys in insertion order",
      Buffer.from(`${JSON.stringify(Object.fromEntries(Object.entries(base.result).reverse()))}\n`),
    ],
    ["a BOM", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), base.bytes])],
    ["an escaped base64 character", Buffer.from(json.replace('"data_base64":"R', '"data_base64":"\\u0052'))],
    ["an escaped slash", Buffer.from(json.replace('"artifact":"spill/', '"artifact":"spill\\/'))],
    [
      "a lone surrogate escape",
      mutated((doc) => {
        doc.route_attestations[1]!.stop_reason = "x";
      })
        .toString()
        .replace('"stop_reason":"x"', '"stop_reason":"\\ud800"'),
    ],
  ])("rejects %s", (_name, bytes) => {
    failsWith(typeof bytes === "string" ? Buffer.from(bytes) : bytes, "child_result_invalid");
  });

  it("rejects a duplicated key (JSON.parse keeps the last; the layout is not canonical)", () => {
    const doubled = json.replace('"turns":3', '"turns":9,"turns":3');
    failsWith(Buffer.from(doubled), "child_result_invalid");
  });

  it("reads the document JSON.parse reads when a string or key holds the data key's text", () => {
    // The fast path cuts the data strings out by their key's text; a look-alike must not fool it.
    const fixture = makeResultFile({ answer: "x".repeat(ANSWER_BLOCK_BYTES + 5) });
    const stopReason = 'said "data_base64":"QUJD" and \\"data_base64":"';
    const bytes = recommit(fixture.result, (doc) => {
      doc.route_attestations[0]!.stop_reason = stopReason;
    });
    const verified = verifyDelegateResult(bytes, fixture.expected);
    expect(verified.result).toEqual(JSON.parse(bytes.toString("utf8")));
    expect(verified.result.route_attestations[0]!.stop_reason).toBe(stopReason);
    const lookAlikeKey = bytes.toString("utf8").replace('"stop_reason":', '"x\\"data_base64":"QUJD","stop_reason":');
    failsWith(Buffer.from(lookAlikeKey), "child_result_invalid");
  });

  const r = base.result;
  it.each<[string, string, unknown]>([
    ["schema_version", "schema_version", "pi-bg-delegate.result.v0"],
    ["a top-level unknown key", "extra", 1],
    ["an unknown key in route", "route.region", "eu"],
    ["an unknown key in an attestation", "route_attestations.0.x", 1],
    ["an unknown key in answer", "answer.kind", "text"],
    ["an unknown key in a block", "answer.blocks.0.kind", "text"],
    ["an unknown key in usage", "usage.reasoning", 1],
    ["an unknown key in a receipt", "spilled_artifacts.0.x", 1],
    ["an unknown key in evidence", "evidence.0.x", 1],
    ["an unknown key in a search row", "evidence.1.x", 1],
    ["an unknown key in an artifact row", "evidence.2.x", 1],
    ["an evidence row of another tool", "evidence.0.tool", "bash"],
    ["a read row without its byte range", "evidence.0.byte_end", REMOVE],
    ["a read row starting at line 0", "evidence.0.line_start", 0],
    ["a read row ending two lines before it starts", "evidence.0.line_end", -1],
    ["a read row whose line_end is far below line_start", "evidence.0.line_start", 60],
    ["a read row whose bytes end before they start", "evidence.0.byte_start", 2049],
    ["a read row with a string offset", "evidence.0.offset", "1"],
    ["a read row with offset 0", "evidence.0.offset", 0],
    ["a read row with a null limit", "evidence.0.limit", null],
    ["a search row without its arguments", "evidence.1.args", REMOVE],
    ["a search row with a path", "evidence.1.path", "src"],
    ["a grep row with no seen ranges", "evidence.1.seen", []],
    ["a seen range of no lines", "evidence.1.seen.0.line_end", 2],
    ["a seen range starting at line 0", "evidence.1.seen.0.line_start", 0],
    ["a seen range whose bytes end before they start", "evidence.1.seen.0.byte_end", 39],
    ["an unknown key in a seen range", "evidence.1.seen.0.x", 1],
    ["a seen range without its hash", "evidence.1.seen.0.sha256", REMOVE],
    [
      "a grep row with more seen ranges than the guard keeps",
      "evidence.1.seen",
      Array.from(
        { length: GREP_SEEN_MAX_RANGES + 1 },
        () => (r.evidence[1] as Extract<SearchEvidence, { tool: "grep" }>).seen?.[0],
      ),
    ],
    ["a missing field", "finalized_by_runway", REMOVE],
    ["a missing block field", "answer.blocks.0.sha256", REMOVE],
    ["turns as a string", "turns", "3"],
    ["a fractional tool_calls", "tool_calls", 1.5],
    ["a negative block byte_length", "answer.blocks.0.byte_length", -1],
    ["blocks as an object", "answer.blocks", {}],
    ["null usage", "usage", null],
    ["an unknown usage status", "usage.status", "partial"],
    ["an uppercase seed_sha256", "seed_sha256", r.seed_sha256.toUpperCase()],
    ["an uppercase answer sha256", "answer.sha256", r.answer.sha256.toUpperCase()],
    ["a short block sha256", "answer.blocks.0.sha256", "abc"],
    ["a prefixed sha256", "answer.sha256", `sha256:${r.answer.sha256}`],
    ["an unknown receipt format", "spilled_artifacts.0.content_format", "raw"],
    ["finalized_by_runway as 0", "finalized_by_runway", 0],
    ["a missing finalized_by", "finalized_by", REMOVE],
    ["an unknown finalized_by", "finalized_by", "budget"],
    ["a null response_model", "route_attestations.0.response_model", null],
    ["an answer over the capture cap", "answer.byte_length", ANSWER_CAPTURE_MAX_BYTES + 1],
  ])("rejects %s", (_name, path, value) => {
    failsWith(withField(r, path, value), "child_result_invalid");
  });
});

describe("verifyDelegateResult: steps 2–9", () => {
  const field = (path: string, value: unknown) => withField(base.result, path, value);

  it("step 2: task_id and launch_nonce must be this launch's", () => {
    failsWith(field("task_id", "delegate-ffffffffffffffffffffffffffffffff"), "child_result_invalid");
    failsWith(field("launch_nonce", "00000000000000000000000000000000"), "child_result_invalid");
    failsWith(base.bytes, "child_result_invalid", { ...base.expected, launchNonce: "another-launch" });
  });

  it("step 3: seed_sha256 must be the launched seed", () => {
    failsWith(field("seed_sha256", sha256Hex("another seed")), "seed_hash_mismatch");
    failsWith(base.bytes, "seed_hash_mismatch", { ...base.expected, seedSha256: sha256Hex("x") });
  });

  it("step 4: route and every attestation equal the pin; at least one attestation", () => {
    failsWith(field("route.model", "other-model"), "route_mismatch");
    failsWith(field("route.provider", "other"), "route_mismatch");
    failsWith(field("route_attestations", []), "route_attestation_missing");
    failsWith(field("route_attestations.1.model", "other-model"), "route_mismatch");
    failsWith(field("route_attestations.0.provider", "other"), "route_mismatch");
    failsWith(base.bytes, "route_mismatch", { ...base.expected, route: { provider: "scripted", model: "m2" } });
  });

  it("step 5: answer.encoding is utf-8", () => {
    for (const encoding of ["utf8", "UTF-8", "latin1", ""]) {
      failsWith(field("answer.encoding", encoding), "child_result_encoding_invalid");
    }
  });

  it("step 6: strict base64 in every block", () => {
    const data = base.result.answer.blocks[0]!.data_base64;
    expect(data.endsWith("=")).toBe(true);
    for (const bad of [
      `${data.slice(0, 8)}\n${data.slice(8)}`,
      ` ${data}`,
      data.replace(/=+$/, ""),
      `${data}==`,
      `-${data.slice(1)}`,
      `_${data.slice(1)}`,
      `${data.slice(0, 4)}====${data.slice(4)}`,
    ]) {
      failsWith(field("answer.blocks.0.data_base64", bad), "child_result_encoding_invalid");
    }
  });

  it("step 6: non-zero trailing bits are not canonical base64", () => {
    const fixture = makeResultFile({ answer: "a" }); // "YQ==": 'Q' carries 4 unused zero bits
    expect(fixture.result.answer.blocks[0]!.data_base64).toBe("YQ==");
    const bytes = withField(fixture.result, "answer.blocks.0.data_base64", "YR==");
    failsWith(bytes, "child_result_encoding_invalid", fixture.expected);
  });

  it("step 7: every block's byte_length and sha256", () => {
    const block = base.result.answer.blocks[0]!;
    failsWith(field("answer.blocks.0.byte_length", block.byte_length + 1), "answer_hash_mismatch");
    failsWith(field("answer.blocks.0.sha256", sha256Hex("other")), "answer_hash_mismatch");
  });

  it("step 8: the aggregate byte_length and sha256", () => {
    failsWith(field("answer.byte_length", base.result.answer.byte_length - 1), "answer_hash_mismatch");
    failsWith(field("answer.sha256", sha256Hex("other")), "answer_hash_mismatch");
    // Self-consistent blocks of another answer: only the aggregate catches it.
    failsWith(field("answer.blocks", packAnswerInBlocksOf(Buffer.from("other"), 2).blocks), "answer_hash_mismatch");
  });

  it("step 9: well-formed UTF-8, not blank", () => {
    for (const bytes of [[0xff], [0x61, 0xc3], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80]]) {
      failsWith(field("answer", packAnswerInBlocksOf(Buffer.from(bytes), 256)), "child_result_encoding_invalid");
    }
    for (const blank of ["", " ", "\n\t \r\n", "\u00a0\u2003\ufeff"]) {
      failsWith(field("answer", packAnswerInBlocksOf(Buffer.from(blank), 256)), "child_result_invalid");
    }
  });

  it("checks in the documented order: each fix reveals the next step's code", () => {
    const other = packAnswerInBlocksOf(Buffer.from([0x61, 0xff]), 1);
    const fixes: Array<[FailureCode, (d: DelegateResultFile) => void]> = [
      [
        "child_result_invalid",
        (d) => {
          d.task_id = base.result.task_id;
        },
      ],
      [
        "seed_hash_mismatch",
        (d) => {
          d.seed_sha256 = base.result.seed_sha256;
        },
      ],
      [
        "route_mismatch",
        (d) => {
          d.route = { ...base.result.route };
        },
      ],
      [
        "route_attestation_missing",
        (d) => {
          d.route_attestations = base.result.route_attestations;
        },
      ],
      [
        "child_result_encoding_invalid",
        (d) => {
          d.answer.encoding = "utf-8";
        },
      ],
      [
        "child_result_encoding_invalid",
        (d) => {
          d.answer.blocks[0]!.data_base64 = other.blocks[0]!.data_base64;
        },
      ],
      [
        "answer_hash_mismatch",
        (d) => {
          d.answer.blocks[0]!.sha256 = other.blocks[0]!.sha256;
        },
      ],
      [
        "answer_hash_mismatch",
        (d) => {
          d.answer.sha256 = other.sha256;
        },
      ],
      [
        "child_result_encoding_invalid",
        (d) => {
          d.answer = base.result.answer;
        },
      ],
    ];
    const doc = structuredClone(base.result);
    Object.assign(doc, { task_id: "stale", seed_sha256: sha256Hex("s"), route: { provider: "p", model: "m" } });
    doc.route_attestations = [];
    doc.answer = { ...structuredClone(other), encoding: "utf8" as "utf-8" };
    doc.answer.blocks[0] = { ...other.blocks[0]!, data_base64: "Y Q==", sha256: sha256Hex("") };
    doc.answer.sha256 = sha256Hex("");
    for (const [code, fix] of fixes) {
      failsWith(encodeResultFile(doc), code);
      fix(doc);
    }
    expect(verifyDelegateResult(encodeResultFile(doc), base.expected).text).toBe(base.answerBytes.toString());
  });
});

describe("reading a task directory", () => {
  const taskDir = () => makeTempDirSync("verify-delegate", "each");

  it("readVerifiedResult: missing → null, committed → verified, tampered → its code naming the file", () => {
    const dir = taskDir();
    expect(readVerifiedResult(dir, base.expected)).toBeNull();
    const path = writeResultFile(dir, base);
    expect(readVerifiedResult(dir, base.expected)?.text).toBe(base.answerBytes.toString());
    writeFileSync(
      path,
      mutated((d) => {
        d.answer.sha256 = sha256Hex("x");
      }),
    );
    const error = (() => {
      try {
        readVerifiedResult(dir, base.expected);
      } catch (e) {
        return e as DelegateError;
      }
    })();
    expect(error?.code).toBe("answer_hash_mismatch");
    expect(error?.facts.artifacts).toEqual([path]);
  });

  it("readVerifiedResult: a result.json that exists but cannot be read → artifact_read_failed", () => {
    const dir = taskDir();
    mkdirSync(join(dir, TASK_FILES.result));
    expect(() => readVerifiedResult(dir, base.expected)).toThrowError(
      expect.objectContaining({ code: "artifact_read_failed" }),
    );
  });

  it("readTaskFile refuses a file over its bound before reading it", () => {
    const dir = taskDir();
    writeFileSync(join(dir, "big.json"), Buffer.alloc(2048, 0x20));
    expect(() => readTaskFile(join(dir, "big.json"), 1024)).toThrowError(
      expect.objectContaining({ code: "child_result_invalid" }),
    );
    expect(readTaskFile(join(dir, "big.json"), 2048)?.length).toBe(2048);
  });

  it("readChildTerminal: missing → null, valid → the record, malformed → child_result_invalid", () => {
    const dir = taskDir();
    const path = join(dir, TASK_FILES.terminal);
    expect(readChildTerminal(dir)).toBeNull();
    writeFileSync(path, `${JSON.stringify(makeTerminalFile())}\n`);
    expect(readChildTerminal(dir, base.expected)).toMatchObject({
      code: "child_turn_limit",
      message: "maxTurns 24 reached",
    });
    const malformed = [
      "{",
      JSON.stringify({ ...makeTerminalFile(), code: "made_up_code" }),
      JSON.stringify({ ...makeTerminalFile(), extra: true }),
      JSON.stringify({ ...makeTerminalFile(), turns: "24" }),
      JSON.stringify({ ...makeTerminalFile(), schema_version: "v0" }),
    ];
    for (const text of malformed) {
      writeFileSync(path, text);
      expect(() => readChildTerminal(dir)).toThrowError(expect.objectContaining({ code: "child_result_invalid" }));
    }
    writeFileSync(path, JSON.stringify(makeTerminalFile({ launch_nonce: "old" })));
    expect(readChildTerminal(dir)?.launch_nonce).toBe("old");
    expect(() => readChildTerminal(dir, base.expected)).toThrowError(
      expect.objectContaining({ code: "child_result_invalid" }),
    );
  });

  it("classifyChildOutcome: result.json wins, else the terminal code, else child_exited_without_commit", () => {
    const dir = taskDir();
    const none = classifyChildOutcome(dir, base.expected);
    expect(none.kind === "failed" && none.error.code).toBe("child_exited_without_commit");
    writeFileSync(join(dir, TASK_FILES.terminal), JSON.stringify(makeTerminalFile({ code: "child_timeout" })));
    const terminal = classifyChildOutcome(dir, base.expected);
    expect(terminal.kind === "failed" && terminal.error.code).toBe("child_timeout");
    expect(terminal.kind === "failed" && terminal.terminal?.code).toBe("child_timeout");
    const path = writeResultFile(dir, base);
    const committed = classifyChildOutcome(dir, base.expected);
    expect(committed.kind === "committed" && committed.verified.text).toBe(base.answerBytes.toString());
    writeFileSync(
      path,
      mutated((d) => {
        d.route.model = "drift";
      }),
    );
    const drift = classifyChildOutcome(dir, base.expected);
    expect(drift.kind === "failed" && drift.error.code).toBe("route_mismatch");
  });
});
