import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { DelegateError } from "../core/errors.ts";
import { pricesOf, type SpendPrices } from "../core/spend.ts";
import type { PinnedRoute } from "../core/types.ts";
import { checkRouteCapacity } from "./budget.ts";
import { providerKeyVariables } from "./env-policy.ts";

export interface ResolvedRoute extends PinnedRoute {
  contextWindow: number;
  thinkingLevel: string;
  origin: "parent_current" | "explicit" | "previous_task";
  /** The model's prices in Pi's registry (US dollars per million tokens; 0 where missing). */
  prices: SpendPrices;
  /** The provider API Pi speaks to it (the model's `api`), for the spend cap's output limit. */
  api: string;
}

/**
 * Pin the route: the parent's current model, or an exact registry entry. Never a substitute, a
 * fallback or a fuzzy match; a route without a usable declared window, or whose provider has no
 * credentials in Pi, is refused here.
 */
export function resolveRoute(
  requested: PinnedRoute | undefined,
  ctx: ExtensionContext,
  thinkingLevel: string,
): ResolvedRoute {
  const model = requested ? ctx.modelRegistry.find(requested.provider, requested.model) : ctx.model;
  if (!model) {
    const what = requested
      ? `${requested.provider}/${requested.model} is not in the model registry (exact match required)`
      : "this session has no current model";
    throw new DelegateError("route_unresolved", what, { childProcessCreated: false });
  }
  if (requested && (model.provider !== requested.provider || model.id !== requested.model)) {
    throw new DelegateError("route_unresolved", `registry returned ${model.provider}/${model.id} for the pin`, {
      childProcessCreated: false,
    });
  }
  const capacity = checkRouteCapacity(model.contextWindow);
  // Pi's own answer (both hosts): a login or key in auth.json, a models.json key, or a key variable.
  if (!ctx.modelRegistry.hasConfiguredAuth(model)) {
    throw new DelegateError(
      "route_credentials_missing",
      `${model.provider}/${model.id} has no credentials: no /login or key for ${model.provider} in auth.json, ` +
        `no models.json key, and ${providerKeyVariables(model.provider).join(" / ")} not set`,
      { childProcessCreated: false },
    );
  }
  return {
    provider: model.provider,
    model: model.id,
    contextWindow: capacity.context_window_tokens,
    thinkingLevel,
    origin: requested ? "explicit" : "parent_current",
    prices: pricesOf(model.cost),
    api: String(model.api),
  };
}
