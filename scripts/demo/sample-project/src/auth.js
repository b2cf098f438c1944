import { randomBytes, scryptSync, timingSafeEqual } from "node:crypto";
import { sessionCache } from "./session-cache.js";
import { users } from "./users.js";

const SESSION_TTL_MS = 8 * 60 * 60 * 1000;

export function hashPassword(password, salt) {
  return scryptSync(password, salt, 32).toString("hex");
}

function passwordMatches(user, password) {
  const given = Buffer.from(hashPassword(password, user.salt), "hex");
  return timingSafeEqual(given, Buffer.from(user.passwordHash, "hex"));
}

export function login(email, password) {
  const user = users.byEmail(email);
  if (!user || !passwordMatches(user, password)) throw new Error("invalid credentials");
  const token = randomBytes(24).toString("base64url");
  sessionCache.put(token, user.id, SESSION_TTL_MS);
  return token;
}

export function logout(userId) {
  sessionCache.invalidate(userId);
}

export function changePassword(userId, oldPassword, newPassword) {
  const user = users.byId(userId);
  if (!user || !passwordMatches(user, oldPassword)) throw new Error("invalid credentials");
  user.salt = randomBytes(16).toString("hex");
  user.passwordHash = hashPassword(newPassword, user.salt);
}
