import { describe, expect, it } from "vitest";
import { byteClasses, checkRouteCapacity, planBudget, toSeedBudget } from "../../src/launch/budget.ts";
import { CALIBRATION_TABLE, calibrationFor } from "../../src/launch/calibration.ts";
import { thrownBy } from "../helpers/failures.ts";

const fake = { provider: "fake", model: "fake-model" };
const anthropic = { provider: "anthropic", model: "claude-x" };
const codex = { provider: "openai-codex", model: "gpt-x" };
const ascii = (n: number) => "a".repeat(n);
/** planBudget on the anthropic route with a one-byte system prompt and an ASCII child prompt of `promptBytes`. */
const anthropicPlan = (contextWindow: number, promptBytes: number) =>
  planBudget({ route: anthropic, contextWindow, systemPrompt: "S", childPrompt: ascii(promptBytes) });

describe("checkRouteCapacity", () => {
  it("admits the minimal window 69,632: capacity 40,960, usable exactly 8,192", () => {
    const capacity = checkRouteCapacity(69_632);
    expect(capacity).toEqual({
      context_window_tokens: 69_632,
      reserves: { output_tokens: 16_384, framing_tokens: 8_192, safety_tokens: 4_096 },
      capacity_tokens: 40_960,
      finalization_runway_tokens: 32_768,
      usable_input_tokens: 8_192,
      min_usable_input_tokens: 8_192,
    });
  });

  it("refuses 69,631 with route_capacity_insufficient", () => {
    const error = thrownBy(() => checkRouteCapacity(69_631));
    expect(error.code).toBe("route_capacity_insufficient");
    expect(error.message).toContain("8191");
    expect(error.facts.childProcessCreated).toBe(false);
  });

  for (const window of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, undefined, null, "200000"]) {
    it(`refuses an unusable declaration ${String(window)} with route_capacity_unknown`, () => {
      expect(thrownBy(() => checkRouteCapacity(window)).code).toBe("route_capacity_unknown");
    });
  }
});

describe("planBudget admission (provable 1.00 B/token)", () => {
  // window 100,000 → C = 71,328; L = 1 (system) + 512 + n; admit iff L + 32,768 ≤ C, i.e. n ≤ 38,047.
  it("admits L + 32,768 = C with growth budget 0", () => {
    const plan = planBudget({ route: fake, contextWindow: 100_000, systemPrompt: "S", childPrompt: ascii(38_047) });
    expect(plan.admission).toEqual({
      rule: "estimate_tokens + finalization_runway_tokens <= capacity_tokens",
      estimate_source: "provable",
      bytes_per_token: 1,
      estimate_tokens: 38_560,
      finalization_runway_tokens: 32_768,
      required_tokens: 71_328,
      capacity_tokens: 71_328,
    });
    expect(plan.growth_budget_tokens).toBe(0);
  });

  it("refuses one byte more with seed_budget_exceeded, naming the numbers", () => {
    const error = thrownBy(() =>
      planBudget({ route: fake, contextWindow: 100_000, systemPrompt: "S", childPrompt: ascii(38_048) }),
    );
    expect(error.code).toBe("seed_budget_exceeded");
    expect(error.message).toContain("38561");
    expect(error.message).toContain("71328");
    expect(error.message).toContain("at least 1 bytes");
    expect(error.facts.childProcessCreated).toBe(false);
  });

  it("admits a small prompt on the minimal window and leaves G = C − L − 32,768", () => {
    const plan = planBudget({ route: fake, contextWindow: 69_632, systemPrompt: "S", childPrompt: ascii(1000) });
    expect(plan.admission.estimate_tokens).toBe(1513);
    expect(plan.growth_budget_tokens).toBe(40_960 - 1513 - 32_768);
    expect(plan.finalization_runway_tokens).toBe(32_768);
    expect(plan.low_runway_trigger_tokens).toBe(8_192);
  });

  it("checks capacity itself too (route errors come before budget errors)", () => {
    expect(thrownBy(() => planBudget({ route: fake, contextWindow: 0, systemPrompt: "", childPrompt: "x" })).code).toBe(
      "route_capacity_unknown",
    );
    expect(
      thrownBy(() => planBudget({ route: fake, contextWindow: 50_000, systemPrompt: "", childPrompt: ascii(10) })).code,
    ).toBe("route_capacity_insufficient");
  });

  it("records the provable counter-forecast for every byte class, multibyte included", () => {
    const system = "sys ü"; // 4 ASCII + 2 bytes
    const child = "prompt 😀 ß"; // 8 ASCII + 4 + 2 bytes
    const plan = planBudget({ route: fake, contextWindow: 200_000, systemPrompt: system, childPrompt: child });
    expect(plan.input).toEqual({
      system_prompt: { ascii_bytes: 4, multibyte_bytes: 2, total_bytes: 6 },
      system_prompt_appendix_bytes: 512,
      child_prompt: { ascii_bytes: 8, multibyte_bytes: 6, total_bytes: 14 },
      total_bytes: 532,
    });
    expect(plan.provable_forecast).toEqual({
      bytes_per_token: 1,
      tokens_by_class: {
        system_prompt_ascii: 4,
        system_prompt_multibyte: 2,
        system_prompt_appendix: 512,
        child_prompt_ascii: 8,
        child_prompt_multibyte: 6,
      },
      total_tokens: 532,
      fits_admission_rule: true,
    });
    expect(plan.admission.estimate_tokens).toBe(532);
  });

  it("byteClasses counts UTF-8 bytes, not UTF-16 units", () => {
    expect(byteClasses("😀")).toEqual({ ascii_bytes: 0, multibyte_bytes: 4, total_bytes: 4 });
    expect(byteClasses("")).toEqual({ ascii_bytes: 0, multibyte_bytes: 0, total_bytes: 0 });
    expect(byteClasses("plain ascii")).toEqual({ ascii_bytes: 11, multibyte_bytes: 0, total_bytes: 11 });
    expect(byteClasses("aé😀\ud800")).toEqual({ ascii_bytes: 1, multibyte_bytes: 9, total_bytes: 10 });
  });

  it("byteClasses agrees with a count over the UTF-8 bytes on random text", () => {
    const pool = ["a", "Z", " ", "\n", "é", "ß", "€", "中", "😀", "\u007f", "\u0080"];
    for (let round = 0; round < 500; round++) {
      let text = "";
      const length = round % 40;
      for (let i = 0; i < length; i++) text += pool[(round * 31 + i * 17) % (round % 3 === 0 ? 4 : pool.length)];
      const bytes = Buffer.from(text, "utf8");
      const ascii = bytes.filter((b) => b < 0x80).length;
      expect(byteClasses(text)).toEqual({
        ascii_bytes: ascii,
        multibyte_bytes: bytes.length - ascii,
        total_bytes: bytes.length,
      });
    }
  });
});

describe("calibration", () => {
  const KIB50 = 50 * 1024;

  it("has only sourced entries, honest that they were not re-measured", () => {
    expect(CALIBRATION_TABLE.map((e) => [e.family, e.bytes_per_token_x100])).toEqual([
      ["anthropic", 173],
      ["openai-codex", 289],
    ]);
    for (const entry of CALIBRATION_TABLE) expect(entry.source).toMatch(/not re-measured here/);
    expect(calibrationFor("fake")).toBeUndefined();
  });

  it("applies only when the child prompt is at least 50 KiB", () => {
    const at = planBudget({ route: anthropic, contextWindow: 200_000, systemPrompt: "S", childPrompt: ascii(KIB50) });
    expect(at.calibration.status).toBe("applied");
    expect(at.admission.estimate_source).toBe("calibrated");
    expect(at.admission.bytes_per_token).toBe(1.73);
    expect(at.admission.estimate_tokens).toBe(Math.ceil(((1 + 512 + KIB50) * 100) / 173));
    expect(at.provable_forecast.total_tokens).toBe(1 + 512 + KIB50);

    const below = anthropicPlan(200_000, KIB50 - 1);
    expect(below.calibration.status).toBe("prompt_below_threshold");
    expect(below.admission.estimate_source).toBe("provable");
    expect(below.admission.estimate_tokens).toBe(1 + 512 + KIB50 - 1);
    // The entry and what it would have estimated are still recorded, with their source.
    expect(below.calibration.entry?.source).toMatch(/earlier implementation/);
  });

  it("uses 1.00 for a family without an entry, however large the prompt", () => {
    const plan = planBudget({ route: fake, contextWindow: 200_000, systemPrompt: "S", childPrompt: ascii(60_000) });
    expect(plan.calibration).toEqual({
      status: "no_entry_for_family",
      family: "fake",
      threshold_child_prompt_bytes: KIB50,
    });
    expect(plan.admission.estimate_tokens).toBe(60_513);
  });

  it("uses the openai-codex rate for that family", () => {
    const plan = planBudget({ route: codex, contextWindow: 200_000, systemPrompt: "S", childPrompt: ascii(100_000) });
    expect(plan.admission.bytes_per_token).toBe(2.89);
    expect(plan.admission.estimate_tokens).toBe(Math.ceil((100_513 * 100) / 289));
  });

  it("records when the provable forecast would not fit although the calibrated estimate admits", () => {
    // C = 99,328; calibrated ≈ 59,488 + 32,768 fits; provable 102,913 + 32,768 does not.
    const plan = anthropicPlan(128_000, 102_400);
    expect(plan.admission.estimate_source).toBe("calibrated");
    expect(plan.provable_forecast.fits_admission_rule).toBe(false);
    expect(plan.growth_budget_tokens).toBe(99_328 - plan.admission.estimate_tokens - 32_768);
  });

  it("holds the admission boundary exactly under a calibrated rate too", () => {
    const input = { route: anthropic, systemPrompt: "S", childPrompt: ascii(70_000) };
    const L = planBudget({ ...input, contextWindow: 500_000 }).admission.estimate_tokens;
    const exact = L + 32_768 + 28_672;
    expect(planBudget({ ...input, contextWindow: exact }).growth_budget_tokens).toBe(0);
    expect(thrownBy(() => planBudget({ ...input, contextWindow: exact - 1 })).code).toBe("seed_budget_exceeded");
  });
});

describe("toSeedBudget", () => {
  it("carries the numbers the guard enforces, counting growth at 1.00 B/token", () => {
    const plan = anthropicPlan(200_000, 60_000);
    expect(toSeedBudget(plan)).toEqual({
      capacity_tokens: 171_328,
      admission_estimate_tokens: plan.admission.estimate_tokens,
      growth_budget_tokens: 171_328 - plan.admission.estimate_tokens - 32_768,
      finalization_runway_tokens: 32_768,
      low_runway_trigger_tokens: 8_192,
      bytes_per_token: 1,
    });
  });
});
