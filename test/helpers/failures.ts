/**
 * The typed failure a call ends with, for tests that assert its code, message or facts: anything
 * other than a DelegateError is rethrown, and a call that does not fail fails the test.
 */
import { DelegateError, type FailureCode } from "../../src/core/errors.ts";

/** The DelegateError `fn` throws. */
export function thrownBy(fn: () => unknown): DelegateError {
  try {
    fn();
  } catch (error) {
    if (error instanceof DelegateError) return error;
    throw error;
  }
  throw new Error("expected a DelegateError, but the call returned");
}

/** The DelegateError `promise` rejects with. */
export async function rejectionOf(promise: Promise<unknown>): Promise<DelegateError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DelegateError) return error;
    throw error;
  }
  throw new Error("expected a DelegateError, but the call resolved");
}

/** The code of the DelegateError `fn` throws, or null when it returns (anything else is rethrown). */
export function codeOf(fn: () => unknown): FailureCode | null {
  try {
    fn();
    return null;
  } catch (error) {
    if (error instanceof DelegateError) return error.code;
    throw error;
  }
}
