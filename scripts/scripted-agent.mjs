/**
 * The scripted model's agent dir, written once for the offline demo (scripts/demo.mjs), the bench
 * (scripts/bench/workspace.mjs) and the tests (test/helpers/agent-dir.ts): a models.json that points
 * one provider at the scripted server on 127.0.0.1 (openai-completions; the tests add one per other
 * wire protocol the server speaks), and a settings.json with
 * retries off (a scripted provider failure reaches pi once, with no backoff) and a quiet start.
 * Also the turn count every scripted conversation is keyed on, so the models stay stateless.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const FREE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

/** A models.json entry; contextWindow is left out when the spec has none (pi then fills 128,000). */
export function scriptedModel(spec) {
  const entry = {
    id: spec.id,
    name: spec.name ?? `Scripted ${spec.id}`,
    reasoning: spec.reasoning ?? false,
    input: spec.input ?? ["text"],
    maxTokens: spec.maxTokens ?? 8192,
    cost: spec.cost ?? FREE,
  };
  if (spec.contextWindow !== undefined) entry.contextWindow = spec.contextWindow;
  return entry;
}

/**
 * settings.json: pi's auto-retry off, or on with a 1 ms base delay (`retry` true: 3 retries, or a
 * number of retries); the OpenAI SDK's own HTTP retries always off. No startup banner.
 */
export function scriptedSettings(retry = false) {
  const provider = { maxRetries: 0 };
  if (retry === false) return { retry: { enabled: false, provider }, quietStartup: true };
  const maxRetries = typeof retry === "number" ? retry : 3;
  return { retry: { enabled: true, maxRetries, baseDelayMs: 1, provider }, quietStartup: true };
}

/**
 * Write models.json and settings.json into `dir` (created); returns what each holds. `extraProviders`
 * adds providers of other APIs beside `provider` (the tests' one per wire protocol).
 */
export function writeScriptedAgentDir(
  dir,
  { provider, baseUrl, apiKey, models, settings = scriptedSettings(), extraProviders = [] },
) {
  mkdirSync(dir, { recursive: true });
  const providers = { [provider]: { baseUrl, api: "openai-completions", apiKey, models: models.map(scriptedModel) } };
  for (const extra of extraProviders) {
    providers[extra.provider] = {
      baseUrl: extra.baseUrl,
      api: extra.api,
      apiKey,
      models: extra.models.map(scriptedModel),
    };
  }
  const modelsJson = { providers };
  writeFileSync(join(dir, "models.json"), `${JSON.stringify(modelsJson, null, 2)}\n`);
  writeFileSync(join(dir, "settings.json"), `${JSON.stringify(settings, null, 2)}\n`);
  return { models: modelsJson, settings };
}

/** How many assistant messages follow message `index` (-1: the whole conversation): a scripted reply's step. */
export function assistantsAfter(messages, index) {
  return messages.slice(index + 1).filter((m) => m.role === "assistant").length;
}
