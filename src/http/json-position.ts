/**
 * Where a JSON text stops being JSON (RFC 8259), for the 400 of a malformed
 * body: V8's own message gives a position for some errors and only a snippet
 * for others ("Unexpected token"). Run only after JSON.parse has failed, so
 * it costs nothing on the way in.
 */

/** The offset of the first character that cannot continue a JSON text, or -1 if `text` is JSON. */
export function jsonErrorOffset(text: string): number {
  let i = 0;
  const ws = () => {
    while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++;
  };
  const fail = (): never => {
    throw i;
  };
  const literal = (word: string) => {
    for (const ch of word) if (text[i++] !== ch) ((i -= 1), fail());
  };
  const digits = () => {
    const start = i;
    while (text[i]! >= "0" && text[i]! <= "9") i++;
    if (i === start) fail();
  };
  const string = () => {
    i++;
    for (;;) {
      const ch = text[i];
      if (ch === undefined || ch < " ") fail();
      if (ch === '"') return void i++;
      if (ch === "\\") {
        i++;
        if (text[i] === "u") {
          for (let k = 1; k <= 4; k++) if (!/[0-9a-fA-F]/.test(text[i + k] ?? "")) ((i += k), fail());
          i += 5;
        } else if ('"\\/bfnrt'.includes(text[i] ?? "x")) i++;
        else fail();
      } else i++;
    }
  };
  const value = (): void => {
    ws();
    const ch = text[i];
    if (ch === "{") {
      i++;
      ws();
      if (text[i] === "}") return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        string();
        ws();
        if (text[i] !== ":") fail();
        i++;
        value();
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "}") return void i++;
        else fail();
      }
    }
    if (ch === "[") {
      i++;
      ws();
      if (text[i] === "]") return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "]") return void i++;
        else fail();
      }
    }
    if (ch === '"') return string();
    if (ch === "t") return literal("true");
    if (ch === "f") return literal("false");
    if (ch === "n") return literal("null");
    if (ch === "-" || (ch !== undefined && ch >= "0" && ch <= "9")) {
      if (text[i] === "-") i++;
      if (text[i] === "0") i++;
      else digits();
      if (text[i] === ".") (i++, digits());
      if (text[i] === "e" || text[i] === "E") {
        i++;
        if (text[i] === "+" || text[i] === "-") i++;
        digits();
      }
      return;
    }
    fail();
  };
  try {
    if (text.charCodeAt(0) === 0xfeff) i++;
    value();
    ws();
    if (i < text.length) fail();
    return -1;
  } catch (offset) {
    if (typeof offset !== "number") throw offset;
    return offset;
  }
}

/** "line 2, column 7" (both from 1, columns in UTF-16 code units as JavaScript counts them) for an offset. */
export function lineAndColumn(text: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let k = 0; k < offset && k < text.length; k++) {
    if (text[k] === "\n") (line++, (lineStart = k + 1));
  }
  return `line ${line}, column ${offset - lineStart + 1}`;
}
