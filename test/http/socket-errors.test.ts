import { connect } from "node:net";
import { expect, test } from "vitest";
import { captureLogs } from "../helpers/log-sink.js";
import { useLoopd } from "../helpers/use-loopd.js";

const logs = captureLogs();
const f = useLoopd({ listen: true, logger: logs.logger });

/** Opens a socket to loopd and writes `bytes`; resolves once connected. */
async function rawSocket() {
  const { port } = new URL(f.loopd.url);
  const socket = connect(Number(port), "127.0.0.1");
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  return socket;
}

const until = async (check: () => boolean, ms = 5_000) => {
  for (const end = Date.now() + ms; !check(); ) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
};

test("a client hanging up mid-upload is the client's doing: logged below warn, never as a database outage", async () => {
  logs.lines.length = 0;
  const socket = await rawSocket();
  socket.write("POST /conversations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"title\":\"");
  await new Promise((r) => setTimeout(r, 100));
  socket.destroy();
  await until(() => logs.lines.some((l) => /client closed the connection/.test(l.msg)));
  expect(logs.lines.filter((l) => l.level >= 40)).toEqual([]);
  expect(logs.lines.find((l) => /client closed the connection/.test(l.msg))).toMatchObject({ level: 30, err: { code: "ECONNRESET" } });
  expect(JSON.stringify(logs.lines)).not.toMatch(/unavailable|unreachable/);
});
