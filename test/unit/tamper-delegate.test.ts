/**
 * Tamper suite: deterministic, seeded single-field and single-byte mutations of committed results.
 * Every mutation must be refused with the code its class gets (docs/subsystems/retrieval.md,
 * "Verification order"); the unmutated
 * originals (and re-blockings that keep the same answer) must be accepted, so a verifier that
 * rejects everything fails here too.
 */
import { describe, expect, it } from "vitest";
import { ANSWER_BLOCK_BYTES } from "../../src/core/constants.ts";
import { DelegateError, type FailureCode } from "../../src/core/errors.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import { type ExpectedResultIdentity, verifyDelegateResult } from "../../src/verify/delegate-result.ts";
import { prng } from "../helpers/prng.ts";
import {
  EVIDENCE_FIXTURE,
  encodeResultFile,
  makeResultFile,
  packAnswerInBlocksOf,
  REMOVE,
  type ResultFixture,
  recommit,
  twoTurnAttestations,
  withField,
} from "../helpers/result-fixtures.ts";

/** Draws from the seeded PRNG, so every run draws the same mutations. */
function rng(seed: number): { int(n: number): number; pick<T>(items: readonly T[]): T } {
  const next = prng(seed);
  return { int: (n) => Math.floor(next() * n), pick: (items) => items[Math.floor(next() * items.length)]! };
}

const receipt = {
  schema_version: "pi-bg-delegate.spill-receipt.v1" as const,
  artifact: "spill/0001-grep.txt",
  tool_name: "grep",
  tool_call_id: "call_7",
  turn_sequence: 2,
  source_call_index: 1,
  byte_length: 81234,
  sha256: sha256Hex("spilled grep output"),
  content_format: "tool_result_content_json_v1" as const,
};

const SMALL = makeResultFile({
  answer: "The seed is read in src/launch/seed.ts:41 and hashed once.\n",
  turns: 4,
  tool_calls: 6,
  route_attestations: twoTurnAttestations("scripted-model-0613"),
  spilled_artifacts: [receipt],
  evidence: EVIDENCE_FIXTURE,
  finalized_by_runway: true,
});

// Three blocks; 'ü' (2 bytes) and '🚀' (4 bytes) are laid out so characters straddle both boundaries.
const MULTI_TEXT = `${"ü".repeat(ANSWER_BLOCK_BYTES / 2 - 1)}🚀${"line with ü and 🚀\n".repeat(14000)}`;
const MULTI = makeResultFile({
  answer: MULTI_TEXT,
  usage: { status: "unavailable", reason: "provider reported no usage" },
});

/** Small blocks that split multi-byte characters: a valid package, not a mutation. */
const SPLIT_ANSWER = Buffer.from("Größe: 12 µm — ✓ 🚀 done");
const SPLIT = (() => {
  const fixture = makeResultFile({ answer: SPLIT_ANSWER });
  const result = structuredClone(fixture.result);
  result.answer = packAnswerInBlocksOf(SPLIT_ANSWER, 5);
  return { ...fixture, result, bytes: encodeResultFile(result) } satisfies ResultFixture;
})();

const ORIGINALS = { SMALL, MULTI, SPLIT } as const;

interface Mutation {
  cls: string;
  name: string;
  bytes: Uint8Array;
  code: FailureCode;
  expected: ExpectedResultIdentity;
}

function outcome(bytes: Uint8Array, expected: ExpectedResultIdentity): FailureCode | "accepted" {
  try {
    verifyDelegateResult(bytes, expected);
    return "accepted";
  } catch (error) {
    if (error instanceof DelegateError) return error.code;
    throw error;
  }
}

// ── walking a document ───────────────────────────────────────────────────────────────────────────

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every path (dotted, array indices as numbers) of a document, objects and leaves alike. */
function paths(value: Json, prefix = ""): Array<{ path: string; value: Json }> {
  const out: Array<{ path: string; value: Json }> = [];
  const children: Array<[string, Json]> = Array.isArray(value)
    ? value.map((v, i) => [String(i), v])
    : value !== null && typeof value === "object"
      ? Object.entries(value)
      : [];
  for (const [key, child] of children) {
    const path = prefix ? `${prefix}.${key}` : key;
    out.push({ path, value: child }, ...paths(child, path));
  }
  return out;
}

const isObject = (v: Json): v is { [key: string]: Json } => v !== null && typeof v === "object" && !Array.isArray(v);
const HEX_PATHS = /(^seed_sha256$|sha256$)/;

/** Which code a changed value of a field earns (the bound fields); null for unbound metadata. */
function boundCode(path: string): FailureCode | null {
  if (path === "schema_version" || path === "task_id" || path === "launch_nonce") return "child_result_invalid";
  if (path === "seed_sha256") return "seed_hash_mismatch";
  if (/^route\.(provider|model)$/.test(path) || /^route_attestations\.\d+\.(provider|model)$/.test(path)) {
    return "route_mismatch";
  }
  if (path === "answer.encoding") return "child_result_encoding_invalid";
  if (/^answer\.(byte_length|sha256)$/.test(path) || /^answer\.blocks\.\d+\.(byte_length|sha256)$/.test(path)) {
    return "answer_hash_mismatch";
  }
  return null;
}

// ── mutation classes ─────────────────────────────────────────────────────────────────────────────

function fieldMutations(label: string, fx: ResultFixture, r: ReturnType<typeof rng>): Mutation[] {
  const out: Mutation[] = [];
  const add = (cls: string, name: string, bytes: Uint8Array, code: FailureCode) =>
    out.push({ cls, name: `${label} ${name}`, bytes, code, expected: fx.expected });
  const doc = fx.result as unknown as Json;
  add("unknown key", "root.extra", withField(fx.result, "extra", r.int(9)), "child_result_invalid");
  for (const { path, value } of paths(doc)) {
    const wrongType: Json = typeof value === "string" ? 7 : typeof value === "number" ? String(value) : "x";
    add(
      "wrong type",
      `${path} → ${JSON.stringify(wrongType)}`,
      withField(fx.result, path, wrongType),
      "child_result_invalid",
    );
    if (value !== null) add("null", `${path} → null`, withField(fx.result, path, null), "child_result_invalid");
    // Optional fields: response_model, a read row's offset and limit (absent when not given), a grep's
    // seen, an artifact row's seen and a seen range's shown.
    if (
      !/^\d+$/.test(path.split(".").pop()!) &&
      !/response_model$|^evidence\.0\.(offset|limit)$|^evidence\.[12]\.seen$|^evidence\.2\.seen\.0\.shown$/.test(path)
    ) {
      add("dropped field", `${path} removed`, withField(fx.result, path, REMOVE), "child_result_invalid");
    }
    if (isObject(value)) {
      add("unknown key", `${path}.extra`, withField(fx.result, `${path}.extra`, r.int(9)), "child_result_invalid");
    }
    if (typeof value === "number") {
      add("negative number", `${path} → -1`, withField(fx.result, path, -1), "child_result_invalid");
      // Counts are integers; usage figures are any non-negative number (a provider's cost is fractional).
      if (!path.startsWith("usage.")) {
        add("fractional count", `${path} → +0.5`, withField(fx.result, path, value + 0.5), "child_result_invalid");
      }
    }
    if (typeof value === "string" && HEX_PATHS.test(path)) {
      add(
        "uppercase hex",
        `${path} uppercase`,
        withField(fx.result, path, value.toUpperCase()),
        "child_result_invalid",
      );
      add("short hex", `${path} 63 digits`, withField(fx.result, path, value.slice(1)), "child_result_invalid");
    }
    const code = boundCode(path);
    if (code === null) continue;
    let changed: Json;
    if (typeof value === "number") changed = value + r.pick([1, -1, 2, 1000]);
    else if (HEX_PATHS.test(path)) changed = sha256Hex(`other ${r.int(1e9)}`);
    else changed = r.pick([`${value}x`, String(value).slice(1), `${String(value).toUpperCase()}-2`, "utf8"]);
    if (changed === value) changed = `${value}-changed`;
    add("bound value", `${path} → ${JSON.stringify(changed).slice(0, 20)}`, withField(fx.result, path, changed), code);
  }
  add(
    "attestations",
    "route_attestations emptied",
    withField(fx.result, "route_attestations", []),
    "route_attestation_missing",
  );
  add(
    "schema_version",
    "schema_version bumped",
    withField(fx.result, "schema_version", "pi-bg-delegate.result.v2"),
    "child_result_invalid",
  );
  return out;
}

function blockMutations(label: string, fx: ResultFixture, r: ReturnType<typeof rng>): Mutation[] {
  const out: Mutation[] = [];
  const push = (cls: string, name: string, bytes: Uint8Array, code: FailureCode) =>
    out.push({ cls, name: `${label} ${name}`, bytes, code, expected: fx.expected });
  const set = (cls: string, name: string, path: string, value: unknown, code: FailureCode) =>
    push(cls, name, withField(fx.result, path, value), code);
  const blocks = fx.result.answer.blocks;
  const n = blocks.length;
  const reordered = (order: (list: typeof blocks) => typeof blocks) => order([...blocks]);
  const ENC = "child_result_encoding_invalid";
  const HASH = "answer_hash_mismatch";
  for (let i = 0; i < n; i++) {
    const data = blocks[i]!.data_base64;
    const dataPath = `answer.blocks.${i}.data_base64`;
    const dup = reordered((l) => [...l.slice(0, i), l[i]!, ...l.slice(i)]);
    set("duplicated block", `block ${i} duplicated`, "answer.blocks", dup, HASH);
    if (n > 1)
      set(
        "dropped block",
        `block ${i} dropped`,
        "answer.blocks",
        reordered((l) => l.filter((_, k) => k !== i)),
        HASH,
      );
    const at = r.int(Math.max(1, data.length - 4));
    for (const ws of [" ", "\n", "\t", "\r\n"]) {
      set(
        "base64 whitespace",
        `block ${i} ${JSON.stringify(ws)} at ${at}`,
        dataPath,
        data.slice(0, at) + ws + data.slice(at),
        ENC,
      );
    }
    for (const bad of ["-", "_", ".", "*", "é"]) {
      const p = r.int(Math.max(1, data.length - 4));
      set("base64 alphabet", `block ${i} ${bad} at ${p}`, dataPath, data.slice(0, p) + bad + data.slice(p + 1), ENC);
    }
    const unpadded = data.replace(/=+$/, "");
    const padding = [`${data}=`, `${data}====`, `${data.slice(0, 4)}====${data.slice(4)}`];
    if (unpadded !== data) padding.push(unpadded, `${unpadded}${data.endsWith("==") ? "=" : "=="}`);
    for (const bad of padding) set("base64 padding", `block ${i} padding ${bad.slice(-6)}`, dataPath, bad, ENC);
    // A different alphabet character away from the last quartet: canonical base64 of other bytes.
    const p = r.int(Math.max(1, data.length - 4));
    const swap = data[p] === "A" ? "B" : "A";
    set(
      "base64 content",
      `block ${i} char ${p} → ${swap}`,
      dataPath,
      data.slice(0, p) + swap + data.slice(p + 1),
      HASH,
    );
  }
  if (n > 1) {
    const j = n - 1;
    set(
      "swapped blocks",
      `blocks 0↔${j}`,
      "answer.blocks",
      reordered((l) => [l[j]!, ...l.slice(1, j), l[0]!]),
      HASH,
    );
    const swapped = (key: "sha256" | "data_base64") =>
      blocks.map((b, k) => ({ ...b, [key]: k === 0 ? blocks[j]![key] : k === j ? blocks[0]![key] : b[key] }));
    set("swapped hashes", `block sha 0↔${j}`, "answer.blocks", swapped("sha256"), HASH);
    set("swapped data", `block data 0↔${j}`, "answer.blocks", swapped("data_base64"), HASH);
    set("swapped hashes", "aggregate sha ← block 0 sha", "answer.sha256", blocks[0]!.sha256, HASH);
  }
  set("swapped hashes", "seed sha ← answer sha", "seed_sha256", fx.result.answer.sha256, "seed_hash_mismatch");
  for (const encoding of ["utf8", "UTF-8", "utf-16", "latin1", "base64", ""]) {
    set("wrong encoding", `encoding ${JSON.stringify(encoding)}`, "answer.encoding", encoding, ENC);
  }
  // Consistent hashes over bytes that are not well-formed UTF-8, or blank.
  const answer = fx.answerBytes;
  for (const [name, bytes] of [
    ["cut multi-byte character at the end", Buffer.concat([answer, Buffer.from([0xf0, 0x9f])])],
    ["stray continuation byte", Buffer.concat([Buffer.from([0x80]), answer])],
    ["overlong slash", Buffer.concat([answer, Buffer.from([0xc0, 0xaf])])],
    ["encoded surrogate", Buffer.concat([Buffer.from([0xed, 0xa0, 0x80]), answer])],
    ["0xff byte", Buffer.concat([answer.subarray(0, 3), Buffer.from([0xff]), answer.subarray(3)])],
  ] as const) {
    set("invalid utf-8", name, "answer", packAnswerInBlocksOf(bytes, 1 + r.int(ANSWER_BLOCK_BYTES)), ENC);
  }
  set(
    "blank answer",
    "whitespace only",
    "answer",
    packAnswerInBlocksOf(Buffer.from(" \n\t\u00a0\n"), 3),
    "child_result_invalid",
  );
  return out;
}

/** Positions of a canonical JSON text: structural characters, and the spans of keys and strings. */
function scan(text: string): { structural: number[]; keys: Array<[number, number]> } {
  const structural: number[] = [];
  const keys: Array<[number, number]> = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (text[j + 1] === ":") keys.push([i + 1, j]);
      i = j;
    } else if ("{}[],:".includes(c)) structural.push(i);
  }
  return { structural, keys };
}

function byteMutations(label: string, fx: ResultFixture, r: ReturnType<typeof rng>): Mutation[] {
  const out: Mutation[] = [];
  const text = fx.bytes.toString("utf8");
  const add = (cls: string, name: string, mutated: string | Uint8Array, code: FailureCode) =>
    out.push({
      cls,
      name: `${label} ${name}`,
      bytes: typeof mutated === "string" ? Buffer.from(mutated, "utf8") : mutated,
      code,
      expected: fx.expected,
    });
  const edit = (at: number, remove: number, insert: string) => text.slice(0, at) + insert + text.slice(at + remove);
  const { structural, keys } = scan(text);

  for (let k = 0; k < 12; k++) {
    const cut = k === 0 ? text.length - 1 : k === 1 ? 0 : r.int(fx.bytes.length);
    add("truncation", `truncated to ${cut}`, fx.bytes.subarray(0, cut), "child_result_invalid");
  }
  for (const [name, mutated] of [
    ["extra newline", `${text}\n`],
    ["CRLF", `${text.slice(0, -1)}\r\n`],
    ["trailing space", `${text.slice(0, -1)} \n`],
    ["leading space", ` ${text}`],
    ["BOM", `\ufeff${text}`],
    ["pretty-printed", `${JSON.stringify(fx.result, null, 1)}\n`],
    ["reordered keys", `${JSON.stringify(Object.fromEntries(Object.entries(fx.result).reverse()))}\n`],
  ] as const) {
    add("layout", name, mutated, "child_result_invalid");
  }
  for (let k = 0; k < 10; k++) {
    const at = r.pick(structural);
    const ws = r.pick([" ", "\n", "\t", "\r"]);
    add("whitespace", `${JSON.stringify(ws)} after ${at}`, edit(at + 1, 0, ws), "child_result_invalid");
    add(
      "structural byte",
      `byte ${at} (${text[at]}) replaced`,
      edit(at, 1, r.pick(["x", "0", '"', ";"])),
      "child_result_invalid",
    );
  }
  for (let k = 0; k < 10; k++) {
    const [start, end] = r.pick(keys);
    const at = start + r.int(end - start);
    const swap = text[at] === "q" ? "z" : "q";
    add("key byte", `key ${text.slice(start, end)} byte ${at - start}`, edit(at, 1, swap), "child_result_invalid");
  }
  for (let k = 0; k < 6; k++) {
    const at = r.int(fx.bytes.length);
    const bad = Buffer.from([r.pick([0xff, 0xc3, 0x80, 0xfe])]);
    add(
      "invalid file utf-8",
      `byte ${at}`,
      Buffer.concat([fx.bytes.subarray(0, at), bad, fx.bytes.subarray(at + 1)]),
      "child_result_invalid",
    );
  }
  // Non-canonical escapes of characters inside string values (base64 data and hex included).
  for (let k = 0; k < 8; k++) {
    const [start, end] = r.pick(keys);
    const valueStart = end + 3; // after `":"`
    if (text[valueStart - 1] !== '"') continue; // the value is not a string
    const ch = text[valueStart]!;
    if (ch === '"' || ch === "\\") continue;
    const escaped = `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`;
    add("escape", `${text.slice(start, end)} first char escaped`, edit(valueStart, 1, escaped), "child_result_invalid");
  }
  // Hex digits: a different lowercase digit keeps the shape and breaks the binding; others break the shape.
  const hexFields: Array<[string, FailureCode]> = [
    [fx.result.seed_sha256, "seed_hash_mismatch"],
    [fx.result.answer.sha256, "answer_hash_mismatch"],
    ...fx.result.answer.blocks.map((b): [string, FailureCode] => [b.sha256, "answer_hash_mismatch"]),
  ];
  for (const [hex, code] of hexFields) {
    const at = text.indexOf(`"${hex}"`) + 1 + r.int(64);
    const digit = text[at]!;
    const other = "0123456789abcdef"[("0123456789abcdef".indexOf(digit) + 1 + r.int(15)) % 16]!;
    add("hex digit", `${hex.slice(0, 8)} digit → ${other}`, edit(at, 1, other), code);
    const letterAt = text.indexOf(`"${hex}"`) + 1 + Math.max(0, hex.search(/[a-f]/));
    if (/[a-f]/.test(text[letterAt]!))
      add(
        "uppercase hex",
        `${hex.slice(0, 8)} one uppercase digit`,
        edit(letterAt, 1, text[letterAt]!.toUpperCase()),
        "child_result_invalid",
      );
    add("non-hex digit", `${hex.slice(0, 8)} → g`, edit(at, 1, "g"), "child_result_invalid");
  }
  return out;
}

function allMutations(): Mutation[] {
  const r = rng(0x5eed);
  return Object.entries(ORIGINALS).flatMap(([label, fx]) => [
    ...fieldMutations(label, fx, r),
    ...blockMutations(label, fx, r),
    ...byteMutations(label, fx, r),
  ]);
}

describe("tamper suite", () => {
  it("accepts the unmutated originals and same-answer re-blockings (split characters included)", () => {
    for (const fx of Object.values(ORIGINALS)) {
      expect(outcome(fx.bytes, fx.expected)).toBe("accepted");
      expect(verifyDelegateResult(fx.bytes, fx.expected).answerBytes.equals(fx.answerBytes)).toBe(true);
    }
    expect(verifyDelegateResult(MULTI.bytes, MULTI.expected).text).toBe(MULTI_TEXT);
    expect(MULTI.result.answer.blocks).toHaveLength(3);
    const r = rng(7);
    for (let k = 0; k < 20; k++) {
      // Tiny blocks on the short answer, large ones on the long one: both split characters.
      const [fx, size] = k < 10 ? [SPLIT, 1 + r.int(7)] : [MULTI, 1000 + r.int(ANSWER_BLOCK_BYTES)];
      const bytes = recommit(fx.result, (d) => {
        d.answer = packAnswerInBlocksOf(fx.answerBytes, size);
      });
      expect(outcome(bytes, fx.expected), `block size ${size}`).toBe("accepted");
    }
  });

  const mutations = allMutations();

  it("draws at least 300 distinct mutations, each different from its original", () => {
    expect(mutations.length).toBeGreaterThanOrEqual(300);
    for (const m of mutations) {
      const original = Object.values(ORIGINALS).find((fx) => fx.expected === m.expected)!;
      expect(Buffer.from(m.bytes).equals(original.bytes), m.name).toBe(false);
    }
  });

  const classes = [...new Set(mutations.map((m) => m.cls))];
  it.each(classes)("refuses every %s mutation with its code", (cls) => {
    const ofClass = mutations.filter((m) => m.cls === cls);
    expect(ofClass.length).toBeGreaterThan(0);
    const got = ofClass.map((m) => ({ name: m.name, code: outcome(m.bytes, m.expected) }));
    expect(got).toEqual(ofClass.map((m) => ({ name: m.name, code: m.code })));
  });
});
