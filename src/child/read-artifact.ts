/**
 * delegate_read_artifact: exact bytes of a file in the task's artifact directory, as base64 with
 * their offset and length. A range is read whole or refused: no short reads, no clamping. The
 * response size is admitted against the runway (docs/subsystems/child-guard.md, "During the run")
 * before anything is read.
 */
import { closeSync, fstatSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import { Type } from "@sinclair/typebox";
import { READ_ARTIFACT_TOOL } from "../core/constants.ts";
import { strictArguments } from "../core/failure-text.ts";
import { sha256Hex } from "../core/hash.ts";
import { closedObject, count, SchemaViolation, str } from "../core/validate.ts";
import { maxReadLength, readArtifactCost } from "./runway.ts";

export const READ_ARTIFACT_PARAMETERS = Type.Object(
  {
    artifact: Type.String({
      description:
        'Path relative to the task artifact directory, e.g. "spill/t0002-c0000-call_1.txt" from a spill receipt.',
    }),
    offset: Type.Integer({ minimum: 0, description: "First byte to read (0-based)." }),
    length: Type.Integer({ minimum: 1, description: "Number of bytes to read; the whole range must exist." }),
  },
  { additionalProperties: false },
);

export interface ReadArtifactArgs {
  artifact: string;
  offset: number;
  length: number;
}

/** What a successful read reports to the guard (kept out of the model's view). */
export interface ReadArtifactDetails {
  artifact: string;
  offset: number;
  length: number;
  sha256: string;
}

/** Strict argument check: exact JSON types, no coercion ("5" is not 5), no unknown keys. */
export function parseReadArtifactArgs(raw: unknown): ReadArtifactArgs {
  try {
    const a = closedObject(raw, "", ["artifact", "offset", "length"], { noun: "argument" });
    return {
      artifact: str(a.artifact, "artifact"),
      offset: count(a.offset, "offset", 0),
      length: count(a.length, "length", 1),
    };
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
      let resolved: { path: string; name: string };
      let bytes: Buffer;
      try {
        resolved = resolveArtifact(options.taskDir, artifact, options.closed);
        bytes = readExactRange(resolved.path, offset, length);
      } catch (error) {
        return refuse(`delegate_read_artifact refused: ${(error as Error).message}`);
      }
      const sha256 = sha256Hex(bytes);
      const header = `artifact bytes offset=${offset} length=${length} sha256=${sha256} encoding=base64`;
      return {
        content: [{ type: "text", text: `${header}\n${bytes.toString("base64")}` }],
        details: { artifact: resolved.name, offset, length, sha256 },
      };
    },
  };
}
