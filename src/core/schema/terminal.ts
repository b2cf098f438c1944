/**
 * The guard's other records of a run (docs/subsystems/child-guard.md): child-ready.json, its signal
 * that it loaded and the seed checked out, and child-terminal.json, written instead of result.json
 * on any failure. child-terminal.json is closed like result.json and checked against this
 * declaration before anything in it is believed (docs/subsystems/retrieval.md, "Verification order").
 */
import { SCHEMA } from "../constants.ts";
import { EvidenceRowSchema } from "./evidence.ts";
import { AnyString, Closed, Count, OneOf, type Static, Timestamp, Type } from "./kinds.ts";
import { UsageRecordSchema } from "./result-usage.ts";
import { FailureCodeSchema, TASK_LAUNCH } from "./shared.ts";
import { SpillReceiptSchema } from "./spill-receipt.ts";

/** child-terminal.json. */
export const ChildTerminalFileSchema = Closed({
  schema_version: OneOf([SCHEMA.terminal]),
  ...TASK_LAUNCH,
  /** Why the run stopped. */
  code: FailureCodeSchema,
  message: AnyString(),
  turns: Count(),
  tool_calls: Count(),
  usage: UsageRecordSchema,
  spilled_artifacts: Type.Array(SpillReceiptSchema),
  /** When the guard wrote it (typed only). */
  at: AnyString(),
  /**
   * The inspect calls of the stopped run (as result.json's evidence): a continuation counts them
   * (docs/tools/bg_delegate.md, "Follow-ups"); absent in records written before continuations.
   */
  evidence: Type.Optional(Type.Array(EvidenceRowSchema)),
});
export type ChildTerminalFile = Static<typeof ChildTerminalFileSchema>;

/** A binary the child's search tools run, and where it was found (docs/subsystems/launch.md, "Search tools"). */
export const ResolvedBinarySchema = Closed({
  path: AnyString(),
  /** `<agent dir>/bin`, PATH, or the rg that comes with this package. */
  source: OneOf(["agent_bin", "path", "bundled"]),
});
export type ResolvedBinary = Static<typeof ResolvedBinarySchema>;
export type BinarySource = ResolvedBinary["source"];

/** Which binaries serve the child's grep and find (src/core/search-tools.ts). */
export const SearchToolsSchema = Closed({
  /** The rg Pi's grep runs (and the guard's find, when there is no fd). */
  rg: ResolvedBinarySchema,
  /** Pi's own find with this fd, or the guard's find over `rg --files`. */
  find: Type.Union([
    Closed({ served_by: Type.Literal("pi_fd"), fd: ResolvedBinarySchema }),
    Closed({ served_by: Type.Literal("guard_rg_files"), rg: ResolvedBinarySchema }),
  ]),
});
export type SearchTools = Static<typeof SearchToolsSchema>;

/** child-ready.json: written once by the guard, never read back (its presence is the signal). */
export const ChildReadyFileSchema = Closed({
  schema_version: OneOf([SCHEMA.ready]),
  ...TASK_LAUNCH,
  pid: Count(),
  pi_version: AnyString(),
  /** How the guard admitted its host (docs/configuration.md, "Supported Pi versions"); absent before 0.2. */
  host_proof: Type.Optional(OneOf(["proven", "self-proven"])),
  at: Timestamp(),
  /** Which binaries serve the child's grep and find (src/core/search-tools.ts). */
  search_tools: Type.Optional(SearchToolsSchema),
});
export type ChildReadyFile = Static<typeof ChildReadyFileSchema>;
