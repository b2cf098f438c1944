import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  createReadArtifactTool,
  parseReadArtifactArgs,
  readExactRange,
  resolveArtifact,
} from "../../src/child/read-artifact.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import { makeTempDir } from "../helpers/temp.ts";

let taskDir: string;
let outsideFile: string;
const BYTES = Buffer.from("héllo wörld\n", "utf8"); // 14 bytes, multibyte characters inside

beforeAll(async () => {
  taskDir = await makeTempDir("read-artifact");
  const outside = await makeTempDir("read-artifact-outside");
  outsideFile = join(outside, "secret");
  await writeFile(outsideFile, "secret");
  await mkdir(join(taskDir, "spill"));
  await writeFile(join(taskDir, "spill", "a.txt"), BYTES);
  await symlink(outsideFile, join(taskDir, "spill", "out"));
  await symlink(join(taskDir, "spill", "a.txt"), join(taskDir, "spill", "in"));
});

describe("arguments", () => {
  it("accepts exact types only: no coercion, no unknown keys", () => {
    expect(parseReadArtifactArgs({ artifact: "a", offset: 0, length: 1 })).toEqual({
      artifact: "a",
      offset: 0,
      length: 1,
    });
    expect(() => parseReadArtifactArgs({ artifact: "a", offset: "0", length: 1 })).toThrow(
      /offset: must be a number, got string/,
    );
    expect(() => parseReadArtifactArgs({ artifact: "a", offset: -1, length: 1 })).toThrow(/offset/);
    expect(() => parseReadArtifactArgs({ artifact: "a", offset: 0.5, length: 1 })).toThrow(/offset/);
    expect(() => parseReadArtifactArgs({ artifact: "a", offset: 0, length: 0 })).toThrow(
      /length: must be a positive integer, got 0/,
    );
    expect(() => parseReadArtifactArgs({ artifact: "a", offset: 0, length: 2 ** 60 })).toThrow(/length/);
    expect(() => parseReadArtifactArgs({ artifact: "", offset: 0, length: 1 })).toThrow(/artifact/);
    expect(() => parseReadArtifactArgs({ artifact: "a", offset: 0, length: 1, extra: 1 })).toThrow(
      /extra: is not a known argument/,
    );
    expect(() => parseReadArtifactArgs(null)).toThrow(/object/);
  });

  it("offers the child's model the same schema, byte for byte: integers with their least value", () => {
    const { parameters } = createReadArtifactTool({ taskDir, bound: () => 1 });
    expect(JSON.stringify(parameters)).toBe(
      '{"additionalProperties":false,"type":"object","required":["artifact","offset","length"],"properties":{' +
        '"artifact":{"description":"Path relative to the task artifact directory, e.g. \\"spill/t0002-c0000-call_1.txt\\" from a spill receipt.","type":"string"},' +
        '"offset":{"minimum":0,"description":"First byte to read (0-based).","type":"integer"},' +
        '"length":{"minimum":1,"description":"Number of bytes to read; the whole range must exist.","type":"integer"}}}',
    );
  });
});

describe("paths", () => {
  it("resolves files inside the task dir, including symlinks that stay inside", () => {
    expect(resolveArtifact(taskDir, "spill/a.txt").name).toBe("spill/a.txt");
    expect(resolveArtifact(taskDir, "spill/in").name).toBe("spill/a.txt");
    expect(resolveArtifact(taskDir, "./spill//a.txt").name).toBe("spill/a.txt");
  });

  it("refuses .., absolute paths, symlinks resolving outside, directories and missing files", () => {
    expect(() => resolveArtifact(taskDir, "../x")).toThrow(/"\.\." segments/);
    expect(() => resolveArtifact(taskDir, "spill/../../x")).toThrow(/"\.\." segments/);
    expect(() => resolveArtifact(taskDir, outsideFile)).toThrow(/not absolute/);
    expect(() => resolveArtifact(taskDir, "spill/out")).toThrow(/resolves outside the task directory/);
    expect(() => resolveArtifact(taskDir, "spill")).toThrow(/not a regular file/);
    expect(() => resolveArtifact(taskDir, "spill/none")).toThrow(/does not exist/);
    expect(() => resolveArtifact(taskDir, "a\0b")).toThrow(/NUL/);
  });
});

describe("exact ranges", () => {
  it("returns exactly the requested bytes, even mid-character", () => {
    const path = join(taskDir, "spill", "a.txt");
    expect(readExactRange(path, 0, BYTES.length).equals(BYTES)).toBe(true);
    expect(readExactRange(path, 1, 2).equals(BYTES.subarray(1, 3))).toBe(true); // half of "é"
  });

  it("refuses a range past EOF instead of reading short", () => {
    const path = join(taskDir, "spill", "a.txt");
    expect(() => readExactRange(path, 10, 5)).toThrow(/ends past the end of the file \(14 bytes\)/);
    expect(() => readExactRange(path, 14, 1)).toThrow(/past the end/);
  });
});

describe("the tool", () => {
  it("answers base64 with offset, length and sha256, and reports the details for evidence", async () => {
    const tool = createReadArtifactTool({ taskDir, bound: () => 61_440 });
    const result = await tool.execute(
      "id",
      { artifact: "spill/a.txt", offset: 2, length: 5 },
      undefined,
      undefined,
      {} as never,
    );
    const slice = BYTES.subarray(2, 7);
    expect(result.details).toEqual({ artifact: "spill/a.txt", offset: 2, length: 5, sha256: sha256Hex(slice) });
    const text = (result.content[0] as { text: string }).text;
    const [header, body] = text.split("\n");
    expect(header).toBe(`artifact bytes offset=2 length=5 sha256=${sha256Hex(slice)} encoding=base64`);
    expect(Buffer.from(body ?? "", "base64").equals(slice)).toBe(true);
    expect(Buffer.byteLength(header ?? "")).toBeLessThan(256);
  });

  it("refuses a request over the bound, states it, and counts the refusal", async () => {
    let refusals = 0;
    const tool = createReadArtifactTool({ taskDir, bound: () => 300, onRefusal: () => refusals++ });
    await expect(
      tool.execute("id", { artifact: "spill/a.txt", offset: 0, length: 40 }, undefined, undefined, {} as never),
    ).rejects.toThrow(/40 bytes need a 312-byte response .*current bound of 300 bytes.*Request at most 33 bytes/);
    await expect(
      tool.execute("id", { artifact: "../x", offset: 0, length: 1 }, undefined, undefined, {} as never),
    ).rejects.toThrow(/refused/);
    expect(() => tool.prepareArguments?.({ artifact: "x", offset: "1", length: 1 })).toThrow(/refused/);
    expect(refusals).toBe(3);
  });
});
