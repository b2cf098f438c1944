/**
 * What each host's provider reports (src/child/provider-reports.ts), and how bg_result words the
 * route attestations' model source (src/views/result.ts routeModel): pure, no process.
 */
import { describe, expect, it } from "vitest";
import { cutLooksComplete, modelSource, type ReportedMessage } from "../../src/child/provider-reports.ts";
import { verifyDelegateResult } from "../../src/verify/delegate-result.ts";
import { routeModel } from "../../src/views/result.ts";
import { makeResultFile } from "../helpers/result-fixtures.ts";

const ZERO = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
const USED = { input: 100, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 120 };
const message = (patch: Partial<ReportedMessage>): ReportedMessage => ({
  api: "openai-responses",
  stopReason: "stop",
  content: [{ type: "text" }],
  usage: ZERO,
  ...patch,
});

describe("a cut that looks complete", () => {
  it("is a Responses message on Pi 0.x that says stop with content and no usage at all", () => {
    expect(cutLooksComplete("0.73.1", message({}))).toBe(true);
  });

  it("is not one on Pi 1.x (it reads response.incomplete), on another API, with usage, without content or on another stop", () => {
    expect(cutLooksComplete("1.6.0", message({}))).toBe(false);
    expect(cutLooksComplete("0.73.1", message({ api: "anthropic-messages" }))).toBe(false);
    expect(cutLooksComplete("0.73.1", message({ api: "openai-completions" }))).toBe(false);
    expect(cutLooksComplete("0.73.1", message({ usage: USED }))).toBe(false);
    expect(cutLooksComplete("0.73.1", message({ content: [] }))).toBe(false);
    expect(cutLooksComplete("0.73.1", message({ stopReason: "toolUse" }))).toBe(false);
    expect(cutLooksComplete("0.73.1", message({ stopReason: "length" }))).toBe(false);
  });
});

describe("where an attestation's model comes from", () => {
  it("the provider, wherever Pi recorded its responseModel", () => {
    for (const api of ["openai-completions", "openai-responses", "google-generative-ai", "anthropic-messages"]) {
      expect(modelSource("0.73.1", message({ api, responseModel: "dated-label" }))).toBe("provider");
    }
  });

  it("chat completions (every Pi) and Pi 1.x's Anthropic record it only when it differs: its absence on a started message is the asked model", () => {
    expect(modelSource("0.73.1", message({ api: "openai-completions", usage: USED }))).toBe("provider");
    expect(modelSource("1.6.0", message({ api: "openai-completions", usage: USED }))).toBe("provider");
    expect(modelSource("1.6.0", message({ api: "anthropic-messages", usage: USED }))).toBe("provider");
    expect(modelSource("1.6.0", message({ api: "anthropic-messages", content: [], stopReason: "error" }))).toBe(
      "request",
    );
    expect(modelSource("0.73.1", message({ api: "anthropic-messages", usage: USED }))).toBe("request");
  });

  it("the request only, where the host passes none (Responses, Google)", () => {
    for (const version of ["0.73.1", "1.6.0"]) {
      expect(modelSource(version, message({ usage: USED }))).toBe("request");
      expect(modelSource(version, message({ api: "google-generative-ai", usage: USED }))).toBe("request");
    }
  });
});

describe("bg_result's words for the attested model", () => {
  const attestation = { provider: "p", model: "m", stop_reason: "stop" };

  it("any attestation restating only the request makes the whole route 'not reported'", () => {
    expect(
      routeModel([
        { ...attestation, model_source: "provider", response_model: "m-2025" },
        { ...attestation, model_source: "request" },
      ]),
    ).toEqual({ source: "request", labels: ["m-2025"] });
  });

  it("reported: the labels are the provider's names other than the pinned id; an older result is unrecorded", () => {
    expect(
      routeModel([
        { ...attestation, model_source: "provider", response_model: "m" },
        { ...attestation, model_source: "provider", response_model: "m-2025" },
      ]),
    ).toEqual({ source: "provider", labels: ["m-2025"] });
    expect(routeModel([attestation])).toEqual({ source: "unrecorded", labels: [] });
  });

  it("result.json accepts model_source only as provider or request", () => {
    const good = makeResultFile({
      route_attestations: [{ ...attestation, provider: "scripted", model: "scripted-model", model_source: "request" }],
    });
    expect(verifyDelegateResult(good.bytes, good.expected).result.route_attestations[0]?.model_source).toBe("request");
    const bad = makeResultFile({
      route_attestations: [
        // @ts-expect-error: a value outside the closed list, as a stranger could write it
        { ...attestation, provider: "scripted", model: "scripted-model", model_source: "verified" },
      ],
    });
    expect(() => verifyDelegateResult(bad.bytes, bad.expected)).toThrow(/model_source/);
  });
});
