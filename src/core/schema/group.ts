/**
 * A member's group (docs/tools/bg_delegate.md, "Groups"), as a delegate's manifest.json and a Fusion
 * run record record it. The shape is declared here; that its id is the one its session and name give
 * is ../group.ts's (parseTaskGroup), since the session is the record's, not the group's.
 */
import { ARGUMENT_BOUNDS } from "../constants.ts";
import { violation } from "../validate.ts";
import { AnyString, Closed, Dollars, Refine, type Static, Text, Type } from "./kinds.ts";

/** A group name: printable, at most this many characters. */
export const GROUP_NAME_MAX_CHARS = 64;

const GROUP_ID = /^g[0-9a-f]{32}$/;

/** What a member's manifest (or run record) says of its group. */
export const TaskGroupSchema = Closed({
  /** "g" + 32 hex: groupIdOf (../group.ts) the session and the name. */
  id: Refine(
    AnyString(),
    (id, at) => {
      if (!GROUP_ID.test(id)) violation(at, "must be g followed by 32 lowercase hex digits");
    },
    "g followed by 32 lowercase hex digits: its session's and name's",
  ),
  name: Text({ maxChars: GROUP_NAME_MAX_CHARS }),
  /** The group's spend cap (groupMaxCostUsd), fixed by its first member; absent without one. */
  max_cost_usd: Type.Optional(Dollars(ARGUMENT_BOUNDS.maxCostUsd)),
});
export type TaskGroup = Static<typeof TaskGroupSchema>;
