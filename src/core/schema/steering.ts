/**
 * The steering documents (docs/tools/bg_steer.md): the parent's hash-chained steering.json, the head
 * the signed manifest vouches for, and what the guard delivered (result.json's `steering`, and
 * steering-seen.json's body). Their chain and their agreement are ../steering.ts's.
 */
import { SCHEMA, STEER_MAX_PER_TASK, STEER_MESSAGE_MAX_BYTES } from "../constants.ts";
import { Closed, Count, List, Sha256, type Static, Text, Timestamp, Type } from "./kinds.ts";
import { TASK_LAUNCH } from "./shared.ts";

/** A steering message, as an argument or a recorded entry: non-blank text within its byte bound. */
export const SteeringMessageSchema = Text({ maxBytes: STEER_MESSAGE_MAX_BYTES, control: true });

/** One steering message as the parent recorded it; `sha256` chains it to the one before. */
export const SteeringEntrySchema = Closed({
  /** 1, 2, … in the order written. */
  n: Count(1, STEER_MAX_PER_TASK),
  at: Timestamp(),
  message: SteeringMessageSchema,
  prev_sha256: Sha256(),
  sha256: Sha256(),
});
export type SteeringEntry = Static<typeof SteeringEntrySchema>;

/** steering.json: written by the parent, whole, on every bg_steer. */
export const SteeringRecordSchema = Closed({
  schema_version: Type.Literal(SCHEMA.steering),
  ...TASK_LAUNCH,
  entries: List(SteeringEntrySchema, STEER_MAX_PER_TASK),
});
export type SteeringRecord = Static<typeof SteeringRecordSchema>;

/** What the signed manifest vouches for: how many entries the parent wrote and the last one's hash. */
export const ManifestSteeringSchema = Closed({ count: Count(1, STEER_MAX_PER_TASK), head_sha256: Sha256() });
export type ManifestSteering = Static<typeof ManifestSteeringSchema>;

/** One delivered entry: before which model request of the child, and when. */
export const SteeringDeliverySchema = Closed({
  n: Count(1, STEER_MAX_PER_TASK),
  sha256: Sha256(),
  request: Count(1),
  at: Timestamp(),
});
export type SteeringDelivery = Static<typeof SteeringDeliverySchema>;

/**
 * result.json's `steering` (and steering-seen.json's body): the entries the guard last saw vouched
 * for (`entries`, the last one's hash `head_sha256`) and those it delivered, in order.
 */
export const ResultSteeringSchema = Closed({
  entries: Count(1, STEER_MAX_PER_TASK),
  head_sha256: Sha256(),
  delivered: List(SteeringDeliverySchema, STEER_MAX_PER_TASK),
});
export type ResultSteering = Static<typeof ResultSteeringSchema>;
