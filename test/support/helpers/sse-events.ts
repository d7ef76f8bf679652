/** The events of a whole SSE body, parsed as a client reads them (`raw`: the data line as sent). */
export const sseEventsOf = (body: string) =>
  body
    .split("\n\n")
    .filter((block) => block.includes("event: "))
    .map((block) => {
      const field = (name: string) =>
        block
          .split("\n")
          .find((line) => line.startsWith(`${name}: `))
          ?.slice(name.length + 2);
      return {
        id: Number(field("id")),
        event: field("event"),
        raw: field("data"),
        data: JSON.parse(field("data") ?? "null") as unknown,
      };
    });
