/**
 * The parts of result.json and child-terminal.json about the model calls (docs/subsystems/child-guard.md):
 * what each response attested of the route it ran on, the usage as reported, and under a spend cap
 * what a provider billed past a request's limits. The route itself is manifest.json's PinnedRoute.
 */
import { Amount, AnyString, Closed, Count, OneOf, type Static, type TProperties, type TSchema, Type } from "./kinds.ts";

/**
 * Where a route attestation's model comes from (docs/subsystems/child-guard.md, "What each provider
 * reports"): "provider" when the provider's own report of the model reached Pi's message,
 * "request" when the host passes none and the attestation restates the model Pi asked for.
 */
export const MODEL_SOURCES = ["provider", "request"] as const;
export type ModelSource = (typeof MODEL_SOURCES)[number];

/** What one response said of the route it ran on (docs/subsystems/retrieval.md, "Verification order", step 4). */
export const RouteAttestationSchema = Closed({
  provider: AnyString(),
  model: AnyString(),
  /** The model the provider reported, when it reported one (not compared). */
  response_model: Type.Optional(AnyString()),
  /** Absent in results written before it was recorded. */
  model_source: Type.Optional(OneOf(MODEL_SOURCES)),
  stop_reason: AnyString(),
});
export type RouteAttestation = Static<typeof RouteAttestationSchema>;

/**
 * The fields of usage counts: each token count of `token`'s declaration (a delegate's as its provider
 * reported them; a Fusion run's summed whole counts, src/core/schema/fusion-parts.ts) and the cost.
 */
export function usageCountFields<T extends TSchema>(token: () => T) {
  return {
    input: token(),
    output: token(),
    cache_read: token(),
    cache_write: token(),
    total_tokens: token(),
    /** Dollars, as the provider reported them. */
    cost_total: Amount(),
  };
}

/** Usage as reported: observed counts, or unavailable with why (never a synthesized zero); told apart by `status`. */
export function usageRecord<C extends TProperties, R extends TSchema>(counts: C, reason: R) {
  return Type.Union([
    Closed({ status: Type.Literal("observed"), ...counts }),
    Closed({ status: Type.Literal("unavailable"), reason }),
  ]);
}

const usageCounts = usageCountFields(Amount);

/** Token and cost counts of one or more model calls. */
export const UsageCountsSchema = Closed(usageCounts);
export type UsageCounts = Static<typeof UsageCountsSchema>;

export const UsageRecordSchema = usageRecord(usageCounts, AnyString());
export type UsageRecord = Static<typeof UsageRecordSchema>;

/**
 * Under a spend cap, a response the provider billed past what its request allowed, or a spend past
 * the cap (src/core/overbilling.ts; docs/subsystems/child-guard.md, "The spend cap").
 */
export const SpendOverbilledSchema = Closed({
  /** Spend past the cap (0 when the spend is still within it). */
  over_cap_usd: Amount(),
  /**
   * What the response cost beyond its request's bound: its reported cost past the request's worst
   * cost, and at least the price of its output tokens past the request's limit.
   */
  past_bound_usd: Amount(),
  /** The request whose response it was. */
  request: Count(),
  /** Why, in words: what the provider billed past the request's limits. */
  reason: AnyString(),
});
export type SpendOverbilled = Static<typeof SpendOverbilledSchema>;
