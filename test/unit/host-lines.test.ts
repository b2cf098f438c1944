/**
 * What differs between lines of Pi is asked of src/host/lines.ts, one question each, answered for
 * every proven version from what was measured on it (docs/subsystems/child-guard.md, "What each
 * provider reports"; docs/subsystems/retrieval.md, "One spend in Pi's books").
 */
import { describe, expect, it } from "vitest";
import {
  cutMayLookComplete,
  keepsReturnedToolErrors,
  reportsProviderModel,
  sessionContextRules,
  unboundedOutputWhy,
} from "../../src/host/index.ts";
import { PROVEN_PI_VERSIONS } from "../../src/host/proven.ts";

const ONE_X = PROVEN_PI_VERSIONS.filter((v) => v.startsWith("1."));

describe("the lines of Pi", () => {
  it("Pi 0.73.1: failures are thrown, Responses cuts can look complete, Codex requests are unbounded", () => {
    expect(keepsReturnedToolErrors("0.73.1")).toBe(false);
    expect(sessionContextRules("0.73.1")).toBe("pi-0.73");
    expect(cutMayLookComplete("0.73.1", "openai-responses")).toBe(true);
    expect(cutMayLookComplete("0.73.1", "openai-completions")).toBe(false);
    expect(reportsProviderModel("0.73.1", "openai-completions")).toBe(true);
    expect(reportsProviderModel("0.73.1", "anthropic-messages")).toBe(false);
    expect(unboundedOutputWhy("0.73.1", "openai-codex-responses")).toMatch(/max_output_tokens/);
    expect(unboundedOutputWhy("0.73.1", "openai-responses")).toBeUndefined();
  });

  it.each(ONE_X)("Pi %s: failures carry usage, cuts say length, Anthropic names its model", (version) => {
    expect(keepsReturnedToolErrors(version)).toBe(true);
    expect(sessionContextRules(version)).toBe("pi-1.x");
    expect(cutMayLookComplete(version, "openai-responses")).toBe(false);
    expect(reportsProviderModel(version, "anthropic-messages")).toBe(true);
    expect(reportsProviderModel(version, "openai-completions")).toBe(true);
    expect(reportsProviderModel(version, "google-generative-ai")).toBe(false);
    expect(unboundedOutputWhy(version, "openai-codex-responses")).toBeUndefined();
  });

  it("a version that is not proven gets no session rules of ours: the host's own function reads it", () => {
    expect(sessionContextRules("1.99.0")).toBeUndefined();
    expect(sessionContextRules("0.72.0")).toBeUndefined();
  });

  it("a line nobody measured (a self-proven 2.x) gets the answers that trust the host least", () => {
    expect(keepsReturnedToolErrors("2.0.0")).toBe(false); // failures are thrown: a failure on every host
    expect(reportsProviderModel("2.0.0", "anthropic-messages")).toBe(false);
    expect(reportsProviderModel("2.0.0", "openai-completions")).toBe(false);
    expect(sessionContextRules("2.0.0")).toBeUndefined();
  });
});
