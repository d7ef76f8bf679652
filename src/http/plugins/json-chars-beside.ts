const BACKSLASH = 0x5c;
const COLON = 0x3a;

/**
 * How much of JSON text is not the string values of `key` (`"data": "…"`,
 * an attachment's base64), in UTF-16 units (never more than its bytes), read
 * before the text is parsed: a string at a time, found with `indexOf`, so
 * tens of megabytes take milliseconds. Text that is not JSON gets a number
 * too; the parser that follows reports it.
 */
export function jsonCharsBeside(text: string, key: string): number {
  const quotedKey = JSON.stringify(key);
  let beside = text.length;
  let keyEnd = -1;
  for (let i = text.indexOf('"'); i >= 0;) {
    const end = stringEnd(text, i);
    if (end < 0) break;
    // A value right after `"key":` is the key's value.
    if (keyEnd >= 0 && onlySpaceAndColon(text, keyEnd, i)) beside -= end + 1 - i;
    keyEnd = end - i + 1 === quotedKey.length && text.startsWith(quotedKey, i) ? end + 1 : -1;
    i = text.indexOf('"', end + 1);
  }
  return beside;
}

/** Where the string that opens at `start` closes: the next quote not escaped. */
function stringEnd(text: string, start: number): number {
  for (let i = text.indexOf('"', start + 1); i >= 0; i = text.indexOf('"', i + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(i - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return i;
  }
  return -1;
}

function onlySpaceAndColon(text: string, from: number, to: number): boolean {
  let colons = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === COLON) colons++;
    else if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return false;
  }
  return colons === 1;
}
