import type { UIMessage } from "ai";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { createBuiltinTools } from "../../../src/tools/builtin/index.js";
import { defineTool } from "../../../src/tools/define-tool.js";
import { chatWith } from "../../support/helpers/headless-chat.js";
import { useLoopd } from "../../support/helpers/use-loopd.js";
import { toolResultsIn } from "../../support/helpers/wire.js";
import { INVOICE_TOOL } from "../../support/helpers/action-tools.js";

/** A tool that returns only when the test opens its gate: a run is still going for as long as the test wants. */
let openGate: () => void = () => {};
const gateTool = defineTool({
  name: "wait_for_gate",
  description: "Waits until the test lets it go.",
  input: z.object({}),
  execute: () => new Promise<string>((resolve) => (openGate = () => resolve("gate opened"))),
});

const f = useLoopd({ listen: true, tools: [...createBuiltinTools(), gateTool] });

type Message = UIMessage<{ run_id: string; status?: string }>;
type ToolPart = {
  type: string;
  toolCallId: string;
  state: string;
  output?: unknown;
  errorText?: string;
  approval?: { id: string; approved?: boolean; reason?: string };
};
const toolPart = (m: Message | undefined, type: string) =>
  m?.parts.find((p) => p.type === type) as ToolPart | undefined;

describe.each(["anthropic", "openai"] as const)(
  "approvals, client tools and resumes over the chat protocol through %s",
  (provider) => {
    const newChat = (conversation: Record<string, unknown> = {}) =>
      chatWith<Message>({ url: f.loopd.url, body: { conversation: { provider, ...conversation } } });

    test("a call that needs approval pauses as an approval request; approved, it runs and the answer goes on in the same message", async () => {
      f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "3*3" } }] });
      const chat = newChat({ approval_required: ["calculate"] });
      await chat.sendMessage({ text: "3*3, carefully" });
      const paused = chat.messages.at(-1)!;
      const call = toolPart(paused, "tool-calculate")!;
      expect(call).toMatchObject({ state: "approval-requested", approval: { id: call.toolCallId } });
      expect(paused.metadata).toMatchObject({ status: "requires_action" });

      f.llm.script({ text: "Nine." });
      await chat.addToolApprovalResponse({ id: call.approval!.id, approved: true });
      await chat.sendMessage();
      expect(chat.error).toBeUndefined();
      expect(chat.messages).toHaveLength(2);
      const answer = chat.messages.at(-1)!;
      expect(answer.id).toBe(paused.id);
      expect(toolPart(answer, "tool-calculate")).toMatchObject({ state: "output-available" });
      expect(answer.parts.at(-1)).toMatchObject({ type: "text", text: "Nine." });
      expect(answer.metadata).toMatchObject({ run_id: paused.id, status: "completed" });
      expect(toolResultsIn(f.llm.requests.at(-1)!)).toEqual([
        expect.objectContaining({ id: call.toolCallId, isError: false }),
      ]);
    });

    test("a denial with a reason: the call is denied in the UI, never runs, and the model reads why", async () => {
      f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "1/0" } }] });
      const chat = newChat({ approval_required: ["calculate"] });
      await chat.sendMessage({ text: "Divide by zero" });
      const call = toolPart(chat.messages.at(-1), "tool-calculate")!;
      f.llm.script({ text: "Understood, I will not." });
      await chat.addToolApprovalResponse({ id: call.approval!.id, approved: false, reason: "not today" });
      await chat.sendMessage();
      const answer = chat.messages.at(-1)!;
      expect(toolPart(answer, "tool-calculate")).toMatchObject({
        state: "output-denied",
        approval: { approved: false, reason: "not today" },
      });
      expect(answer.parts.at(-1)).toMatchObject({ type: "text", text: "Understood, I will not." });
      const [result] = toolResultsIn(f.llm.requests.at(-1)!);
      expect(result).toMatchObject({ id: call.toolCallId });
      expect(result!.content).toContain("not today");
      // A client seeded from the history sees the same denial.
      const seeded = (await (await fetch(`${f.loopd.url}/ui/chat/${chat.id}/messages`)).json()) as Message[];
      expect(toolPart(seeded.at(-1), "tool-calculate")).toMatchObject({
        state: "output-denied",
        approval: { id: call.toolCallId, approved: false, reason: "not today" },
      });
    });

    test("a client tool's call is answered with addToolOutput: the output becomes the call's result", async () => {
      f.llm.script({ toolCalls: [{ name: "create_invoice", input: { customer: "ACME" } }] });
      const chat = newChat({ client_tools: [INVOICE_TOOL] });
      await chat.sendMessage({ text: "Bill ACME" });
      const call = toolPart(chat.messages.at(-1), "tool-create_invoice")!;
      expect(call).toMatchObject({ state: "input-available" });
      f.llm.script({ text: "Invoice INV-42 is out." });
      await chat.addToolOutput({
        tool: "create_invoice",
        toolCallId: call.toolCallId,
        output: "INV-42 created",
      } as never);
      await chat.sendMessage();
      expect(chat.error).toBeUndefined();
      expect(toolResultsIn(f.llm.requests.at(-1)!)).toEqual([
        { id: call.toolCallId, content: "INV-42 created", isError: false },
      ]);
      expect(chat.messages.at(-1)!.parts.at(-1)).toMatchObject({ type: "text", text: "Invoice INV-42 is out." });
    });

    test("the client drops mid-stream; a new client seeded from …/messages resumes the run from its start and sees it finish", async () => {
      f.llm.script(
        { text: "Let me wait.", toolCalls: [{ name: "wait_for_gate", input: {} }] },
        { text: "Done waiting." },
      );
      const first = newChat();
      const dropped = new AbortController();
      const body = {
        id: first.id,
        trigger: "submit-message",
        conversation: { provider },
        messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "Wait for it" }] }],
      };
      const res = await fetch(`${f.loopd.url}/ui/chat`, {
        method: "POST",
        body: JSON.stringify(body),
        headers: { "content-type": "application/json" },
        signal: dropped.signal,
      });
      expect(res.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1");
      const reader = res.body!.getReader();
      let seen = "";
      while (!seen.includes('"tool-input-available"')) seen += new TextDecoder().decode((await reader.read()).value);
      dropped.abort();

      const seeded = (await (await fetch(`${f.loopd.url}/ui/chat/${first.id}/messages`)).json()) as Message[];
      // The open run's answer is left to the stream.
      expect(seeded.map((m) => m.role)).toEqual(["user"]);
      let sawCall: () => void = () => {};
      const callSeen = new Promise<void>((resolve) => (sawCall = resolve));
      const second = chatWith<Message>({
        url: f.loopd.url,
        id: first.id,
        messages: seeded,
        onToolCall: () => sawCall(),
      });
      const resumed = second.resumeStream();
      await callSeen;
      openGate();
      await resumed;
      expect(second.error).toBeUndefined();
      const answer = second.messages.at(-1)!;
      expect(second.messages).toHaveLength(2);
      expect(answer.parts.filter((p) => p.type === "text").map((p) => (p as { text: string }).text)).toEqual([
        "Let me wait.",
        "Done waiting.",
      ]);
      expect(toolPart(answer, "tool-wait_for_gate")).toMatchObject({
        state: "output-available",
        output: "gate opened",
      });
      // Nothing open now: a resume finds nothing to follow.
      expect((await fetch(`${f.loopd.url}/ui/chat/${first.id}/stream`)).status).toBe(204);
    });

    test("regenerate is refused with an error chunk that says why; the history is as it was", async () => {
      f.llm.script({ text: "First answer." });
      const chat = newChat();
      await chat.sendMessage({ text: "Hello" });
      const before = (await (await fetch(`${f.loopd.url}/ui/chat/${chat.id}/messages`)).json()) as Message[];
      await chat.regenerate();
      expect(chat.status).toBe("error");
      expect(chat.error?.message).toMatch(/append-only.*fork/);
      expect(await (await fetch(`${f.loopd.url}/ui/chat/${chat.id}/messages`)).json()).toEqual(before);
      expect(f.llm.requests).toHaveLength(1);
    });
  },
);
