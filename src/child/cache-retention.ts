/**
 * Whether a request asks the provider for one-hour cache writes (docs/subsystems/child-guard.md,
 * "The spend cap"): Anthropic bills them at twice the input price, and Pi 0.73.1 reports them inside
 * cacheWrite with no split, so the guard prices every write of a run that asks for them as one.
 * Pi puts the lifetime on each cache breakpoint (`cache_control: {type: "ephemeral", ttl: "1h"}`,
 * with PI_CACHE_RETENTION=long), so the payload itself says it; so does the environment before the
 * first request.
 */
import { isRecord } from "../core/validate.ts";

/** Nesting a payload walk goes into at most (a message's content blocks sit a few levels down). */
const MAX_DEPTH = 8;

/** A `cache_control` object with a one-hour ttl anywhere in the payload. */
export function asksLongCacheWrites(payload: unknown, depth = 0): boolean {
  if (depth > MAX_DEPTH) return false;
  if (Array.isArray(payload)) return payload.some((item) => asksLongCacheWrites(item, depth + 1));
  if (!isRecord(payload)) return false;
  const control = payload.cache_control;
  if (isRecord(control) && control.ttl === "1h") return true;
  return Object.values(payload).some((value) => typeof value === "object" && asksLongCacheWrites(value, depth + 1));
}
