import { useEffect, useRef, useState } from "react";
import type { Api, Run } from "./api.ts";
import type { ChatMessage } from "./chat-types.ts";
import type { useQueue } from "./QueuedRuns.tsx";

interface FollowedChat {
  status: string;
  setMessages: (messages: ChatMessage[]) => void;
  resumeStream: () => Promise<void>;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const open = (runs: Run[]) => runs.some((r) => r.status === "running" || r.status === "queued");

/**
 * A chat done with messages queued behind its run: each next one runs on the
 * server in turn; its message is shown as it starts and its stream followed
 * to its end, then the history is read once more. A failed read (a network
 * blip, a busy server) is tried again rather than ending the follow, and a
 * follow that ends looks at the queue once more: a message queued meanwhile
 * is followed too.
 */
export function useFollowQueue({
  api,
  conversationId,
  chat,
  queue,
  onProblem,
}: {
  api: Api;
  conversationId: string;
  chat: FollowedChat;
  queue: ReturnType<typeof useQueue>;
  onProblem: (message: string) => void;
}) {
  const following = useRef(false);
  const mounted = useRef(true);
  const [rounds, setRounds] = useState(0);
  // Set on every mount: React's StrictMode mounts, unmounts and mounts again in development.
  useEffect(() => {
    mounted.current = true;
    return () => void (mounted.current = false);
  }, []);
  useEffect(() => {
    if (chat.status !== "ready" || queue.queued.length === 0 || following.current) return;
    following.current = true;
    const history = async () => chat.setMessages(await api.uiMessages<ChatMessage>(conversationId));
    void (async () => {
      for (let failures = 0; mounted.current;) {
        try {
          let runs = await queue.reload();
          if (!open(runs)) break;
          // The next run's message is saved as it starts: wait (briefly) for it to start before reading the history.
          for (let i = 0; i < 50 && !runs.some((r) => r.status === "running") && open(runs); i++) {
            await pause(100);
            runs = await queue.reload();
          }
          await history();
          // Until its end (at once, 204, when it ended before its stream was asked for).
          await chat.resumeStream();
          failures = 0;
        } catch (err) {
          if (++failures > 5) throw err;
          await pause(250 * failures);
        }
      }
      // Every answer as the history holds it (one that ended before its stream was asked for included).
      if (mounted.current) await history();
    })()
      .catch((err: Error) => onProblem(err.message))
      .finally(() => {
        following.current = false;
        if (mounted.current) setRounds((n) => n + 1);
      });
    // The queue's length too: a message queued just as the run ahead ended is listed only after the chat is ready.
  }, [chat.status, queue.queued.length, rounds]);
}
