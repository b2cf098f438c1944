// In-memory user store: id -> { id, email, salt, passwordHash }.
const byId = new Map();

export const users = {
  add(user) {
    byId.set(user.id, user);
    return user;
  },
  byId(id) {
    return byId.get(id);
  },
  byEmail(email) {
    for (const user of byId.values()) if (user.email === email) return user;
    return undefined;
  },
  remove(id) {
    byId.delete(id);
  },
};
