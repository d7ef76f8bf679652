import { AbstractChat, DefaultChatTransport, type ChatInit, type ChatState, type ChatStatus, type UIMessage } from "ai";

/** The AI SDK's chat state without a UI framework: what `useChat` keeps in React state, kept in fields. */
class FieldChatState<M extends UIMessage> implements ChatState<M> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  constructor(public messages: M[]) {}
  pushMessage = (message: M) => void this.messages.push(message);
  popMessage = () => void this.messages.pop();
  replaceMessage = (index: number, message: M) => void (this.messages[index] = message);
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** The real AI SDK chat (its `AbstractChat` and `DefaultChatTransport`), headless, pointed at a loopd. */
export class HeadlessChat<M extends UIMessage = UIMessage> extends AbstractChat<M> {
  constructor({ messages = [], ...init }: ChatInit<M>) {
    super({ ...init, state: new FieldChatState<M>(messages) });
  }
}

export interface ChatOptions<M extends UIMessage> extends Omit<ChatInit<M>, "transport"> {
  /** The loopd's base URL. */
  url: string;
  /** The transport's extra body fields (a new chat's `conversation`). */
  body?: Record<string, unknown>;
  headers?: Record<string, string>;
}

export const chatWith = <M extends UIMessage = UIMessage>({ url, body, headers, ...init }: ChatOptions<M>) =>
  new HeadlessChat<M>({
    ...init,
    transport: new DefaultChatTransport<M>({
      api: `${url}/ui/chat`,
      ...(body && { body }),
      ...(headers && { headers }),
    }),
  });
