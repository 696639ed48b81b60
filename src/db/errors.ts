/** Recognising constraint failures that are the client's doing, not ours. */

function messages(error: unknown): string {
  let text = "";
  for (let e: unknown = error; e instanceof Error; e = e.cause) text += ` ${e.message}`;
  return text;
}

/** A row referenced an id that does not exist (SQLite FOREIGN KEY constraint). */
export function isForeignKeyViolation(error: unknown): boolean {
  return messages(error).includes("FOREIGN KEY constraint failed");
}

/** A row repeated a value a UNIQUE index allows once (SQLite UNIQUE constraint). */
export function isUniqueViolation(error: unknown): boolean {
  return messages(error).includes("UNIQUE constraint failed");
}
