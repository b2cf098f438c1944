/**
 * delegate_read_artifact: exact bytes of a file in the task's artifact directory, as base64 with
 * their offset and length. A range is read whole or refused: no short reads, no clamping. The
 * response size is admitted against the runway (docs/subsystems/child-guard.md, "During the run")
 * before anything is read.
 */
import { closeSync, fstatSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import { offeredSchema } from "../arguments/tool-arguments.ts";
import { READ_ARTIFACT_TOOL } from "../core/constants.ts";
import { strictArguments } from "../core/failure-text.ts";
import { readRegularFile } from "../core/fs.ts";
import { sha256Hex } from "../core/hash.ts";
import { checkDocument } from "../core/schema/check.ts";
import { Closed, Count, Described, type Static, Text } from "../core/schema/kinds.ts";
import type { ChainArtifact, SpilledReadRange } from "../core/types.ts";
import { SchemaViolation } from "../core/validate.ts";
import { maxReadLength, readArtifactCost } from "./runway.ts";

/**
 * delegate_read_artifact's arguments, declared once as the package's tools' are
 * (src/arguments/tool-arguments.ts): the strict check and the schema the child's model is offered
 * both come from it.
 */
export const ReadArtifactArgumentsSchema = Closed(
  {
    artifact: Text({
      description:
        'Path relative to the task artifact directory, e.g. "spill/t0002-c0000-call_1.txt" from a spill receipt.',
    }),
    offset: Described(Count(0), "First byte to read (0-based)."),
    length: Described(Count(1), "Number of bytes to read; the whole range must exist."),
  },
  "argument",
);

/** What the child's model is offered: the declaration's types, its integers kept integers with their least value. */
export const READ_ARTIFACT_PARAMETERS = offeredSchema(ReadArtifactArgumentsSchema, "integer");

export type ReadArtifactArgs = Static<typeof ReadArtifactArgumentsSchema>;

/** What a successful read reports to the guard (kept out of the model's view). */
export interface ReadArtifactDetails {
  artifact: string;
  offset: number;
  length: number;
  sha256: string;
  /** Set when the bytes are of an earlier task's spill file (a follow-up's verified chain): its id. */
  from_task?: string;
  /** That spill's file range, as the earlier task's committed record names it (a spilled read). */
  read?: SpilledReadRange;
}

/** Strict argument check: exact JSON types, no coercion ("5" is not 5), no unknown keys. */
export function parseReadArtifactArgs(raw: unknown): ReadArtifactArgs {
  try {
    return checkDocument(ReadArtifactArgumentsSchema, raw);
  } catch (error) {
    if (error instanceof SchemaViolation) throw new Error(error.describe("arguments"));
    throw error;
  }
}

/**
 * The real path of `artifact` inside `taskDir`, or an error: absolute paths, `..` segments, and
 * symlinks whose target lies outside the directory are refused, as is anything but a regular file.
 */
export function resolveArtifact(
  taskDir: string,
  artifact: string,
  closed?: (real: string) => string | undefined,
): { path: string; name: string } {
  if (artifact.includes("\0")) throw new Error("artifact path holds a NUL byte");
  if (isAbsolute(artifact) || artifact.startsWith("/") || artifact.startsWith("\\")) {
    throw new Error("artifact must be relative to the task directory, not absolute");
  }
  if (artifact.split(/[\\/]+/).includes("..")) throw new Error('artifact must not contain ".." segments');
  const root = realpathSync(taskDir);
  let real: string;
  try {
    real = realpathSync(join(root, artifact));
  } catch {
    throw new Error(`artifact ${artifact} does not exist`);
  }
  if (!real.startsWith(root + sep)) throw new Error(`artifact ${artifact} resolves outside the task directory`);
  const why = closed?.(real);
  if (why !== undefined) throw new Error(`artifact ${artifact} is not readable: ${why}`);
  if (!statSync(real).isFile()) throw new Error(`artifact ${artifact} is not a regular file`);
  return { path: real, name: relative(root, real).split(sep).join("/") };
}

/** A spill artifact name as the guard writes it (src/child/spill.ts): one file in spill/. */
const SPILL_NAME = /^spill\/[^/\\]+$/;

/**
 * An earlier task's spill file of this follow-up's verified chain (docs/tools/bg_delegate.md,
 * "Follow-ups"): only a name its committed record lists, only in spill/ of that tree, a regular file
 * reached without a link, holding exactly the bytes the record hashed. Nearest task first; null when
 * no earlier task recorded the name.
 */
export function readChainArtifact(
  entries: readonly ChainArtifact[],
  artifact: string,
): { entry: ChainArtifact; bytes: Buffer } | null {
  if (!SPILL_NAME.test(artifact)) return null;
  const named = entries.filter((e) => e.receipt.artifact === artifact);
  for (const entry of named) {
    const read = readRegularFile(join(entry.dir, artifact), entry.receipt.byte_length);
    if (!read.ok) continue;
    if (read.bytes.length === entry.receipt.byte_length && sha256Hex(read.bytes) === entry.receipt.sha256)
      return { entry, bytes: read.bytes };
  }
  if (named.length > 0)
    throw new Error(`artifact ${artifact} of task ${named[0]!.task_id} no longer holds the bytes its task recorded`);
  return null;
}

/** Exactly `length` bytes at `offset` of bytes already read, or throw (as {@link readExactRange}). */
function exactRangeOf(bytes: Buffer, offset: number, length: number): Buffer {
  if (offset + length > bytes.length) {
    throw new Error(
      `range ${offset}+${length} ends past the end of the file (${bytes.length} bytes); nothing was read`,
    );
  }
  return bytes.subarray(offset, offset + length);
}

/** Read exactly `length` bytes at `offset`, or throw (past EOF is an error, never a short read). */
export function readExactRange(path: string, offset: number, length: number): Buffer {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    if (offset + length > size) {
      throw new Error(`range ${offset}+${length} ends past the end of the file (${size} bytes); nothing was read`);
    }
    const buffer = Buffer.alloc(length);
    let done = 0;
    while (done < length) {
      const n = readSync(fd, buffer, done, length - done, offset + done);
      if (n === 0) throw new Error(`the file shrank while reading (got ${done} of ${length} bytes)`);
      done += n;
    }
    return buffer;
  } finally {
    closeSync(fd);
  }
}

export interface ReadArtifactOptions {
  taskDir: string;
  /** The current admission bound in bytes: min(max response, G − R − trigger). */
  bound(): number;
  /** Called once per refusal for the runtime budget record. */
  onRefusal?(reason: string): void;
  /** Why a real path is closed to the delegate (src/core/read-reach.ts), or undefined. */
  closed?(real: string): string | undefined;
  /** A follow-up's readable spill files of its verified chain (seed.json `chain_artifacts`). */
  chainArtifacts?(): readonly ChainArtifact[];
}

export function createReadArtifactTool(
  options: ReadArtifactOptions,
): ToolDefinition<typeof READ_ARTIFACT_PARAMETERS, ReadArtifactDetails> {
  const refuse = (message: string): never => {
    options.onRefusal?.(message);
    throw new Error(message);
  };
  return {
    name: READ_ARTIFACT_TOOL,
    label: "Read artifact",
    description:
      "Read an exact byte range of a file in this delegate task's artifact directory (for example a spilled tool result named in a receipt). Returns the bytes as base64. The range must lie inside the file, and the response must fit the remaining runway; a refusal states the largest length allowed.",
    promptSnippet: "delegate_read_artifact: exact byte ranges (base64) of spilled tool results and task artifacts",
    parameters: READ_ARTIFACT_PARAMETERS,
    prepareArguments: strictArguments(parseReadArtifactArgs, (error) => {
      const message = `delegate_read_artifact refused: ${(error as Error).message}`;
      options.onRefusal?.(message);
      return new Error(message);
    }),
    async execute(_toolCallId, params) {
      const { artifact, offset, length } = parseReadArtifactArgs(params);
      const bound = options.bound();
      const cost = readArtifactCost(length);
      if (cost > bound) {
        refuse(
          `delegate_read_artifact refused: ${length} bytes need a ${cost}-byte response (base64 plus header), over the current bound of ${bound} bytes (min of the per-response limit and the runway left before finalization). Request at most ${maxReadLength(bound)} bytes.`,
        );
      }
      let name: string;
      let bytes: Buffer;
      let earlier: ChainArtifact | undefined;
      try {
        try {
          const resolved = resolveArtifact(options.taskDir, artifact, options.closed);
          name = resolved.name;
          bytes = readExactRange(resolved.path, offset, length);
        } catch (error) {
          // Not in this task's tree: an earlier task's spill of the verified chain, or the refusal.
          const chain = readChainArtifact(options.chainArtifacts?.() ?? [], artifact);
          if (chain === null) throw error;
          name = artifact;
          earlier = chain.entry;
          bytes = exactRangeOf(chain.bytes, offset, length);
        }
      } catch (error) {
        return refuse(`delegate_read_artifact refused: ${(error as Error).message}`);
      }
      const sha256 = sha256Hex(bytes);
      const header = `artifact bytes offset=${offset} length=${length} sha256=${sha256} encoding=base64`;
      const from =
        earlier === undefined
          ? {}
          : {
              from_task: earlier.task_id,
              ...(earlier.receipt.read === undefined ? {} : { read: earlier.receipt.read }),
            };
      return {
        content: [{ type: "text", text: `${header}\n${bytes.toString("base64")}` }],
        details: { artifact: name, offset, length, sha256, ...from },
      };
    },
  };
}
