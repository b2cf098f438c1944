/**
 * A launch key's record (docs/tools/bg_delegate.md, "Never launched twice"):
 * `<project>/.pi/delegate/key-<sha256 of the key>.json`, naming the task or run a key started. Open:
 * it is trusted only once its MAC and the tree it names verify as yours (src/launch/key-trust.ts).
 */
import { SCHEMA } from "../constants.ts";
import { AnyString, OneOf, type Static, Type } from "./kinds.ts";

export const KEYED_KINDS = ["delegate", "fusion"] as const;

/** The fields of a key record its signature covers (with the project's path). */
export const SignedKeyFieldsSchema = Type.Object({
  key_sha256: AnyString(),
  kind: OneOf(KEYED_KINDS),
  id: AnyString(),
  /** The task's or run's directory, relative to the project. */
  dir: AnyString(),
  created_at: AnyString(),
});
export type SignedKeyFields = Static<typeof SignedKeyFieldsSchema>;

/**
 * What a key file holds. `mac` signs the other fields but `receipt`; `receipt` is the first launch's
 * receipt details once it returned (null before).
 */
export const LaunchKeyRecordSchema = Type.Object({
  schema_version: Type.Literal(SCHEMA.launchKey),
  ...SignedKeyFieldsSchema.properties,
  mac: Type.Unknown(),
  receipt: Type.Unknown(),
});
export type LaunchKeyRecord = Static<typeof LaunchKeyRecordSchema>;
