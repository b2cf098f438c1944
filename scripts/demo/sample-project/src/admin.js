import { randomBytes } from "node:crypto";
import { hashPassword } from "./auth.js";
import { sessionCache } from "./session-cache.js";
import { users } from "./users.js";

export function deleteUser(userId) {
  users.remove(userId);
  sessionCache.invalidate(userId);
}

/** Admin reset: a one-time password the user must change at next login. */
export function resetPassword(userId) {
  const user = users.byId(userId);
  if (!user) throw new Error(`no user ${userId}`);
  const temporary = randomBytes(9).toString("base64url");
  user.salt = randomBytes(16).toString("hex");
  user.passwordHash = hashPassword(temporary, user.salt);
  sessionCache.invalidate(userId);
  return temporary;
}
