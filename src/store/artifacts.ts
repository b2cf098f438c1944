import { mkdirSync, rmdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { CURRENT_SESSION_VERSION } from "@mariozechner/pi-coding-agent";
import { canonicalJsonLine } from "../core/canonical.ts";
import { SCHEMA, TASK_FILES } from "../core/constants.ts";
import { DIR_MODE, fsyncDir, markPrivateRoot, writeNewFile } from "../core/fs.ts";
import { sha256Hex } from "../core/hash.ts";
import type { BoundArtifact, DelegateManifest, SeedDocument } from "../core/types.ts";
import { writeFailure } from "../core/write-failure.ts";
import { writeManifest } from "./lookup.ts";
import { removeTaskTree } from "./remove.ts";
import { requireStoreTrusted } from "./store-trust.ts";
import { treeProject } from "./tree-trust.ts";

export interface TaskTreeInput {
  taskDir: string;
  seed: SeedDocument;
  /** seed.json's bytes when the caller already has them (canonical JSON + "\n" of `seed`). */
  seedLine?: string;
  childPrompt: string;
  ledger: unknown;
  budgetPlan: unknown;
  /** The manifest without the fields this function fills in (hashes, artifacts, seed size). */
  manifest: Omit<DelegateManifest, "schema_version" | "artifacts" | "seed_sha256" | "seed_bytes">;
  /** A follow-up's carried session: the previous session's entries, written after the new header. */
  carriedSession?: Buffer | undefined;
}

export interface TaskTree {
  taskDir: string;
  seedSha256: string;
  seedBytes: number;
  sessionFile: string;
  manifest: DelegateManifest;
  /** prompt.txt's bytes: the child's stdin, encoded once. */
  promptBytes: Buffer;
}

function bind(taskDir: string, name: string, bytes: Buffer): BoundArtifact {
  writeNewFile(join(taskDir, name), bytes);
  return { path: name, byte_length: bytes.length, sha256: sha256Hex(bytes) };
}

/** rmdir from `dir` up to and including `top` while empty (never a directory that holds anything). */
function removeEmptyUpTo(dir: string, top: string): void {
  for (let d = dir; d.startsWith(top); d = dirname(d)) {
    try {
      rmdirSync(d);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") return; // not empty: another task's
    }
    if (d === top) return;
  }
}

/**
 * Create the task's artifact tree (dirs 0700, files 0600). The task dir must not exist yet. Any
 * failure removes what was created and is reported as artifact_error (disk_full on a full disk).
 */
export function writeTaskTree(input: TaskTreeInput): TaskTree {
  const { taskDir, seed } = input;
  let created = false;
  // mkdirSync(recursive) returns the first directory it had to create: on failure, everything
  // from there down was ours and is removed, so a failed launch leaves no empty .pi/delegate behind.
  let firstCreated: string | undefined;
  // Again at the commit, for the launches a Fusion run makes later (docs/subsystems/launch.md, "The store is yours").
  requireStoreTrusted(treeProject("delegate", taskDir), ["delegate"], dirname(taskDir));
  try {
    firstCreated = mkdirSync(join(taskDir, ".."), { recursive: true, mode: DIR_MODE });
    mkdirSync(taskDir, { mode: DIR_MODE });
    created = true;
    mkdirSync(join(taskDir, TASK_FILES.sessionDir), { mode: DIR_MODE });
    mkdirSync(join(taskDir, TASK_FILES.spillDir), { mode: DIR_MODE });

    const seedBytes = Buffer.from(input.seedLine ?? canonicalJsonLine(seed), "utf8");
    const promptBytes = Buffer.from(input.childPrompt, "utf8");
    const artifacts: Record<string, BoundArtifact> = {
      seed: bind(taskDir, TASK_FILES.seed, seedBytes),
      prompt: bind(taskDir, TASK_FILES.prompt, promptBytes),
      ledger: bind(taskDir, TASK_FILES.ledger, Buffer.from(canonicalJsonLine(input.ledger), "utf8")),
      budgetPlan: bind(taskDir, TASK_FILES.budgetPlan, Buffer.from(canonicalJsonLine(input.budgetPlan), "utf8")),
    };
    // A pre-written header makes the child's session id ours: pi 0.73.1 has no --session-id.
    const header = {
      type: "session",
      version: CURRENT_SESSION_VERSION,
      id: seed.child_session_id,
      timestamp: seed.created_at,
      cwd: seed.cwd,
    };
    const sessionFile = join(taskDir, TASK_FILES.sessionFile);
    const headerLine = Buffer.from(`${JSON.stringify(header)}\n`, "utf8");
    // A follow-up resumes the previous child's session: its entries follow the new header unchanged.
    const carried = input.carriedSession;
    writeNewFile(sessionFile, carried === undefined ? headerLine : Buffer.concat([headerLine, carried]));
    // The files above were created in the new tree without rename; their names become durable here,
    // before the manifest (written atomically) commits the tree.
    fsyncDir(dirname(sessionFile));
    fsyncDir(taskDir);

    const manifest: DelegateManifest = {
      schema_version: SCHEMA.manifest,
      ...input.manifest,
      seed_sha256: artifacts.seed!.sha256,
      seed_bytes: seedBytes.length,
      artifacts,
    };
    writeManifest(taskDir, manifest);
    markPrivateRoot(join(taskDir, "..", ".."));
    return {
      taskDir,
      seedSha256: manifest.seed_sha256,
      seedBytes: seedBytes.length,
      sessionFile,
      manifest,
      promptBytes,
    };
  } catch (error) {
    if (created) removeTaskTree(taskDir);
    if (firstCreated !== undefined) removeEmptyUpTo(join(taskDir, ".."), firstCreated);
    // A full disk is disk_full naming the tree (src/core/write-failure.ts); anything else artifact_error.
    throw writeFailure(error, taskDir, "could not create the task's artifact tree", "artifact_error", {
      childProcessCreated: false,
    });
  }
}
