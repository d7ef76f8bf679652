// A minimal AI SDK client of loopd, without a browser: the same transport
// `useChat` uses (DefaultChatTransport) sends a message to loopd's /ui/chat,
// and the AI SDK's own stream reader builds the answer as UI message parts.
// Run: LOOPD=http://127.0.0.1:3000 node examples/ai-sdk-chat.mjs "What is (3+4)^2?"
import console from "node:console";
import process from "node:process";
import { DefaultChatTransport, readUIMessageStream } from "ai";

const loopd = process.env.LOOPD ?? "http://127.0.0.1:3000";
const text = process.argv[2] ?? "Hello";
const transport = new DefaultChatTransport({
  api: `${loopd}/ui/chat`,
  headers: process.env.LOOPD_API_KEY ? { Authorization: `Bearer ${process.env.LOOPD_API_KEY}` } : {},
});
const stream = await transport.sendMessages({
  chatId: process.env.CHAT_ID ?? "my-first-chat",
  trigger: "submit-message",
  messageId: undefined,
  messages: [{ id: "m1", role: "user", parts: [{ type: "text", text }] }],
  abortSignal: undefined,
});
let answer;
for await (const message of readUIMessageStream({ stream })) answer = message;
for (const part of answer.parts) {
  if (part.type === "text") console.log(`text: ${part.text}`);
  else if (part.type.startsWith("tool-"))
    console.log(`${part.type}: ${JSON.stringify(part.input)} → ${part.output ?? part.errorText ?? part.state}`);
}
console.log(`run: ${answer.metadata.run_id} ${answer.metadata.status}`);
