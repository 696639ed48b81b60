/**
 * The length of a string's UTF-8 encoding, counted without encoding it.
 * Storage limits are in bytes (D1 refuses a string value over 2 MB), while
 * `string.length` counts UTF-16 code units: a CJK character is one unit and
 * three bytes, an emoji two units and four bytes. A lone surrogate counts as
 * the three bytes of the replacement character an encoder writes for it.
 */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}
