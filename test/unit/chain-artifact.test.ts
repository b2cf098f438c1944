/**
 * A follow-up's child reading an earlier task's spill file (docs/tools/bg_delegate.md, "Follow-ups"):
 * only a spill/ name the earlier task's committed record lists, only the bytes it hashed, never
 * through a link, nearest task first; anything else is refused or left to this task's own tree.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readChainArtifact } from "../../src/child/read-artifact.ts";
import { SCHEMA } from "../../src/core/constants.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import type { ChainArtifact } from "../../src/core/types.ts";
import { ShownBytesReader } from "../../src/verify/shown-lines.ts";
import { makeTempDirSync } from "../helpers/temp.ts";

const NAME = "spill/t0001-c0000-call_1.txt";

function tree(root: string, id: string, bytes: string, recorded = bytes): ChainArtifact {
  const dir = join(root, id);
  mkdirSync(join(dir, "spill"), { recursive: true });
  writeFileSync(join(dir, NAME), bytes);
  return {
    task_id: id,
    dir,
    receipt: {
      schema_version: SCHEMA.spillReceipt,
      artifact: NAME,
      tool_name: "read",
      tool_call_id: "call_1",
      turn_sequence: 1,
      source_call_index: 0,
      byte_length: Buffer.byteLength(recorded),
      sha256: sha256Hex(recorded),
      content_format: "single_text_utf8",
    },
  };
}

describe("an earlier task's spill file", () => {
  it("is read when its bytes are the ones recorded, nearest task first", () => {
    const root = makeTempDirSync("chain-artifact");
    const near = tree(root, "d1", "near bytes");
    const far = tree(root, "d2", "far bytes");
    expect(readChainArtifact([near, far], NAME)?.bytes.toString()).toBe("near bytes");
    expect(readChainArtifact([near, far], NAME)?.entry.task_id).toBe("d1");
  });

  it("is not offered for a name no earlier task recorded, or outside spill/", () => {
    const root = makeTempDirSync("chain-artifact");
    const near = tree(root, "d1", "bytes");
    expect(readChainArtifact([near], "spill/other.txt")).toBeNull();
    expect(
      readChainArtifact([{ ...near, receipt: { ...near.receipt, artifact: "seed.json" } }], "seed.json"),
    ).toBeNull();
    expect(readChainArtifact([near], "../d1/spill/t0001-c0000-call_1.txt")).toBeNull();
  });

  it("is refused when it changed since it was recorded, or is a link", () => {
    const root = makeTempDirSync("chain-artifact");
    const changed = tree(root, "d1", "changed!", "original");
    expect(() => readChainArtifact([changed], NAME)).toThrow(/no longer holds the bytes its task recorded/);
    const linked = tree(root, "d2", "x");
    const target = join(root, "target.txt");
    writeFileSync(target, "secret");
    const viaLink = { ...linked, receipt: { ...linked.receipt, byte_length: 6, sha256: sha256Hex("secret") } };
    writeFileSync(join(root, "d2", NAME), "");
    const link = join(root, "d3");
    mkdirSync(join(link, "spill"), { recursive: true });
    symlinkSync(target, join(link, NAME));
    expect(() => readChainArtifact([{ ...viaLink, dir: link, task_id: "d3" }], NAME)).toThrow(/no longer holds/);
  });
});

describe("the bytes a follow-up's rows kept in an earlier tree", () => {
  it("are found there for the citation check, own tree first, only where they hash as recorded", () => {
    const root = makeTempDirSync("chain-kept");
    const own = tree(root, "d2", "not the bytes shown");
    const earlier = tree(root, "d1", "line one\nline two\n");
    const shown = { artifact: NAME, offset: 9, length: 8, sha256: sha256Hex("line two") };
    expect(new ShownBytesReader(root, own.dir).kept(shown)).toBeNull();
    expect(new ShownBytesReader(root, [own.dir, earlier.dir]).kept(shown)?.toString()).toBe("line two");
    expect(new ShownBytesReader(root, [own.dir]).kept({ ...shown, artifact: "../d1/spill/x" })).toBeNull();
  });
});
