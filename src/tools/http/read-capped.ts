/**
 * Reads a response's body as text, at most `maxChars` of it: past that the
 * rest is not read (the connection is let go), and `complete` is false.
 */
export async function readCapped(res: Response, maxChars: number): Promise<{ text: string; complete: boolean }> {
  if (!res.body) return { text: "", complete: true };
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text: text + decoder.decode(), complete: true };
      text += decoder.decode(value, { stream: true });
      if (text.length > maxChars) return { text: text.slice(0, maxChars), complete: false };
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
