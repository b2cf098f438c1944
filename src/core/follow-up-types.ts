/**
 * The shapes a follow-up rests on (docs/tools/bg_delegate.md, "Follow-ups"): the receipt of a spill
 * file (what a later task of the chain may read), and the links that tie a follow-up to the task it
 * continues, as seed.json, manifest.json and result.json record them. Re-exported by types.ts.
 */
import type { SeedFollowUp } from "./schema/seed.ts";

/** A follow-up's link is declared once in schema/result.ts (result.json's `previous`), the receipt in schema/spill-receipt.ts. */
export type { ChainLink } from "./schema/result.ts";
/** seed.json's follow_up block and its chain artifacts are declared once in schema/seed.ts. */
export type { ChainArtifact, SeedFollowUp } from "./schema/seed.ts";
export type { SpilledReadRange, SpillReceipt } from "./schema/spill-receipt.ts";

/**
 * A follow-up's link with how the previous task ended and its place in the chain, as launch writes it
 * (seed.json's follow_up block, reseed always written).
 */
export type FollowUpLink = SeedFollowUp & { reseed: boolean };

/** manifest.json's follow_up block (the link, where the previous tree is, what was carried) is declared in schema/manifest.ts. */
export type { ManifestFollowUp } from "./schema/manifest.ts";
